"""One benchmark's data as the rule weighs it, in log space (ln of per-run medians): the
reference runs whose mean is the baseline level, the head's runs, and the within-group sum of
squares that teaches the run-to-run variance. Pure data; `evidence.py` builds it from run
documents, `rule.py` judges it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Evidence:
    """One benchmark's data in log space (see the module docstring)."""

    reference: np.ndarray  # values whose mean is the baseline level
    head: np.ndarray  # the head's values
    sum_of_squares: float  # within-group, of every group that teaches the variance
    df: int  # its degrees of freedom
    side_by_side: bool = False  # reference and head measured interleaved (A/B)
    head_within: float = 0.0  # the head runs' own sampling variance of ln(median), mean
    reference_within: float = 0.0  # the same of the reference runs (0: not known)

    @property
    def variance(self) -> float:
        return self.sum_of_squares / self.df if self.df > 0 else math.nan

    def head_variance(self, variance: float) -> float:
        """The variance of one head run's ln(median), given the run-to-run `variance` learned
        from the reference runs. That variance is the variance between runs plus the
        reference runs' own sampling variance of their medians; a head run's is the variance
        between runs plus its own, so one noisier inside (a busy runner) has the difference
        on top, and never less than its own sampling variance (where history's variance came
        out below its runs' sampling noise) nor than history's variance. Without the
        reference runs' sampling variance, the larger of the two."""
        between = max(variance - self.reference_within, 0.0) if self.reference_within > 0 \
            else 0.0
        return max(variance, between + self.head_within)

    @property
    def estimate(self) -> float:
        """ln(head level / baseline level)."""
        return float(np.mean(self.head) - np.mean(self.reference))


def evidence_from_groups(reference: Sequence[float], head: Sequence[float],
                         other_groups: Sequence[Sequence[float]] = (),
                         side_by_side: bool = False, head_within: float = 0.0,
                         reference_within: float = 0.0) -> Evidence:
    """Evidence whose variance is pooled within the reference, the head and `other_groups`
    (older segments of history)."""
    groups = [np.asarray(g, dtype=float) for g in (reference, head, *other_groups)]
    ss = sum(float(((g - g.mean()) ** 2).sum()) for g in groups if g.size > 1)
    df = sum(g.size - 1 for g in groups if g.size > 1)
    return Evidence(groups[0], groups[1], ss, df, side_by_side, head_within, reference_within)


def median_sampling_variance(samples: Sequence[float]) -> float:
    """The sampling variance of ln(median) of one run's samples: (1.2533 x robust sd of
    ln(sample)) ^ 2 / n, the large-sample variance of a median. 0 with fewer than 3."""
    logs = np.log(np.asarray([v for v in samples if v > 0], dtype=float))
    if logs.size < 3:
        return 0.0
    robust_sd = 1.4826 * float(np.median(np.abs(logs - np.median(logs))))
    return (1.2533 * robust_sd) ** 2 / logs.size
