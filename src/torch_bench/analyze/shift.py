"""The run-level shift: how much a whole run moved, all its timings together.

On one machine all benchmarks of a run tend to move together (a slower host of the same
type, thermal state, a busy neighbour). A run's shift is the biweight location
(`biweight_location`: robust as a median, nearly as precise as a mean) over its timings (unit
ms) of ln(its median) - the benchmark's centre, the centre being the mean over the reference
runs; it needs at least `MIN_BENCHMARKS` timings, fewer cannot tell one
benchmark's own change from the run's. Centring on means (not medians) keeps the shifts free
of exact zeros: a median centre puts one run of each benchmark exactly on it, and with an odd
number of runs a run's median deviation is then often exactly 0, which made the shifts'
spread collapse.

Each timing is judged relative to its run's shift (its values minus the shift), so that a
slower host does not turn into a wall of regressions. The head's shift against the reference
runs' shifts is one test (`judge_shift`): the rule of one benchmark at the per-benchmark
rate whatever the suite's size, so a real slowdown of the whole suite is reported once. That
rate is the whole run's share of the per-PR level (`RulePolicy.whole_run_level`); the
benchmarks' family has the rest.
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


def run_shifts(logs: np.ndarray, centre: np.ndarray, scale: float | None = None) -> np.ndarray:
    """Each run's shift (rows of `logs`, columns the timings, NaN where missing) against
    `centre` (per column); NaN for a run with fewer than `MIN_BENCHMARKS` timings. `scale` is
    the spread of a timing around its run's shift (`shift_scale`), by default learned from
    these runs: pass the reference runs' to judge a head whose timings may have changed."""
    deviations = logs - centre[np.newaxis, :]
    counts = np.isfinite(deviations).sum(axis=1)
    shifts = np.full(logs.shape[0], np.nan)
    enough = np.flatnonzero(counts >= MIN_BENCHMARKS)
    if scale is None:
        scale = shift_scale(logs, centre)
    for i in enough:
        row = deviations[i]
        shifts[i] = biweight_location(row[np.isfinite(row)], scale)
    return shifts


def shift_scale(logs: np.ndarray, centre: np.ndarray) -> float:
    """The spread of a timing's deviation around its run's median deviation, over all runs
    together (1.4826 MAD; NaN with no run of at least `MIN_BENCHMARKS` timings). Learned from
    many runs it is not inflated by the timings a head really changed, as one run's own MAD
    is when nearly half of them did."""
    deviations = logs - centre[np.newaxis, :]
    rows = deviations[np.isfinite(deviations).sum(axis=1) >= MIN_BENCHMARKS]
    if not rows.size:
        return math.nan
    spread = np.abs(rows - np.nanmedian(rows, axis=1)[:, np.newaxis])
    return 1.4826 * float(np.nanmedian(spread))


BIWEIGHT_C = 4.685  # 95% as efficient as the mean on normal values


def biweight_location(values: np.ndarray, scale: float, iterations: int = 30) -> float:
    """Tukey's biweight M-estimate of location, started from the median, with a given scale:
    values beyond 4.7 scales from the centre weigh nothing, so a minority of changed timings
    moves it no more than it moves the median, while with nothing changed it is nearly as
    precise as the mean (the median alone throws away a third of the suite's information)."""
    x = np.asarray(values, dtype=float)
    centre = float(np.median(x))
    if not scale > 0:
        return centre
    for _ in range(iterations):
        u = (x - centre) / (BIWEIGHT_C * scale)
        weights = np.where(np.abs(u) < 1, (1 - u * u) ** 2, 0.0)
        if not weights.sum() > 0:
            return centre
        moved = float(np.dot(weights, x) / weights.sum())
        if abs(moved - centre) < 1e-12 * scale:
            return moved
        centre = moved
    return centre


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
    confirmed: bool | None = None  # whether A/B rounds agreed with a flagged run; else None
    # A/B rounds that called a move the head run alone could not; the fields above are then
    # the rounds' reading (over their witness timings), but for history_runs
    found_in_rounds: int = 0

    @property
    def ratio(self) -> float:
        return math.exp(self.shift)

    def to_dict(self) -> dict:
        return {"ratio": self.ratio, "benchmarks": self.benchmarks, "noise": self.spread,
                "history_runs": self.history_runs, "z": self.z, "threshold": self.threshold,
                "verdict": self.outcome.value, "note": self.reason,
                "detectable": self.detectable, "confirmed": self.confirmed,
                "found_in_rounds": self.found_in_rounds}


def judge_shift(reference: Sequence[float], head: Sequence[float], benchmarks: int,
                policy: RulePolicy, side_by_side: bool = False,
                memory: float = 0.0, share: float | None = None) -> RunShift:
    """The head's shift judged against the reference runs' shifts. Timings: higher is
    worse. `memory`: the runs' AR(1) rho, read from the suite's timings as measured
    (`evidence.gather`); one series of at most 20 shifts cannot show it. `share`: the test's
    share of the per-PR level beside the benchmarks (by default all of it, so the
    false-alarm rate)."""
    reference = np.asarray([s for s in reference if math.isfinite(s)], dtype=float)
    head = np.asarray([s for s in head if math.isfinite(s)], dtype=float)
    enough = reference.size >= 1 and (side_by_side or reference.size >= policy.min_history)
    evidence = evidence_from_groups(reference, head, side_by_side=side_by_side) \
        if enough else None
    level = float(reference.mean()) if reference.size else 0.0
    moved = float(head.mean()) - level
    case = Case(evidence, True, policy.min_effect, "shift", int(reference.size),
                (1.0, math.exp(moved)))
    a: Assessment = judge([case], policy, memory=memory, level=share)[0]
    reason = a.reason
    if a.outcome is Outcome.UNSURE and a.p_value is not None and a.p_value < policy.alpha:
        reason = (f"p = {a.p_value:.2g}, not below the whole run's share of the per-PR level "
                  f"({share if share is not None else policy.fdr:g})")
    elif a.outcome is Outcome.UNSURE and reason is None:
        reason = "within the run-level shifts seen in history"
    elif a.outcome is Outcome.SAME and abs(moved) >= math.log1p(policy.min_effect):
        reason = "within the run-level shifts seen in history"
        return RunShift(moved, benchmarks, a.noise, int(reference.size), a.threshold, a.z,
                        Outcome.UNSURE, reason, a.detectable)
    return RunShift(moved, benchmarks, a.noise, int(reference.size), a.threshold, a.z,
                    a.outcome, reason, a.detectable)
