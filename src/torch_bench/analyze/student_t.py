"""Student-t and normal tail probabilities and quantiles, as the verdict rule uses them: the
t quantile a z statistic must exceed when its noise was estimated from few runs. scipy's
special functions (Cephes) compute them; these names say which tail is meant and refuse the
probabilities the rule never asks for. scipy is imported at the first call, so that a command
that only imports the rule's module (`site --help`, the dashboard's templates) does not wait
for it; `comment` and `store` never import analyze."""

from __future__ import annotations


def normal_sf(z: float) -> float:
    """P(Z > z) for a standard normal Z."""
    from scipy import special

    return float(special.ndtr(-z))


def t_sf(t: float, df: float) -> float:
    """P(T > t) for Student's t with `df` degrees of freedom."""
    from scipy import special

    return float(special.stdtr(df, -t))


def t_isf(p: float, df: float) -> float:
    """The t with P(T > t) = p, for 0 < p < 0.5."""
    if not 0.0 < p < 0.5:
        raise ValueError(f"t_isf takes 0 < p < 0.5, got {p}")
    from scipy import special

    return -float(special.stdtrit(df, p))
