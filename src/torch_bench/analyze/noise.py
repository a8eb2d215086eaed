"""Run-to-run noise of one series, for the dashboard's noise band (`render/noise_band.py`).

The PR verdicts learn their noise differently, over the whole suite (`rule.py`,
`evidence.py`); the dashboard colours single-run comparisons of one series at a time.

The spread that matters for a verdict is how much a benchmark's per-run median moves from one
run to the next on the same machine and the same code. It is estimated in log space from the
last runs of the base branch on the same fingerprint, with three safeguards that
`benchmarks/detector_eval.py` justifies on heavy-tailed, bimodal and drifting fleets:

- tail-aware: s = max(b_n x 1.4826 x MAD, sample standard deviation) of ln(per-run median).
  The MAD alone ignores a minority of runs on a slower host; the standard deviation sees
  them. The larger of the two never collapses when two of three runs happen to agree.
  (b_n is the small-sample correction of Croux and Rousseeuw, 1992.)
- pooled over the suite: a benchmark's s is pulled up toward the suite's typical spread
  (the median s of the suite's benchmarks), as if the suite contributed `PRIOR_DF` degrees of
  freedom: s^2 <- max(s^2, ((n - 1) s^2 + PRIOR_DF s_suite^2) / (n - 1 + PRIOR_DF)).
  It is never pulled down: a noisy benchmark keeps its own spread.
- uncertain: s from n runs is itself an estimate; the rule compares z with a Student-t
  quantile with `df` = n - 1 degrees of freedom (`rule.t_threshold`), so the threshold
  widens as the history shrinks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

MAD_TO_SD = 1.4826
HISTORY_WINDOW = 20  # the last N base-branch runs that define the noise
PRIOR_DF = 4  # weight of the suite's spread in a benchmark's spread, in runs
# Croux & Rousseeuw's b_n for n <= 9 (a MAD of 2 values is not used)
SMALL_SAMPLE_CORRECTION = {3: 1.495, 4: 1.363, 5: 1.206, 6: 1.200, 7: 1.140, 8: 1.129, 9: 1.107}


def mad_correction(n: int) -> float:
    """b_n: makes b_n x 1.4826 x MAD of n normal values unbiased for their standard deviation."""
    if n < 3:
        raise ValueError(f"no MAD correction for {n} values (at least 3)")
    return SMALL_SAMPLE_CORRECTION.get(n, n / (n - 0.8))


def _positive(values: Sequence[float]) -> np.ndarray:
    return np.asarray([v for v in values if v is not None and v > 0], dtype=float)


def robust_log_spread(per_run_medians: Sequence[float]) -> float | None:
    """b_n x 1.4826 x MAD of ln(values); None with fewer than 3 positive values."""
    values = _positive(per_run_medians)
    if values.size < 3:
        return None
    return float(robust_log_spreads(values[np.newaxis, :])[0])


def robust_log_spreads(per_run_medians: np.ndarray) -> np.ndarray:
    """`robust_log_spread` of each row of a 2-D array of positive values (at least 3 columns),
    vectorised for simulations."""
    logs = np.log(np.asarray(per_run_medians, dtype=float))
    mad = np.median(np.abs(logs - np.median(logs, axis=1, keepdims=True)), axis=1)
    return mad_correction(logs.shape[1]) * MAD_TO_SD * mad


def tail_aware_spreads(per_run_medians: np.ndarray) -> np.ndarray:
    """max(robust spread, sample standard deviation) of ln(values), per row (>= 3 columns)."""
    logs = np.log(np.asarray(per_run_medians, dtype=float))
    return np.maximum(robust_log_spreads(per_run_medians), logs.std(axis=1, ddof=1))


def tail_aware_spread(per_run_medians: Sequence[float]) -> float | None:
    """`tail_aware_spreads` of one series; None with fewer than 3 positive values."""
    values = _positive(per_run_medians)
    if values.size < 3:
        return None
    return float(tail_aware_spreads(values[np.newaxis, :])[0])


def pooled_toward(spread: np.ndarray | float, runs: np.ndarray | int,
                  suite_spread: float | None) -> np.ndarray | float:
    """A benchmark's spread pulled up toward the suite's (see the module docstring)."""
    if suite_spread is None:
        return spread
    df = np.maximum(np.asarray(runs) - 1, 0)
    shrunk = np.sqrt((df * np.square(spread) + PRIOR_DF * suite_spread ** 2) / (df + PRIOR_DF))
    return np.maximum(spread, shrunk)


def recent(values: Sequence[float], window: int = HISTORY_WINDOW) -> list[float]:
    """The last `window` values of an oldest-first series."""
    return list(values[-window:]) if window > 0 else []


@dataclass(frozen=True)
class NoiseEstimate:
    """The run-to-run spread `s` (None when there were fewer than 3 runs), how many runs it
    was learned from, the degrees of freedom of that estimate (default runs - 1), and whether
    it comes from base and head measured side by side (A/B rounds), which needs no history."""

    spread: float | None
    runs: int
    df: float | None = None
    side_by_side: bool = False

    @property
    def degrees_of_freedom(self) -> float:
        return self.df if self.df is not None else max(self.runs - 1, 0)

    @classmethod
    def from_medians(cls, per_run_medians: Sequence[float],
                     suite_spread: float | None = None) -> NoiseEstimate:
        """The tail-aware spread of a benchmark's per-run medians (oldest first), pulled up
        toward `suite_spread` when given."""
        spread = tail_aware_spread(per_run_medians)
        runs = len(per_run_medians)
        if spread is not None:
            spread = float(pooled_toward(spread, runs, suite_spread))
        return cls(spread, runs)


def suite_spread(series: Mapping[str, Sequence[float]]) -> float | None:
    """The suite's typical run-to-run spread: the median tail-aware spread over its
    benchmarks with at least 3 runs; None when fewer than 3 benchmarks have one."""
    spreads = [s for s in (tail_aware_spread(v) for v in series.values()) if s is not None]
    return float(np.median(spreads)) if len(spreads) >= 3 else None


NO_HISTORY = NoiseEstimate(None, 0)
