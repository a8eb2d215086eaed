"""The run-level shift: how much a whole run moved, all its timings together.

On one machine all benchmarks of a run tend to move together (a slower host of the same
type, thermal state, a busy neighbour). The shift of the head against its baseline is the
median, over the suite's timings (unit ms), of ln(head median / base median); it needs at
least `MIN_BENCHMARKS` timings, fewer cannot tell one benchmark's own change from the run's.
Each benchmark is then judged relative to it (`rule.assess(shift=...)`), against the spread
of its own history once the history runs' shifts are taken out (`residual_series`), so that a
slower host does not turn into a wall of regressions. The shift itself is flagged only when
it exceeds the run-level shifts seen in history, with the same Student-t threshold, minimum
effect and minimum history as a benchmark: a real global slowdown is reported once.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from torch_bench.analyze.noise import HISTORY_WINDOW, tail_aware_spread
from torch_bench.analyze.rule import Outcome, RulePolicy, not_enough_history, t_threshold

MIN_BENCHMARKS = 5
SHIFTED_UNITS = ("ms",)  # timings move with the host; memory and counts do not


def median_log_ratio(log_ratios: Sequence[float]) -> float | None:
    """The run-level shift from per-benchmark ln(head / base); None with too few."""
    finite = [v for v in log_ratios if math.isfinite(v)]
    return float(np.median(finite)) if len(finite) >= MIN_BENCHMARKS else None


def history_shifts(runs: Sequence[Mapping[str, float]]) -> list[float | None]:
    """Each history run's shift against the history's typical level: the median over its
    benchmarks of ln(median) - the benchmark's median ln(median) over the runs. `runs` holds
    per run (oldest first) the per-run median of each benchmark."""
    logs: dict[str, list[float]] = {}
    for run in runs:
        for key, value in run.items():
            if value > 0:
                logs.setdefault(key, []).append(math.log(value))
    centre = {key: float(np.median(values)) for key, values in logs.items()}
    return [median_log_ratio([math.log(v) - centre[k] for k, v in run.items() if v > 0])
            for run in runs]


def residual_series(runs: Sequence[Mapping[str, float]],
                    shifts: Sequence[float | None]) -> dict[str, list[float]]:
    """Per benchmark, its per-run medians divided by exp(the run's shift), oldest first (runs
    without a shift keep their value), the last `HISTORY_WINDOW` runs."""
    series: dict[str, list[float]] = {}
    for run, shift in zip(runs, shifts, strict=True):
        for key, value in run.items():
            series.setdefault(key, []).append(value / math.exp(shift or 0.0))
    return {key: values[-HISTORY_WINDOW:] for key, values in series.items()}


@dataclass(frozen=True)
class RunShift:
    """The head's run-level shift against its baseline and what the rule made of it."""

    shift: float  # ln(head / base), median over the timings
    benchmarks: int
    spread: float | None  # of the run-level shifts in history
    history_runs: int
    threshold: float | None
    z: float | None
    outcome: Outcome
    reason: str | None = None

    @property
    def ratio(self) -> float:
        return math.exp(self.shift)

    def to_dict(self) -> dict:
        return {"ratio": self.ratio, "benchmarks": self.benchmarks, "noise": self.spread,
                "history_runs": self.history_runs, "z": self.z, "threshold": self.threshold,
                "verdict": self.outcome.value, "note": self.reason}


def judge_shift(shift: float, benchmarks: int, past: Sequence[float | None], runs_base: int,
                runs_head: int, policy: RulePolicy, z: float,
                side_by_side: bool = False) -> RunShift:
    """Flag the shift only when it exceeds the history of run-level shifts (or, in A/B mode,
    the rounds' own ones, `past` then holding them). Timings: higher is worse."""
    known = [s for s in past if s is not None][-HISTORY_WINDOW:]
    spread = tail_aware_spread([math.exp(s) for s in known])
    enough = spread is not None and (side_by_side or len(known) >= policy.min_history)
    if abs(shift) < math.log1p(policy.min_effect):
        return RunShift(shift, benchmarks, spread, len(known), None, None, Outcome.SAME)
    if not enough:
        return RunShift(shift, benchmarks, spread, len(known), None, None, Outcome.UNSURE,
                        not_enough_history(len(known), policy.min_history))
    threshold = t_threshold(z, len(known) - 1)
    scale = spread * math.sqrt(1 / runs_base + 1 / runs_head)
    score = shift / scale if scale > 0 else math.copysign(math.inf, shift)
    if abs(score) <= threshold:
        return RunShift(shift, benchmarks, spread, len(known), threshold, score, Outcome.UNSURE,
                        "within the run-level shifts seen in history")
    return RunShift(shift, benchmarks, spread, len(known), threshold, score,
                    Outcome.WORSE if shift > 0 else Outcome.BETTER)
