"""Run-to-run noise learned from history.

The spread that matters for a verdict is how much a benchmark's per-run median moves from one
run to the next on the same machine and the same code. It is estimated robustly, in log space,
from the last runs of the base branch on the same fingerprint:

    s = 1.4826 * MAD(ln(per-run median))

1.4826 makes the MAD a consistent estimate of the standard deviation for normal data; the MAD
ignores the odd run that hit a busy neighbour.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

MAD_TO_SD = 1.4826
HISTORY_WINDOW = 20  # the last N base-branch runs that define the noise


def robust_log_spread(per_run_medians: Sequence[float]) -> float | None:
    """1.4826 x MAD of ln(values); None with fewer than 3 positive values."""
    values = np.asarray([v for v in per_run_medians if v is not None and v > 0], dtype=float)
    if values.size < 3:
        return None
    logs = np.log(values)
    return float(MAD_TO_SD * np.median(np.abs(logs - np.median(logs))))


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
