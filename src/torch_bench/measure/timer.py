"""Timing a callable: warmup, block sizing, adaptive repeats, raw samples.

A sample is the time of one block of `number` calls divided by `number`, in milliseconds.
Blocks are sized so that a block lasts at least `min_block_ms`, which keeps the timer's own
overhead negligible for operations of a few microseconds. Repeats stop at the first of:
the samples' relative IQR under `target_rel_iqr` (after `min_repeats`), `max_repeats`
samples, or `max_time_s` spent (a hard budget once MIN_SAMPLES samples are in).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

from torch_bench.results.stats import relative_iqr

MIN_SAMPLES = 3


class Clock(Protocol):
    """Times a block of work. `stop` returns the elapsed milliseconds since `start`."""

    def start(self) -> None: ...

    def stop(self) -> float: ...


class CpuClock:
    def __init__(self) -> None:
        self._t0 = 0

    def start(self) -> None:
        self._t0 = time.perf_counter_ns()

    def stop(self) -> float:
        return (time.perf_counter_ns() - self._t0) / 1e6


class CudaClock:
    """CUDA events around the block; synchronises before starting and after stopping so the
    time covers the kernels queued by the block and nothing before it."""

    def __init__(self, device=None) -> None:
        import torch

        self._torch = torch
        self._device = device
        self._begin = torch.cuda.Event(enable_timing=True)
        self._end = torch.cuda.Event(enable_timing=True)

    def start(self) -> None:
        self._torch.cuda.synchronize(self._device)
        self._begin.record()

    def stop(self) -> float:
        self._end.record()
        self._end.synchronize()
        return float(self._begin.elapsed_time(self._end))


def clock_for(device: str) -> Clock:
    return CudaClock(device) if device.startswith("cuda") else CpuClock()


@dataclass(frozen=True)
class TimingPolicy:
    warmup: int = 3  # untimed calls before anything is measured
    min_repeats: int = 10
    max_repeats: int = 200
    max_time_s: float = 3.0
    target_rel_iqr: float = 0.02
    min_block_ms: float = 0.2
    max_number: int = 100_000

    def __post_init__(self) -> None:
        if self.min_repeats < 1 or self.max_repeats < self.min_repeats:
            raise ValueError("need 1 <= min_repeats <= max_repeats")
        if self.warmup < 0 or self.max_time_s <= 0:
            raise ValueError("warmup must be >= 0 and max_time_s > 0")


@dataclass(frozen=True)
class Timing:
    samples_ms: tuple[float, ...]
    number: int  # calls per sample
    warmup: int
    stop_reason: str  # "spread", "repeats" or "time"
    threads: int

    def extra(self) -> dict:
        return {
            "calls_per_sample": self.number,
            "warmup": self.warmup,
            "stop_reason": self.stop_reason,
            "threads": self.threads,
        }


@contextmanager
def gc_paused():
    """Collect garbage, then keep the collector off for the timed block."""
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _time_block(fn: Callable[[], object], number: int, clock: Clock) -> float:
    clock.start()
    for _ in range(number):
        fn()
    return clock.stop()


def _block_size(fn: Callable[[], object], policy: TimingPolicy, clock: Clock) -> int:
    number = 1
    while number < policy.max_number:
        # The fastest of three, so one preempted block cannot end the calibration early.
        elapsed = min(_time_block(fn, number, clock) for _ in range(3))
        if elapsed >= policy.min_block_ms:
            break
        # Grow towards the target in one or two steps rather than by doubling many times.
        grow = policy.min_block_ms / max(elapsed, 1e-6)
        number = min(policy.max_number, max(number * 2, int(number * grow * 1.2)))
    return number


def measure(
    fn: Callable[[], object],
    policy: TimingPolicy = TimingPolicy(),
    clock: Clock | None = None,
    setup: Callable[[], object] | None = None,
) -> Timing:
    """Time `fn`. With `setup`, it runs untimed before each call and every block is one call
    (for example, a forward pass before the timed backward)."""
    import torch

    clock = clock or CpuClock()
    for _ in range(policy.warmup):
        if setup is not None:
            setup()
        fn()
    if setup is None:
        number = _block_size(fn, policy, clock)
    else:
        number = 1
    samples: list[float] = []
    stop_reason = "repeats"
    deadline = time.perf_counter() + policy.max_time_s
    with gc_paused():
        while len(samples) < policy.max_repeats:
            if setup is not None:
                setup()
            samples.append(_time_block(fn, number, clock) / number)
            count = len(samples)
            if count >= policy.min_repeats and relative_iqr(samples) <= policy.target_rel_iqr:
                stop_reason = "spread"
                break
            if count >= min(policy.min_repeats, MIN_SAMPLES) and time.perf_counter() >= deadline:
                stop_reason = "time"
                break
    return Timing(
        samples_ms=tuple(samples),
        number=number,
        warmup=policy.warmup,
        stop_reason=stop_reason,
        threads=torch.get_num_threads(),
    )
