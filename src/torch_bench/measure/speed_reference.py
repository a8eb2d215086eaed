"""The machine's speed beside every sample: a fixed block of work timed after each one.

On a shared or virtual machine the CPU itself runs faster or slower for seconds at a time
(a neighbour on the host's core, cache or memory bus), and CPU time grows with it; only
instruction counters would not, and shared runners seldom expose them. A block of work that
never changes, timed on the same clock right after each sample block, slows down with the
machine, so sample / reference keeps the code's cost and loses most of the machine's state
(`benchmarks/speed_reference.py` measures how much; docs/measurement-clock.md).

The reference does not use torch, so a change to torch cannot hide in it: 40 numpy float32
products of 60x60 matrices, under OpenBLAS's threading threshold (above it OpenBLAS runs its
own thread pool, and CPU time would count its spinning). `REFERENCE` names it in every
result, so references that differ are never divided into one another.
"""

from __future__ import annotations

import time

REFERENCE = "numpy-sgemm-60x60x40"
_SIZE, _CALLS = 60, 40


class SpeedReference:
    """Times the reference block on the CPU clock (the only clock it is used with)."""

    name = REFERENCE

    def __init__(self) -> None:
        import numpy as np

        self._matrix = np.random.default_rng(0).standard_normal((_SIZE, _SIZE)).astype(
            np.float32)
        for _ in range(3):
            self._block()

    def _block(self) -> None:
        matrix = self._matrix
        for _ in range(_CALLS):
            matrix @ matrix

    def time_ms(self) -> float:
        """Process CPU time of one reference block, milliseconds."""
        start = time.process_time_ns()
        self._block()
        return (time.process_time_ns() - start) / 1e6
