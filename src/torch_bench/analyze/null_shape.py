"""What a suite's own history says about the null distribution of the rule's t: its tails and
its memory.

Under the null the head is one more run like the reference runs. Taking each reference run in
turn as if it were the head (`prediction_residuals`) shows what the head's t can do: when
those residuals are fitted better by a Student-t than by a normal (`learn_tails`), the rule
takes its p-values from that heavier tail where it is the more cautious. When consecutive runs
are correlated (`suite_autocorrelation`), the head's runs differ from the mean of the runs
before them by more than independent runs would (`memory_factor`), and the rule widens its
scale by that much. A fleet without heavy tails pays nothing for them; one without memory
seldom pays for it, and little.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from torch_bench.analyze.groups import Evidence
from torch_bench.analyze.moderation import Prior
from torch_bench.analyze.student_t import t_sf

MIN_TAIL_VALUES = 50  # fewer prediction residuals say nothing about the tails
HEAVY_TAIL_LR = 3.84  # the likelihood ratio (chi-square, 1 df, 5%) that makes tails heavy
MEMORY_LAG_SHARE = 4  # memory is read from lags 1 to n / 4 of n runs
MEMORY_GATE = 0.5  # standard errors above no memory at which memory is taken


@dataclass(frozen=True)
class Tails:
    """The null distribution of t learned from the suite's own history: Student-t with `df`
    and `scale` (None: the tails are as the test assumes)."""

    df: float | None = None
    scale: float = 1.0
    values: int = 0

    def sf(self, t: float) -> float | None:
        if self.df is None or not math.isfinite(t):
            return None
        return t_sf(t / self.scale, self.df)


AS_ASSUMED = Tails()  # the tails the t test assumes


def prediction_residuals(benchmarks: Sequence[tuple[Evidence, Prior]]) -> np.ndarray:
    """Each reference run of each benchmark taken in turn as if it were the head, against the
    others: its t with the variance learned without it (externally studentized). Under the
    null the head is one more such run, so these show what its t can do."""
    values = []
    for e, prior in benchmarks:
        if e.side_by_side or e.reference.size < 3 or e.df < 2:
            continue
        n = e.reference.size
        deviation = e.reference - e.reference.mean()
        left_ss = np.maximum(e.sum_of_squares - deviation ** 2 * n / (n - 1), 0.0)
        left_df = e.df - 1
        if prior.df > 0 and math.isfinite(prior.scale):
            variance = (prior.df * prior.scale + left_ss) / (prior.df + left_df)
        else:
            variance = left_ss / left_df
        with np.errstate(divide="ignore", invalid="ignore"):
            t = deviation * n / (n - 1) / np.sqrt(variance * (1 + 1 / (n - 1)))
        values.append(t[np.isfinite(t)])
    return np.concatenate(values) if values else np.array([])


TAIL_DFS = (1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 7.0, 10.0, 15.0, 25.0, 50.0, 100.0)


def _t_log_likelihood(x: np.ndarray, df: float) -> tuple[float, float]:
    """(log-likelihood, scale) of a zero-centred Student-t with `df` fitted to x, the scale
    by maximum likelihood (the EM fixed point of the t as a scale mixture of normals)."""
    scale2 = float(np.mean(x * x)) or 1e-300
    for _ in range(30):
        weights = (df + 1) / (df + x * x / scale2)
        scale2 = float(np.mean(weights * x * x)) or 1e-300
    const = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    ll = x.size * (const - 0.5 * math.log(scale2)) \
        - (df + 1) / 2 * float(np.log1p(x * x / (df * scale2)).sum())
    return ll, math.sqrt(scale2)


def learn_tails(residuals: np.ndarray) -> Tails:
    """A Student-t fitted to the prediction residuals by maximum likelihood (df over a grid),
    kept only when it fits them better than a normal by the likelihood-ratio test at 5%
    (heavy tails must show before they cost power)."""
    x = np.asarray(residuals, dtype=float)
    if x.size < MIN_TAIL_VALUES:
        return Tails(values=int(x.size))
    variance = float(np.mean(x * x)) or 1e-300
    normal = -0.5 * x.size * (math.log(2 * math.pi * variance) + 1)
    ll, scale, df = max(((*_t_log_likelihood(x, df), df) for df in TAIL_DFS),
                        key=lambda fit: fit[0])
    if not 2 * (ll - normal) > HEAVY_TAIL_LR:
        return Tails(values=int(x.size))
    return Tails(float(df), float(scale), int(x.size))


def white_share(e: Evidence, rho: float, variance: float | None = None) -> float:
    """The share of a benchmark's run-to-run variance that is its median's own sampling noise
    (from the head's samples), which no run remembers: only the rest carries memory. Runs
    that remember (`rho`) sit closer together than their variance, so the variance pooled
    within them says less of the part that remembers than of the part that does not. The
    rule passes the moderated `variance` (the benchmark's own pooled one by default): the
    share is a difference, and one from a few runs' variance is noisy."""
    variance = e.variance if variance is None else variance
    if not e.df or not variance > 0 or e.head_within <= 0:
        return 0.0
    white = min(e.head_within, variance)
    remembered = (variance - white) / _pooled_variance(rho, int(e.reference.size),
                                                         int(e.head.size))
    return white / (white + remembered)


def _mean_variance(rho: float, n: int) -> float:
    """The variance of the mean of n consecutive AR(1) values of unit variance."""
    lags = np.arange(1, n)
    return (n + 2 * float(np.sum((n - lags) * rho ** lags))) / n ** 2


@lru_cache(maxsize=4096)
def _pooled_variance(rho: float, n: int, k: int) -> float:
    """E[variance pooled within n reference and then k head AR(1) runs], unit variance."""
    return (n * (1 - _mean_variance(rho, n)) + k * (1 - _mean_variance(rho, k))) \
        / max(n - 1 + k - 1, 1)


@lru_cache(maxsize=1024)
def _centred_traces(rho: float, n: int, lags: int = 1) -> tuple[float, float]:
    """E[sum of products at lags 1 to `lags`] and E[sum of squares] of n mean-centred AR(1)
    runs of unit variance (exact)."""
    gaps = np.abs(np.arange(n)[:, np.newaxis] - np.arange(n)[np.newaxis, :])
    centring = np.eye(n) - 1.0 / n
    centred = centring @ (rho ** gaps) @ centring
    return float(sum(np.trace(centred, offset=h) for h in range(1, lags + 1))), \
        float(np.trace(centred))


def memory_lags(n: int) -> int:
    """The lags whose products tell the memory of n runs: lag 1 alone sees little of a slow
    drift (a random walk), which moves the level the head is compared with by much more
    than it moves neighbours apart; up to a quarter of the runs sees it, and costs little
    noise where the memory is short (AR(1) products fall as rho to the lag)."""
    return max(1, n // MEMORY_LAG_SHARE)


def expected_lag_one(rho: float, n: int, white: float = 0.0) -> float:
    """What the mean-centred lag-1 autocorrelation of n runs averages to over many series, the
    runs an AR(1) (`rho`) plus a `white` share of noise without memory: far below rho for
    short series (about -1/n for rho 0, 0.2 for rho 0.7 and n 5)."""
    products, squares = _centred_traces(rho, n)
    products0, squares0 = _centred_traces(0.0, n)
    return ((1 - white) * products + white * products0) / ((1 - white) * squares
                                                           + white * squares0)


def suite_autocorrelation(benchmarks: Sequence[Evidence], errors: float = 0.0,
                          robust: bool = False) -> float:
    """The autocorrelation of the reference runs at lags 1 to a quarter of their number
    (`memory_lags`), pooled over the suite, as the AR(1) rho of the part of each benchmark's
    noise that has memory (`white_share` has none) whose exact expectation for series of
    these lengths matches it. 0 unless the pooled value is above what runs without memory
    give by `MEMORY_GATE` (half) of its standard error, about sqrt(lags) / sqrt(values).
    Missing memory that is there costs far more than finding some that is not: with three
    head runs, a 12-benchmark suite with 5 runs of history and rho 0.7 showed none at one
    standard error in a quarter of its PRs (run CV 5%) to a half (2%), and those PRs named a
    false regression 17-35% of the time. At half a standard error (`benchmarks/
    detector_eval.py`, three head runs, 36 cells) no fleet is clearly over 5% of PRs, and a
    fleet without memory pays for some in one PR of three to five (the heavy-tailed, bimodal
    and bursty fleets' median efficiency at a 10% slowdown: 0.81, from 0.87). (A first-order
    bias correction of the raw lag-1 value, ignoring the samples' own noise, found about half
    the memory of rho 0.7.)

    Once memory is found, rho is the one whose expectation matches the pooled value plus
    `errors` standard errors. The rule takes 1, the upper end of its range: the scale grows
    fast with rho, and too small a rho (a 12-benchmark suite's estimate spreads 0.4-0.9
    around a true 0.7 at 10 runs of history) names false regressions, while too large a one
    costs a little power. With three head runs a side and 10 runs of history, in
    autocorrelated fleets at run CV 5% drawn as `benchmarks/detector_eval.py` draws them,
    the upper end took the PRs naming a false regression from 8.5% to 4.5% (the same 200
    PRs).

    `robust`: each series weighs the same and the quarters of the suite that remember most and
    least are set aside (`_robust_autocorrelation`), for a history not yet cut at its steps."""
    per_series = []  # (products, squares, evidence) of each series long enough
    values = 0
    lag_values = 0
    for e in benchmarks:
        if e.side_by_side or e.reference.size < 4 or not e.variance > 0:
            continue
        r = e.reference - e.reference.mean()
        lags = memory_lags(r.size)
        per_series.append((sum(float(np.dot(r[:-h], r[h:])) for h in range(1, lags + 1)),
                           float(np.dot(r, r)), e))
        values += r.size
        lag_values += r.size * lags
    if values < MIN_TAIL_VALUES or not any(q for _, q, _ in per_series):
        return 0.0
    if robust:
        return _robust_autocorrelation(per_series, errors)
    observed = sum(p for p, _, _ in per_series) / sum(q for _, q, _ in per_series)
    series = [e for _, _, e in per_series]

    def expected(rho: float) -> float:
        rho = round(rho, 4)
        top = bottom = 0.0
        for e in series:
            white = white_share(e, rho)
            n = int(e.reference.size)
            p, q = _centred_traces(rho, n, memory_lags(n))
            p0, q0 = _centred_traces(0.0, n, memory_lags(n))
            weight = e.variance / ((1 - white) * _pooled_variance(rho, n, int(e.head.size))
                                   + white)
            top += weight * ((1 - white) * p + white * p0)
            bottom += weight * ((1 - white) * q + white * q0)
        return top / bottom

    error = math.sqrt(lag_values) / values  # lags of about independent products
    return _matching_rho(observed, expected, error, errors)


TRIM = 0.25  # the robust estimate sets aside this share of the series at either end
TRIM_COST = 1.2  # the standard error of a mean of the middle half, over the whole mean's


def _robust_autocorrelation(per_series: list[tuple[float, float, Evidence]],
                            errors: float) -> float:
    """`suite_autocorrelation` with each series weighing the same (its own autocorrelation)
    and the `TRIM` share of the series that remember most and least set aside: a step in a
    quarter of the suite, uncut, makes those series look as if they remembered everything,
    and weighed by their sums of squares they outweigh the rest."""
    ranked = sorted((p / q, e) for p, q, e in per_series if q > 0)
    cut = int(TRIM * len(ranked))
    kept = ranked[cut:len(ranked) - cut] or ranked
    observed = float(np.mean([ratio for ratio, _ in kept]))

    def expected(rho: float) -> float:
        rho = round(rho, 4)
        found = []
        for _, e in kept:
            white = white_share(e, rho)
            n = int(e.reference.size)
            p, q = _centred_traces(rho, n, memory_lags(n))
            p0, q0 = _centred_traces(0.0, n, memory_lags(n))
            found.append(((1 - white) * p + white * p0) / ((1 - white) * q + white * q0))
        return float(np.mean(found))

    error = TRIM_COST * math.sqrt(float(np.mean(
        [memory_lags(int(e.reference.size)) / e.reference.size for _, e in kept])) / len(kept))
    return _matching_rho(observed, expected, error, errors)


def _matching_rho(observed: float, expected, error: float, errors: float) -> float:
    """0 unless `observed` is above what runs without memory give by `MEMORY_GATE` standard
    errors; else the rho whose `expected` value matches it plus `errors` standard errors."""
    if not observed > expected(0.0) + MEMORY_GATE * error:
        return 0.0
    observed += errors * error
    low, high = 0.0, 0.95
    if observed >= expected(high):
        return high
    for _ in range(20):  # the expectation rises with rho
        middle = (low + high) / 2
        low, high = (middle, high) if expected(middle) < observed else (low, middle)
    return (low + high) / 2


def mean_variance_factor(rho: float, n: int) -> float:
    """The variance of the mean of n consecutive AR(1) values over that of n independent ones
    (1 for rho <= 0)."""
    return 1.0 if rho <= 0 or n < 2 else n * _mean_variance(rho, n)


@lru_cache(maxsize=4096)
def memory_factor(rho: float, n: int, k: int = 1, white: float = 0.0) -> float:
    """For runs that remember the previous one (AR(1), `rho`, in all but a `white` share of
    their variance): the variance of the mean of k head runs (consecutive, after the
    reference runs) minus the mean of the n runs before them, over what the rule assumes (the
    variance pooled within the reference runs and within the head's, times 1/n + 1/k). Head
    runs measured one after another remember each other too, so their mean varies more than
    k independent runs', and they sit closer together than the reference runs do. 1 for
    rho = 0."""
    if rho <= 0 or n < 2 or k < 1:
        return 1.0
    gaps = np.arange(n)[:, np.newaxis] + np.arange(1, k + 1)[np.newaxis, :]  # j - i
    cross = float(np.sum(rho ** gaps)) / (n * k)
    independent = 1 / n + 1 / k
    remembered = _mean_variance(rho, k) + _mean_variance(rho, n) - 2 * cross
    true = (1 - white) * remembered + white * independent
    pooled = (1 - white) * _pooled_variance(rho, n, k) + white
    return max(1.0, true / (pooled * independent))


def memory_df(df: float, rho: float, n: int, k: int, white: float) -> float:
    """The degrees of freedom of the scale of runs that remember. The scale's variance is the
    white share's, known from the samples, plus the rest times `memory_factor`, a larger
    factor than the white part's: the pooled variance's own noise weighs more in the scale
    than in the variance, most where the white share is largest (a low variance by chance
    also reads as a larger white share). The degrees of freedom shrink by the ratio of the
    scale to what it would be with no white share. Satterthwaite's approximation for such a
    combination shrinks them by that ratio squared: measured on AR(1) runs (rho 0.7, 3 head
    runs, a white share of 0.2 to 0.8 found from each series' own variance), with the
    degrees of freedom kept p < 0.2% came 1.3 to 5.8 times as often as it should; with the
    ratio squared 0 to 0.75 times; with the ratio 0.75 to 1.2 times at 20 runs of history,
    and less often with 5 or 10 (tests/test_rule.py, `benchmarks/detector_eval.py`)."""
    if rho <= 0 or white <= 0:
        return df
    ratio = memory_factor(rho, n, k, white) / memory_factor(rho, n, k, 0.0)
    return max(df * ratio, 1.0)
