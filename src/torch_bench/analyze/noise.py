"""Run-to-run noise learned from history.

The spread that matters for a verdict is how much a benchmark's per-run median moves from one
run to the next on the same machine and the same code. It is estimated robustly, in log space,
from the last runs of the base branch on the same fingerprint:

    s = b_n x 1.4826 x MAD(ln(per-run median))

1.4826 makes the MAD a consistent estimate of the standard deviation for normal data; the MAD
ignores the odd run that hit a busy neighbour.

b_n is the finite-sample correction of Croux and Rousseeuw (1992): from few values the MAD
underestimates the standard deviation on average (by 4% from 20 runs, by 33% from 3), and an
s that is too small inflates z and with it the false alarms; b_n = n / (n - 0.8) for n > 9,
tabulated below. The z statistic stays heavier-tailed than a normal one, because s itself is
estimated from at most 20 runs; `benchmarks/detector_eval.py` measures what that costs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

MAD_TO_SD = 1.4826
HISTORY_WINDOW = 20  # the last N base-branch runs that define the noise
# Croux & Rousseeuw's b_n for n <= 9 (a MAD of 2 values is not used)
SMALL_SAMPLE_CORRECTION = {3: 1.495, 4: 1.363, 5: 1.206, 6: 1.200, 7: 1.140, 8: 1.129, 9: 1.107}


def mad_correction(n: int) -> float:
    """b_n: makes b_n x 1.4826 x MAD of n normal values unbiased for their standard deviation."""
    if n < 3:
        raise ValueError(f"no MAD correction for {n} values (at least 3)")
    return SMALL_SAMPLE_CORRECTION.get(n, n / (n - 0.8))


def robust_log_spread(per_run_medians: Sequence[float]) -> float | None:
    """b_n x 1.4826 x MAD of ln(values); None with fewer than 3 positive values."""
    values = np.asarray([v for v in per_run_medians if v is not None and v > 0], dtype=float)
    if values.size < 3:
        return None
    return float(robust_log_spreads(values[np.newaxis, :])[0])


def robust_log_spreads(per_run_medians: np.ndarray) -> np.ndarray:
    """`robust_log_spread` of each row of a 2-D array of positive values (at least 3 columns),
    vectorised for simulations."""
    logs = np.log(np.asarray(per_run_medians, dtype=float))
    mad = np.median(np.abs(logs - np.median(logs, axis=1, keepdims=True)), axis=1)
    return mad_correction(logs.shape[1]) * MAD_TO_SD * mad


def recent(values: Sequence[float], window: int = HISTORY_WINDOW) -> list[float]:
    """The last `window` values of an oldest-first series."""
    return list(values[-window:]) if window > 0 else []


@dataclass(frozen=True)
class NoiseEstimate:
    """The run-to-run spread `s` (None when there were fewer than 3 runs) and how many runs
    it was learned from."""

    spread: float | None
    runs: int

    @classmethod
    def from_medians(cls, per_run_medians: Sequence[float]) -> NoiseEstimate:
        return cls(robust_log_spread(per_run_medians), len(per_run_medians))


NO_HISTORY = NoiseEstimate(None, 0)
