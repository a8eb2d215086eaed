"""Empirical Bayes moderation of per-benchmark variances (Smyth 2004, limma's moderated t).

A suite measures many benchmarks a few runs each. Each benchmark's run-to-run variance s_j^2,
with d_j degrees of freedom, is a poor estimate on its own; the suite's variances together
say what variances look like on this machine. They are modelled as draws from a scaled
inverse chi-square prior with d0 degrees of freedom and scale s0^2, fitted to the suite by
moments of log s_j^2 (`fit_prior`). A benchmark's moderated variance is then

    s~_j^2 = (d0 s0^2 + d_j s_j^2) / (d0 + d_j)

with d0 + d_j degrees of freedom: pulled toward the suite both ways, by an amount the suite's
own spread of variances decides (d0 is large when the benchmarks are alike, near 0 when they
are not), and the t test that uses it gains the prior's degrees of freedom.

digamma and its derivatives are scipy's (imported on first use, as student_t.py does);
trigamma's inverse, which scipy does not have, is limma's Newton iteration.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

MAX_PRIOR_DF = 1e6  # a prior this sure is as good as known; keeps t functions finite


def digamma(x) -> np.ndarray:
    from scipy import special

    return special.digamma(np.asarray(x, dtype=float))


def trigamma(x) -> np.ndarray:
    from scipy import special

    return special.polygamma(1, np.asarray(x, dtype=float))


def tetragamma(x) -> np.ndarray:
    from scipy import special

    return special.polygamma(2, np.asarray(x, dtype=float))


def trigamma_inverse(y: float) -> float:
    """The x > 0 with trigamma(x) = y (Newton's method on 1/trigamma, as limma does)."""
    if y > 1e7:
        return 1.0 / math.sqrt(y)
    if y < 1e-6:
        return 1.0 / y
    x = 0.5 + 1.0 / y
    for _ in range(50):
        tri = float(trigamma(x))
        step = tri * (1.0 - tri / y) / float(tetragamma(x))
        x += step
        if -step / x < 1e-8:
            break
    return x


@dataclass(frozen=True)
class Prior:
    """The suite's prior on a benchmark's variance: `df` (d0) and `scale` (s0^2)."""

    df: float
    scale: float

    def moderate(self, variance: float, df: float) -> tuple[float, float]:
        """(moderated variance, its degrees of freedom) of one benchmark."""
        if self.df <= 0 or not math.isfinite(self.scale):
            return variance, df
        total = self.df + df
        return (self.df * self.scale + df * variance) / total, total


NO_PRIOR = Prior(0.0, math.nan)
MIN_VARIANCES = 3  # fewer benchmarks cannot say how variances vary


def fit_prior(variances, dfs) -> Prior:
    """d0 and s0^2 from the benchmarks' variances and their degrees of freedom, by moments of
    log variance (limma's fitFDist). Variances of 0 (a constant series) or with no degrees of
    freedom are left out; with fewer than `MIN_VARIANCES` left, there is no prior.

    d0 is capped at the benchmarks' median degrees of freedom: the suite lends a benchmark at
    most as much as it has of its own. Variances that differ in ways an inverse chi-square
    does not describe (some benchmarks simply noisier than others) otherwise make the deepest
    tails too thin: 1.5x the nominal rate at p < 0.001 in `benchmarks/detector_eval.py`'s
    fleets, and too many false alarms per PR once the suite is corrected for."""
    s2 = np.asarray(variances, dtype=float)
    d = np.asarray(dfs, dtype=float)
    usable = (d > 0) & np.isfinite(s2) & (s2 > 0)
    s2, d = s2[usable], d[usable]
    if s2.size < MIN_VARIANCES:
        return NO_PRIOR
    e = np.log(s2) - digamma(d / 2) + np.log(d / 2)
    mean = float(e.mean())
    spread = float(((e - mean) ** 2).sum() / (e.size - 1) - trigamma(d / 2).mean())
    most = min(MAX_PRIOR_DF, float(np.median(d)))
    if spread <= 0:
        return Prior(most, math.exp(mean))
    df0 = min(2.0 * trigamma_inverse(spread), most)
    scale = math.exp(mean + float(digamma(df0 / 2)) - math.log(df0 / 2))
    return Prior(df0, scale)
