"""How strict each look at A/B rounds must be, so that looking after every round keeps the
false-alarm rate (a group-sequential design with an alpha-spending function).

The rounds of a confirmation are judged after each one from the second on. Judged each time
at the full false-alarm rate, a benchmark that is unchanged would be called a change far more
often than that rate; judged each time at the rate divided by the looks (Bonferroni), it is
called one less often than the rate allows, since the looks share most of their rounds: the
statistic after round k and after round k + 1 are nearly the same number. The exact levels
follow from that sharing: after k of K rounds, the rounds' mean difference is a random walk
sampled at k / K of its course. Each look may spend a part of the rate, and the parts add up to
it: `spent(t)` of the rate by the fraction t of the rounds (Hwang, Shih and DeCani's family),
and each look's boundary is found by integrating the walk's density, stopped at the earlier
boundaries, over a fine grid (Armitage, McPherson and Rowe's recursion).

`SPENDING_GAMMA` sets how the rate is spread: 1 spends it nearly evenly (Pocock's boundaries),
large negative values keep it for the last rounds (O'Brien and Fleming's). -2 sits between:
the first looks are slightly stricter than Bonferroni's, the last far less strict, so a
benchmark that needs every round the budget holds is judged nearly at the plain rate.

Those boundaries are exact for a statistic whose variance is known. The rounds' t learns its
variance from the rounds, and one low estimate makes every look of that benchmark too bold:
at 1% over 20 looks, t tests at the boundaries' levels cross 1.14% of the time. So the
spending is scaled down until t tests of the rounds so far (two sides, pooled variance, 2k - 2
degrees of freedom after k rounds) cross at the rate (`look_levels`): seeded random rounds, the
same for every call, so the levels are a pure function of the plan. The rule's t has more
degrees of freedom than that (moderation lends the suite's), so it crosses a little less.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import signal, stats

SPENDING_GAMMA = -2.0
GRID_STEP = 0.005  # of the walk's scale at the last round; boundaries good to about 1e-3
GRID_EDGE = 10.0


def spent(alpha: float, fraction: float, gamma: float = SPENDING_GAMMA) -> float:
    """The share of `alpha` spent by the fraction `fraction` (0..1) of the rounds."""
    t = min(max(fraction, 0.0), 1.0)
    if gamma == 0:
        return alpha * t
    return alpha * math.expm1(-gamma * t) / math.expm1(-gamma)


CALIBRATION_WALKS = 50_000  # the rate is met to about 5% of itself (up to 20 rounds)
CALIBRATION_CELLS = 1_000_000  # walks x rounds: longer plans take fewer walks
CALIBRATION_SEED = 20261127


@lru_cache(maxsize=64)
def look_levels(rounds: int, alpha: float, first: int = 2,
                gamma: float = SPENDING_GAMMA) -> tuple[float, ...]:
    """The one-sided level of each look of a t test, after rounds `first`, ..., `rounds` of
    `rounds` planned: an unchanged benchmark crosses one of them with probability `alpha` in
    all (one direction), given rounds that are alike and independent. They are
    `known_variance_levels` for a smaller rate, the one at which t tests of seeded rounds
    cross at `alpha`."""
    if rounds < first:
        return ()
    p_values = _t_walk_p_values(rounds, first)

    def crossing(design: float) -> float:
        levels = np.asarray(known_variance_levels(rounds, design, first, gamma))
        return float((p_values <= levels).any(axis=1).mean())

    low, high = alpha / 4, alpha
    if crossing(high) <= alpha:
        return known_variance_levels(rounds, high, first, gamma)
    for _ in range(20):  # bisection on the design rate: the crossing rises with it
        middle = (low + high) / 2
        if crossing(middle) > alpha:
            high = middle
        else:
            low = middle
    return known_variance_levels(rounds, low, first, gamma)


def _t_walk_p_values(rounds: int, first: int) -> np.ndarray:
    """One-sided p of the pooled two-sample t after each of rounds `first`..`rounds`, for
    seeded runs of unchanged rounds (rows; `CALIBRATION_WALKS`, fewer for long plans)."""
    walks = min(CALIBRATION_WALKS, CALIBRATION_CELLS // rounds)
    rng = np.random.default_rng(CALIBRATION_SEED)
    base = rng.standard_normal((walks, rounds))
    head = rng.standard_normal((walks, rounds))
    k = np.arange(1, rounds + 1)

    def running(x):
        total, squares = np.cumsum(x, axis=1), np.cumsum(x * x, axis=1)
        mean = total / k
        with np.errstate(invalid="ignore", divide="ignore"):
            variance = (squares - k * mean * mean) / (k - 1)
        return mean, variance

    (mb, vb), (mh, vh) = running(base), running(head)
    looks = slice(first - 1, rounds)
    df = 2 * k[looks] - 2
    t = (mh - mb)[:, looks] / np.sqrt((vb + vh)[:, looks] / k[looks])
    return stats.t.sf(t, df)


@lru_cache(maxsize=256)
def known_variance_levels(rounds: int, alpha: float, first: int = 2,
                          gamma: float = SPENDING_GAMMA) -> tuple[float, ...]:
    """The one-sided level of each look of a statistic whose variance is known (a z): the
    boundaries of the spending function, by recursive integration (see the module)."""
    if rounds < first:
        return ()
    steps = int(round(GRID_EDGE / GRID_STEP))
    grid = np.arange(-steps, steps + 1) * GRID_STEP
    density: np.ndarray | None = None  # of the walk at the last look, below its boundaries
    before, used, levels = 0.0, 0.0, []
    for k in range(first, rounds + 1):
        t = k / rounds
        if density is None:
            density = stats.norm.pdf(grid, scale=math.sqrt(t))
        else:
            kernel = stats.norm.pdf(grid, scale=math.sqrt(t - before)) * GRID_STEP
            density = np.clip(signal.fftconvolve(density, kernel, mode="same"), 0.0, None)
        share = spent(alpha, t, gamma) - used
        cells = (density[1:] + density[:-1]) / 2 * GRID_STEP
        above = np.concatenate([np.cumsum(cells[::-1])[::-1], [0.0]])  # mass above each point
        if share <= 0 or not above[0] > share:
            bound = grid[-1]
        else:
            bound = float(np.interp(share, above[::-1], grid[::-1]))  # above falls with b
        levels.append(float(stats.norm.sf(bound / math.sqrt(t))))
        used += share
        density = np.where(grid <= bound, density, 0.0)
        before = t
    return tuple(levels)


def conditional_power(z: float, fraction: float, final_z: float) -> float:
    """The chance that the last look's z passes `final_z`, given `z` after `fraction` of the
    planned rounds and a true change as large as the rounds read so far (the current trend:
    the rounds' running sum a random walk with that drift). Used for futility: rounds that
    would hardly call a change of what they read are not worth the rest of the budget."""
    if fraction >= 1:
        return float(z >= final_z)
    if fraction <= 0:
        return 1.0
    return float(stats.norm.sf((final_z - z / math.sqrt(fraction)) / math.sqrt(1 - fraction)))
