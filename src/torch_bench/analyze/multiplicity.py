"""Many benchmarks, one PR: keeping the chance that a report names any false change small.

Each benchmark is tested at its own false-alarm rate; a suite of m benchmarks then names
about m times that rate of false changes. The Benjamini-Hochberg step-up procedure at level q
keeps the expected share of false discoveries among the changes named at most q, and, when
nothing changed at all, the chance of naming any at most q (independent or positively
correlated tests, as benchmarks sharing a machine are). Unlike Bonferroni it is lenient when
many benchmarks truly changed.
"""

from __future__ import annotations

import numpy as np


def benjamini_hochberg(p_values, level: float) -> np.ndarray:
    """Which p-values the BH procedure at `level` rejects (NaN never is)."""
    p = np.asarray(p_values, dtype=float)
    found = np.zeros(p.shape, dtype=bool)
    tested = np.flatnonzero(np.isfinite(p))
    if tested.size == 0:
        return found
    order = tested[np.argsort(p[tested], kind="stable")]
    limits = level * np.arange(1, order.size + 1) / order.size
    below = np.flatnonzero(p[order] <= limits)
    if below.size:
        found[order[:below[-1] + 1]] = True
    return found


def next_cutoff(p_values, level: float) -> float:
    """The p-value one more benchmark would need to be rejected too: level x (R + 1) / m, R
    the rejections so far and m the tests (0 when nothing is tested)."""
    p = np.asarray(p_values, dtype=float)
    tested = int(np.isfinite(p).sum())
    if tested == 0:
        return 0.0
    rejected = int(benjamini_hochberg(p, level).sum())
    return level * min(rejected + 1, tested) / tested
