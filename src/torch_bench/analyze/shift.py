"""The run-level shift: how much a whole run moved, all its timings together.

On one machine all benchmarks of a run tend to move together (a slower host of the same
type, thermal state, a busy neighbour). A run's shift is the median, over its timings (unit
ms), of ln(its median) - the benchmark's centre, the centre being the mean over the reference
runs; it needs at least `MIN_BENCHMARKS` timings, fewer cannot tell one
benchmark's own change from the run's. Centring on means (not medians) keeps the shifts free
of exact zeros: a median centre puts one run of each benchmark exactly on it, and with an odd
number of runs a run's median deviation is then often exactly 0, which made the shifts'
spread collapse.

Each timing is judged relative to its run's shift (its values minus the shift), so that a
slower host does not turn into a wall of regressions. The head's shift against the reference
runs' shifts is one test (`judge_shift`): the rule of one benchmark at the per-benchmark
rate, with no suite to correct for, so a real slowdown of the whole suite is reported once.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from torch_bench.analyze.rule import (
    Assessment,
    Case,
    Outcome,
    RulePolicy,
    evidence_from_groups,
    judge,
)

MIN_BENCHMARKS = 5
SHIFTED_UNITS = ("ms",)  # timings move with the host; memory and counts do not


def run_shifts(logs: np.ndarray, centre: np.ndarray) -> np.ndarray:
    """Each run's shift (rows of `logs`, columns the timings, NaN where missing) against
    `centre` (per column); NaN for a run with fewer than `MIN_BENCHMARKS` timings."""
    deviations = logs - centre[np.newaxis, :]
    counts = np.isfinite(deviations).sum(axis=1)
    shifts = np.full(logs.shape[0], np.nan)
    enough = counts >= MIN_BENCHMARKS
    if enough.any():  # the median: half the suite may change before the shift follows it
        shifts[enough] = np.nanmedian(deviations[enough], axis=1)
    return shifts


@dataclass(frozen=True)
class RunShift:
    """The head's run-level shift against its reference runs and what the rule made of it."""

    shift: float  # ln(head / reference), the head's shift minus the reference runs' mean
    benchmarks: int
    spread: float | None  # run-to-run spread of the run-level shifts
    history_runs: int
    threshold: float | None
    z: float | None
    outcome: Outcome
    reason: str | None = None
    detectable: float | None = None

    @property
    def ratio(self) -> float:
        return math.exp(self.shift)

    def to_dict(self) -> dict:
        return {"ratio": self.ratio, "benchmarks": self.benchmarks, "noise": self.spread,
                "history_runs": self.history_runs, "z": self.z, "threshold": self.threshold,
                "verdict": self.outcome.value, "note": self.reason,
                "detectable": self.detectable}


def judge_shift(reference: Sequence[float], head: Sequence[float], benchmarks: int,
                policy: RulePolicy, side_by_side: bool = False) -> RunShift:
    """The head's shift judged against the reference runs' shifts. Timings: higher is
    worse."""
    reference = np.asarray([s for s in reference if math.isfinite(s)], dtype=float)
    head = np.asarray([s for s in head if math.isfinite(s)], dtype=float)
    enough = reference.size >= 1 and (side_by_side or reference.size >= policy.min_history)
    evidence = evidence_from_groups(reference, head, side_by_side=side_by_side) \
        if enough else None
    level = float(reference.mean()) if reference.size else 0.0
    moved = float(head.mean()) - level
    case = Case(evidence, True, policy.min_effect, "shift", int(reference.size),
                (1.0, math.exp(moved)))
    a: Assessment = judge([case], policy)[0]
    reason = a.reason
    if a.outcome is Outcome.UNSURE and reason is None:
        reason = "within the run-level shifts seen in history"
    elif a.outcome is Outcome.SAME and abs(moved) >= math.log1p(policy.min_effect):
        reason = "within the run-level shifts seen in history"
        return RunShift(moved, benchmarks, a.noise, int(reference.size), a.threshold, a.z,
                        Outcome.UNSURE, reason, a.detectable)
    return RunShift(moved, benchmarks, a.noise, int(reference.size), a.threshold, a.z,
                    a.outcome, reason, a.detectable)
