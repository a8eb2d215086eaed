"""Guards around `torch-bench run`: numeric flags checked before anything starts, and
termination signals turned into an exception so that cleanup runs on the way out."""

from __future__ import annotations

import argparse
import math
import signal
from collections.abc import Iterator
from contextlib import contextmanager

from torch_bench.errors import UserError

# dest: (flag, smallest allowed value, whether that value itself is allowed)
NUMERIC_FLAG_BOUNDS = {
    "timeout": ("--timeout", 0, False),
    "memory_limit_mb": ("--memory-limit-mb", 0, False),
    "max_time_s": ("--max-time", 0, False),
    "target_rel_iqr": ("--target-spread", 0, True),
    "warmup": ("--warmup", 0, True),
    "min_repeats": ("--min-repeats", 1, True),
    "max_repeats": ("--max-repeats", 1, True),
    "nloops": ("--nloops", 1, True),
    "processes": ("--processes", 1, True),
}
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def number_problem(value: float, lowest: float, inclusive: bool) -> str | None:
    """Why `value` is not an acceptable flag value, or None."""
    if not math.isfinite(value):
        return "expected a finite number"
    if value < lowest or (value == lowest and not inclusive):
        return f"expected a number {'>=' if inclusive else '>'} {lowest:g}"
    return None


def check_numeric_flags(args: argparse.Namespace, float_flags: dict[str, str]) -> None:
    """Reject nonsense values (negative, zero where it means nothing, NaN, infinity) with a
    one-line error naming the flag. `float_flags` maps other dests to their flag: any
    float given there must at least be finite."""
    checks = dict(NUMERIC_FLAG_BOUNDS)
    for dest, flag in float_flags.items():
        checks.setdefault(dest, (flag, -math.inf, True))
    for dest, (flag, lowest, inclusive) in checks.items():
        value = getattr(args, dest, None)
        if value is None or isinstance(value, bool):
            continue
        problem = number_problem(value, lowest, inclusive)
        if problem:
            raise UserError(f"{flag}: {problem}, got {value!r}")


class Stopped(Exception):
    """The run received a termination signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def exit_status(self) -> int:
        return 128 + self.signum  # what a shell reports for a process ended by the signal


def _raise_stopped(signum, frame) -> None:
    raise Stopped(signum)


@contextmanager
def stop_on_signals() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP raise `Stopped` (SIGINT already raises
    KeyboardInterrupt), so `finally` blocks stop case processes and remove their folders."""
    previous = {signum: signal.signal(signum, _raise_stopped) for signum in STOP_SIGNALS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
