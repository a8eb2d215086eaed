"""What a look at interleaved rounds measured, in words: the change and its interval."""

from __future__ import annotations

import math
from statistics import NormalDist

from torch_bench.analyze.rule import Assessment
from torch_bench.analyze.student_t import t_isf


def change_reading(a: Assessment | None, level: float = 0.95) -> str:
    """The change `a` measured and its `level` interval (from the moderated t and its degrees
    of freedom), e.g. "+25.1% (95% interval +3.0% to +52.4%)"; the change alone when the look
    gives no spread, "" without a finite change."""
    if a is None or not 0 < a.relative_ratio < math.inf:
        return ""
    change = math.log(a.relative_ratio)
    said = f"{(a.relative_ratio - 1) * 100:+.1f}%"
    if not a.z or not math.isfinite(a.z) or change == 0:
        return said
    error = abs(change / a.z)
    tail = (1 - level) / 2
    q = t_isf(tail, a.df) if a.df and a.df > 0 else NormalDist().inv_cdf(1 - tail)
    low, high = (math.expm1(change + sign * q * error) * 100 for sign in (-1, 1))
    return f"{said} ({level:.0%} interval {low:+.1f}% to {high:+.1f}%)"
