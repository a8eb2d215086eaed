"""Timing a callable: warmup, block sizing, adaptive repeats, raw samples.

A sample is the time of one block of `loops` calls divided by `loops`, in milliseconds.
Blocks are sized so that a block lasts at least `min_block_ms`, which keeps the timer's own
overhead negligible for operations of a few microseconds; a count given by the caller (the
one an earlier run calibrated) is used as it is, so every run times the same loop. Repeats
stop at the first of: the samples' relative IQR under `target_rel_iqr`, `max_repeats`
samples, or `max_time_s` spent; never before `min_repeats` samples (the repeat bounds win
over the budget), unless one call takes the whole budget and more than `ONE_CALL_FLOOR_S`:
then one warm-up call, untimed save for that check, and one timed call are all there is (no
calibration, `stop_reason` "time"), where the repeat bounds would have held a case for
minutes. A sample count fixed by the caller (`min_repeats == max_repeats`) is taken whatever
the calls cost. With `nloops`, exactly that many samples of one call each are taken.

Two clocks are read around every block: the device's (wall time, `perf_counter_ns`, or CUDA
events on a GPU) and the process's CPU time (`process_time_ns`: every thread of the process,
user and system). `TimingPolicy.clock` says which one the samples are, the other is kept
beside them; see docs/measurement-clock.md for what each one does not see. The involuntary
context switches of every block are counted too (see `interruptions`). On the CPU clock a
fixed reference block is timed after every sample block when `TimingPolicy.reference` is on
(see `speed_reference`), so that the verdicts can divide the machine's speed out.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Protocol

from torch_bench.measure.interruptions import (
    interrupted_share,
    involuntary_switches,
    is_interrupted,
    migrations,
)
from torch_bench.measure.op_window import profile_window
from torch_bench.measure.speed_reference import SpeedReference
from torch_bench.results.stats import relative_iqr

SPREAD_MIN_SAMPLES = 3  # a spread from fewer samples says nothing
CLOCKS = ("wall", "cpu")  # what the samples may be: the device's clock or process CPU time


class Clock(Protocol):
    """Times a block of work. `stop` returns the elapsed milliseconds since `start`."""

    def start(self) -> None: ...

    def stop(self) -> float: ...


class WallClock:
    """Wall time (`perf_counter_ns`)."""

    name = "wall"

    def __init__(self) -> None:
        self._t0 = 0

    def start(self) -> None:
        self._t0 = time.perf_counter_ns()

    def stop(self) -> float:
        return (time.perf_counter_ns() - self._t0) / 1e6


class CudaClock:
    """CUDA events around the block; synchronises before starting and after stopping so the
    time covers the kernels queued by the block and nothing before it."""

    name = "cuda"

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
    return CudaClock(device) if device.startswith("cuda") else WallClock()


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
    # What the samples are: "wall" (the device's clock: wall time, CUDA events on a GPU) or
    # "cpu" (process CPU time). `torch-bench run --clock auto` chooses it per run.
    clock: str = "wall"
    # Time the speed reference after every sample block (the CPU clock only).
    reference: bool = False

    def __post_init__(self) -> None:
        if self.min_repeats < 1 or self.max_repeats < self.min_repeats:
            raise ValueError("need 1 <= min_repeats <= max_repeats")
        if self.warmup < 0 or self.max_time_s <= 0:
            raise ValueError("warmup must be >= 0 and max_time_s > 0")
        if self.nloops is not None and self.nloops < 1:
            raise ValueError("nloops must be >= 1")
        if self.clock not in CLOCKS:
            raise ValueError(f"clock must be one of {', '.join(CLOCKS)}, got {self.clock!r}")

    def loops_for(self, metric: str | None) -> int | None:
        """The calls per sample to reuse for `metric`, or None to calibrate."""
        if self.nloops is not None:
            return 1
        return self.loops.get(metric) if metric is not None else None


@dataclass(frozen=True)
class Block:
    """One timed block of calls, in milliseconds, and what happened to it."""

    elapsed_ms: float  # the device's clock: wall time, or CUDA events
    cpu_ms: float  # process CPU time
    switches: int | None  # involuntary context switches (None: not counted here)

    def on(self, clock: str) -> float:
        return self.cpu_ms if clock == "cpu" else self.elapsed_ms


@dataclass(frozen=True)
class Timing:
    samples_ms: tuple[float, ...]  # per call, on `clock`
    number: int  # calls per sample
    warmup: int
    stop_reason: str  # "spread", "repeats", "time" or "nloops"
    threads: int
    clock: str = "wall"  # what samples_ms are: "wall", "cuda" or "cpu"
    other_clock: str | None = None  # the clock read beside it
    other_samples_ms: tuple[float, ...] = ()  # per call, on `other_clock`
    switches: tuple[int, ...] | None = None  # involuntary context switches per sample
    migrations: int | None = None  # moves between CPUs while sampling
    reference_ms: tuple[float, ...] = ()  # the speed reference after each sample block
    reference: str | None = None  # which reference block

    def extra(self) -> dict:
        extra = {
            "loops": self.number,
            "warmup": self.warmup,
            "stop_reason": self.stop_reason,
            "threads": self.threads,
            "clock": self.clock,
        }
        if self.other_clock and self.other_samples_ms:
            extra[f"{self.other_clock}_samples"] = [_rounded(v) for v in self.other_samples_ms]
        if self.switches is not None:
            extra["involuntary_switches"] = list(self.switches)
            extra["interrupted_share"] = round(interrupted_share(self.switches), 4)
        ratio = self.cpu_wall_ratio()
        if ratio is not None:
            extra["cpu_wall_ratio"] = round(ratio, 4)
        if self.migrations is not None:
            extra["migrations"] = self.migrations
        if self.reference and len(self.reference_ms) == len(self.samples_ms):
            extra["reference"] = self.reference
            extra["reference_samples"] = [_rounded(v) for v in self.reference_ms]
        return extra

    def cpu_wall_ratio(self) -> float | None:
        """Median CPU time / median wall time over the uninterrupted samples (all of them
        when every one was interrupted): about 1 for work done by one busy thread, well
        below 1 when the work waits (I/O, sleep, a lock, the GPU), about N for N busy
        threads. None on CUDA events or without both clocks."""
        clocks = {self.clock: self.samples_ms, self.other_clock: self.other_samples_ms}
        if set(clocks) != {"wall", "cpu"} or not self.samples_ms:
            return None
        keep = [i for i, s in enumerate(self.switches or ()) if not is_interrupted(s)] \
            or range(len(self.samples_ms))
        wall = statistics.median(clocks["wall"][i] for i in keep)
        cpu = statistics.median(clocks["cpu"][i] for i in keep)
        return cpu / wall if wall > 0 else None


def _rounded(value: float) -> float:
    """Six significant digits: the clock beside the samples is kept for reading, not for
    statistics, and shorter numbers keep the documents small."""
    return float(f"{value:.6g}")


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


def _time_block(fn: Callable[[], object], number: int, clock: Clock) -> Block:
    """Both clocks and the switch count around `number` calls. The device clock is read
    innermost, so it times nothing but the calls."""
    switches = involuntary_switches()
    cpu = time.process_time_ns()
    clock.start()
    for _ in range(number):
        fn()
    elapsed = clock.stop()
    cpu = time.process_time_ns() - cpu
    after = involuntary_switches()
    return Block(elapsed, cpu / 1e6, None if switches is None else after - switches)


ONE_CALL_FLOOR_S = 1.0  # calls shorter than this get the repeat bounds whatever the budget


def _spends_the_budget(call_ms: float, policy: TimingPolicy) -> bool:
    """Whether one call of `call_ms` ends the measurement (see the module docstring)."""
    return policy.nloops is None and policy.min_repeats < policy.max_repeats \
        and call_ms >= 1000 * max(policy.max_time_s, ONE_CALL_FLOOR_S)


def _block_size(fn: Callable[[], object], policy: TimingPolicy, clock: Clock) -> int:
    number = 1
    while number < policy.max_number:
        # The fastest of three, so one preempted block cannot end the calibration early.
        elapsed = min(_time_block(fn, number, clock).on(policy.clock) for _ in range(3))
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
    *,
    now: Callable[[], float] = time.perf_counter,
) -> Timing:
    """Time `fn`. With `setup`, it runs untimed before each call and every block is one call
    (for example, a forward pass before the timed backward). `metric` names what is timed,
    so that a calls-per-sample count recorded for it in `policy.loops` is reused. `now`
    (seconds) is what `policy.max_time_s` is counted on."""
    import torch

    clock = clock or WallClock()
    device_clock = getattr(clock, "name", "wall")
    if policy.clock == "cpu" and device_clock == "cuda":
        raise ValueError("the CPU clock does not see GPU work: time a CUDA device on its own "
                         "clock")
    one_call_spends_it = False
    for done in range(policy.warmup):
        if setup is not None:
            setup()
        if done == 0:  # the first call says whether one call spends the whole budget
            one_call_spends_it = _spends_the_budget(_time_block(fn, 1, clock).elapsed_ms, policy)
            if one_call_spends_it:
                break
        else:
            fn()
    if setup is not None or one_call_spends_it:
        number = 1
    else:
        number = policy.loops_for(metric) or _block_size(fn, policy, clock)
    reference = SpeedReference() if policy.reference and policy.clock == "cpu" else None
    moved = migrations()
    with gc_paused():
        blocks, stop_reason, references = _sample(fn, number, policy, clock, setup, metric,
                                                  reference, now)
    moved_after = migrations()
    other = device_clock if policy.clock == "cpu" else "cpu"
    switches = [b.switches for b in blocks]
    return Timing(
        samples_ms=tuple(b.on(policy.clock) / number for b in blocks),
        number=number,
        warmup=policy.warmup,
        stop_reason=stop_reason,
        threads=torch.get_num_threads(),
        clock=policy.clock if policy.clock == "cpu" else device_clock,
        other_clock=other,
        other_samples_ms=tuple(b.on(other) / number for b in blocks),
        switches=None if None in switches else tuple(switches),
        migrations=None if moved is None or moved_after is None else moved_after - moved,
        reference_ms=tuple(references),
        reference=reference.name if reference is not None else None,
    )


def _sample(fn: Callable[[], object], number: int, policy: TimingPolicy, clock: Clock,
            setup: Callable[[], object] | None, metric: str | None = None,
            reference: SpeedReference | None = None,
            now: Callable[[], float] = time.perf_counter,
            ) -> tuple[list[Block], str, list[float]]:
    if policy.nloops is not None:
        lowest, highest, deadline = policy.nloops, policy.nloops, float("inf")
    else:
        lowest, highest = policy.min_repeats, policy.max_repeats
        deadline = now() + policy.max_time_s
    blocks: list[Block] = []
    references: list[float] = []  # the speed reference after each block
    samples: list[float] = []  # on the policy's clock, per call
    next_check = lowest
    while len(samples) < highest:
        if setup is not None:
            setup()
        with profile_window(metric) as window:  # a profiler sees each block on its own
            blocks.append(_time_block(fn, number, clock))
            window.calls = number
        if reference is not None:
            references.append(reference.time_ms())
        samples.append(blocks[-1].on(policy.clock) / number)
        count = len(samples)
        if count == 1 and _spends_the_budget(blocks[0].elapsed_ms / number, policy):
            return blocks, "time", references  # one call spent the budget: no more
        if count < lowest or policy.nloops is not None:
            continue
        if count >= max(next_check, SPREAD_MIN_SAMPLES):
            # Checked at growing intervals: work between blocks disturbs the caches the
            # next block runs in.
            next_check = count + max(1, count // 10)
            if relative_iqr(samples) <= policy.target_rel_iqr:
                return blocks, "spread", references
        if now() >= deadline:
            return blocks, "time", references
    return blocks, "nloops" if policy.nloops is not None else "repeats", references
