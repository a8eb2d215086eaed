"""Run-to-run noise of one series, for the dashboard's noise band (`render/noise_band.py`).

The PR verdicts learn their noise differently, over the whole suite (`rule.py`,
`evidence.py`); the dashboard colours single-run comparisons of one series at a time.

The spread is how much a benchmark's per-run median moves from one run to the next on the
same machine and the same code, estimated in log space from the newest baseline-branch runs:

- tail-aware: s = max(b_n x 1.4826 x MAD, sample standard deviation) of ln(per-run median).
  The MAD alone ignores a minority of runs on a slower host; the standard deviation sees
  them. The larger of the two never collapses when two of three runs happen to agree.
  (b_n is the small-sample correction of Croux and Rousseeuw, 1992.)
- uncertain: s from n runs is itself an estimate; the band compares with a Student-t
  quantile with n - 1 degrees of freedom (`rule.t_threshold`), so it widens as the history
  shrinks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from torch_bench.analyze.evidence import HISTORY_WINDOW

__all__ = ["HISTORY_WINDOW", "NoiseEstimate", "tail_aware_spread", "tail_aware_spreads"]

MAD_TO_SD = 1.4826
# Croux & Rousseeuw's b_n for n <= 9 (a MAD of 2 values is not used)
SMALL_SAMPLE_CORRECTION = {3: 1.495, 4: 1.363, 5: 1.206, 6: 1.200, 7: 1.140, 8: 1.129, 9: 1.107}


def mad_correction(n: int) -> float:
    """b_n: makes b_n x 1.4826 x MAD of n normal values unbiased for their standard deviation."""
    if n < 3:
        raise ValueError(f"no MAD correction for {n} values (at least 3)")
    return SMALL_SAMPLE_CORRECTION.get(n, n / (n - 0.8))


def _positive(values: Sequence[float]) -> np.ndarray:
    return np.asarray([v for v in values if v is not None and v > 0], dtype=float)


def robust_log_spreads(per_run_medians: np.ndarray) -> np.ndarray:
    """b_n x 1.4826 x MAD of ln(values), per row of a 2-D array of positive values (at least
    3 columns)."""
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


@dataclass(frozen=True)
class NoiseEstimate:
    """The run-to-run spread `s` (None when there were fewer than 3 runs) and how many runs
    it was learned from."""

    spread: float | None
    runs: int

    @property
    def degrees_of_freedom(self) -> float:
        return max(self.runs - 1, 0)

    @classmethod
    def from_medians(cls, per_run_medians: Sequence[float]) -> NoiseEstimate:
        """The tail-aware spread of a benchmark's per-run medians (oldest first)."""
        return cls(tail_aware_spread(per_run_medians), len(per_run_medians))
