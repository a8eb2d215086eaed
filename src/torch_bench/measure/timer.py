"""Timing a callable: warmup, block sizing, adaptive repeats, raw samples.

A sample is the time of one block of `loops` calls divided by `loops`, in milliseconds.
Blocks are sized so that a block lasts at least `min_block_ms`, which keeps the timer's own
overhead negligible for operations of a few microseconds; a count given by the caller (the
one an earlier run calibrated) is used as it is, so every run times the same loop. Repeats
stop at the first of: the samples' relative IQR under `target_rel_iqr`, `max_repeats`
samples, or `max_time_s` spent; never before `min_repeats` samples (the repeat bounds win
over the budget). With `nloops`, exactly that many samples of one call each are taken.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Protocol

from torch_bench.results.stats import relative_iqr

SPREAD_MIN_SAMPLES = 3  # a spread from fewer samples says nothing


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
    min_block_ms: float = 1.0  # longer blocks, steadier samples (fast ops only)
    max_number: int = 100_000
    nloops: int | None = None  # exactly this many samples of one call each (fastrnns)
    # Calls per sample by metric, reused instead of calibrating (from an earlier run).
    loops: Mapping[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.min_repeats < 1 or self.max_repeats < self.min_repeats:
            raise ValueError("need 1 <= min_repeats <= max_repeats")
        if self.warmup < 0 or self.max_time_s <= 0:
            raise ValueError("warmup must be >= 0 and max_time_s > 0")
        if self.nloops is not None and self.nloops < 1:
            raise ValueError("nloops must be >= 1")

    def loops_for(self, metric: str | None) -> int | None:
        """The calls per sample to reuse for `metric`, or None to calibrate."""
        if self.nloops is not None:
            return 1
        return self.loops.get(metric) if metric is not None else None


@dataclass(frozen=True)
class Timing:
    samples_ms: tuple[float, ...]
    number: int  # calls per sample
    warmup: int
    stop_reason: str  # "spread", "repeats", "time" or "nloops"
    threads: int

    def extra(self) -> dict:
        return {
            "loops": self.number,
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
    metric: str | None = None,
) -> Timing:
    """Time `fn`. With `setup`, it runs untimed before each call and every block is one call
    (for example, a forward pass before the timed backward). `metric` names what is timed,
    so that a calls-per-sample count recorded for it in `policy.loops` is reused."""
    import torch

    clock = clock or CpuClock()
    for _ in range(policy.warmup):
        if setup is not None:
            setup()
        fn()
    if setup is not None:
        number = 1
    else:
        number = policy.loops_for(metric) or _block_size(fn, policy, clock)
    with gc_paused():
        samples, stop_reason = _sample(fn, number, policy, clock, setup)
    return Timing(
        samples_ms=tuple(samples),
        number=number,
        warmup=policy.warmup,
        stop_reason=stop_reason,
        threads=torch.get_num_threads(),
    )


def _sample(fn: Callable[[], object], number: int, policy: TimingPolicy, clock: Clock,
            setup: Callable[[], object] | None) -> tuple[list[float], str]:
    if policy.nloops is not None:
        lowest, highest, deadline = policy.nloops, policy.nloops, float("inf")
    else:
        lowest, highest = policy.min_repeats, policy.max_repeats
        deadline = time.perf_counter() + policy.max_time_s
    samples: list[float] = []
    next_check = lowest
    while len(samples) < highest:
        if setup is not None:
            setup()
        samples.append(_time_block(fn, number, clock) / number)
        count = len(samples)
        if count < lowest or policy.nloops is not None:
            continue
        if count >= max(next_check, SPREAD_MIN_SAMPLES):
            # Checked at growing intervals: work between blocks disturbs the caches the
            # next block runs in.
            next_check = count + max(1, count // 10)
            if relative_iqr(samples) <= policy.target_rel_iqr:
                return samples, "spread"
        if time.perf_counter() >= deadline:
            return samples, "time"
    return samples, "nloops" if policy.nloops is not None else "repeats"
