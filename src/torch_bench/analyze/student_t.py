"""Student-t and normal tail probabilities and quantiles in pure Python.

The verdict rule and the dashboard both need the t quantile that a z statistic must exceed
when its noise was estimated from few runs. Commands that only read results (`site`,
`comment`) must not load scipy, so these few functions are written out here: the t tail
through the regularised incomplete beta function (its continued fraction, evaluated with
Lentz's method) and the quantile by bisection. `tests/test_student_t.py` checks them against
scipy.
"""

from __future__ import annotations

import math

_EPS = 1e-15
_TINY = 1e-300
_MAX_TERMS = 500


def normal_sf(z: float) -> float:
    """P(Z > z) for a standard normal Z."""
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def _beta_continued_fraction(a: float, b: float, x: float) -> float:
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    fraction = d
    for m in range(1, _MAX_TERMS + 1):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + numerator / c
            c = c if abs(c) > _TINY else _TINY
            step = c * d
            fraction *= step
        if abs(step - 1.0) < _EPS:
            break
    return fraction


def regularized_beta(a: float, b: float, x: float) -> float:
    """I_x(a, b), the regularised incomplete beta function, for a, b > 0 and 0 <= x <= 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                 + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_continued_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_continued_fraction(b, a, 1.0 - x) / b


def t_sf(t: float, df: float) -> float:
    """P(T > t) for Student's t with `df` degrees of freedom."""
    tail = 0.5 * regularized_beta(df / 2.0, 0.5, df / (df + t * t))
    return tail if t >= 0 else 1.0 - tail


def t_isf(p: float, df: float) -> float:
    """The t with P(T > t) = p, for 0 < p < 0.5 (bisection to 1e-12 relative)."""
    if not 0.0 < p < 0.5:
        raise ValueError(f"t_isf takes 0 < p < 0.5, got {p}")
    low, high = 0.0, 1.0
    while t_sf(high, df) > p:
        low, high = high, high * 2.0
    while high - low > 1e-12 * high:
        middle = (low + high) / 2.0
        if t_sf(middle, df) > p:
            low = middle
        else:
            high = middle
    return (low + high) / 2.0
