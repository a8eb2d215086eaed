"""The rule that turns a suite's measurements into verdicts, one benchmark at a time but
judged together.

Everything is in log space (ln of per-run medians; a ratio is a difference). For each
benchmark the caller gathers its `Evidence` (`evidence.py`):
- the *reference*: the base branch's runs since the benchmark's last change point (the base
  runs among them), or the base rounds in A/B mode; the baseline level is their mean;
- the *head*: the head's runs (or rounds);
- the run-to-run variance s_j^2 with d_j degrees of freedom, pooled within the segments of
  history between change points and within the head's runs;
- the head runs' own sampling variance of their medians, from their samples: a head run
  much noisier inside than history's runs (a busy machine) is judged with that variance
  instead of history's;
timings taken relative to their run's run-level shift (`shift.py`).

1. Moderation: the suite's variances, per metric, give a prior (`moderation.py`), and each
   benchmark's variance becomes s~_j^2 with d0 + d_j degrees of freedom.
2. Test: t = (mean(head) - mean(reference)) / sqrt(s~_j^2 / n_ref + max(s~_j^2, w) / n_head),
   w the head's own sampling variance, one-sided
   p-values for "worse" and "better" from Student's t with d0 + d_j degrees of freedom.
3. Per-benchmark rate: a change is a candidate when its p < `alpha` (1%: the chance that an
   unchanged benchmark is called a regression) and it is at least the minimum effect (2% by
   default, configurable per suite or metric).
4. Per-PR rate: candidates must also be discoveries of the Benjamini-Hochberg procedure at
   `fdr` (5%) over the suite, for regressions and improvements separately
   (`multiplicity.py`), so that an unchanged PR names a false regression at most 5% of the
   time, whatever the suite's size.
A candidate that is not a discovery is *inconclusive*; everything else is *unchanged*, with
the smallest change that would have been called (`detectable`): the t a change would need at
the cutoff one more discovery needs, times the scale, and at least the minimum effect.
Without at least `min_history` reference runs (and no A/B rounds) a change of at least the
minimum effect is inconclusive: "not enough history". With fewer than `confident_history`
runs a verdict is labelled low-confidence.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from functools import lru_cache
from statistics import NormalDist

import numpy as np

from torch_bench.analyze.moderation import NO_PRIOR, Prior, fit_prior
from torch_bench.analyze.multiplicity import benjamini_hochberg, next_cutoff
from torch_bench.analyze.student_t import normal_sf, t_isf, t_sf


class Outcome(str, Enum):
    WORSE = "worse"
    BETTER = "better"
    SAME = "same"
    UNSURE = "unsure"


@dataclass(frozen=True)
class RulePolicy:
    """Thresholds of the rule. `min_effect_for` maps "suite", "metric" or "suite:metric" to a
    minimum effect that overrides `min_effect` (the most specific key wins)."""

    alpha: float = 0.01  # per benchmark: chance an unchanged one is called worse
    fdr: float = 0.05  # per PR: Benjamini-Hochberg level over the suite
    min_effect: float = 0.02
    min_history: int = 3
    confident_history: int = 10
    min_effect_for: Mapping[str, float] = field(default_factory=dict)

    def effect_for(self, suite: str, metric: str) -> float:
        for key in (f"{suite}:{metric}", metric, suite):
            if key in self.min_effect_for:
                return self.min_effect_for[key]
        return self.min_effect

    @property
    def z(self) -> float:
        """The normal z whose one-sided tail is `alpha` (for `t_threshold`)."""
        return NormalDist().inv_cdf(1.0 - self.alpha)


DEFAULT_POLICY = RulePolicy()


@lru_cache(maxsize=4096)
def t_threshold(z: float, df: float) -> float:
    """The |t| a change must exceed when s has `df` degrees of freedom: the Student-t
    quantile at the one-sided tail probability of a normal `z` (infinite without df)."""
    if df <= 0:
        return math.inf
    return t_isf(normal_sf(z), df)


@lru_cache(maxsize=4096)
def t_critical(p: float, df: float) -> float:
    """The t whose one-sided tail is `p` (infinite for p <= 0 or no degrees of freedom)."""
    if p <= 0 or df <= 0:
        return math.inf
    return t_isf(min(p, 0.5 - 1e-12), df)


def not_enough_history(runs: int, needed: int) -> str:
    return f"not enough history ({runs} runs; {needed} needed)"


@dataclass(frozen=True)
class Evidence:
    """One benchmark's data in log space (see the module docstring)."""

    reference: np.ndarray  # values whose mean is the baseline level
    head: np.ndarray  # the head's values
    sum_of_squares: float  # within-group, of every group that teaches the variance
    df: int  # its degrees of freedom
    side_by_side: bool = False  # reference and head measured interleaved (A/B)
    head_within: float = 0.0  # the head runs' own sampling variance of ln(median), mean

    @property
    def variance(self) -> float:
        return self.sum_of_squares / self.df if self.df > 0 else math.nan

    @property
    def estimate(self) -> float:
        """ln(head level / baseline level)."""
        return float(np.mean(self.head) - np.mean(self.reference))


def evidence_from_groups(reference: Sequence[float], head: Sequence[float],
                         other_groups: Sequence[Sequence[float]] = (),
                         side_by_side: bool = False, head_within: float = 0.0) -> Evidence:
    """Evidence whose variance is pooled within the reference, the head and `other_groups`
    (older segments of history)."""
    groups = [np.asarray(g, dtype=float) for g in (reference, head, *other_groups)]
    ss = sum(float(((g - g.mean()) ** 2).sum()) for g in groups if g.size > 1)
    df = sum(g.size - 1 for g in groups if g.size > 1)
    return Evidence(groups[0], groups[1], ss, df, side_by_side, head_within)


def median_sampling_variance(samples: Sequence[float]) -> float:
    """The sampling variance of ln(median) of one run's samples: (1.2533 x robust sd of
    ln(sample)) ^ 2 / n, the large-sample variance of a median. 0 with fewer than 3."""
    logs = np.log(np.asarray([v for v in samples if v > 0], dtype=float))
    if logs.size < 3:
        return 0.0
    robust_sd = 1.4826 * float(np.median(np.abs(logs - np.median(logs))))
    return (1.2533 * robust_sd) ** 2 / logs.size


@dataclass(frozen=True)
class Assessment:
    """What the rule saw and decided for one benchmark."""

    outcome: Outcome
    ratio: float  # head level / baseline level, as measured (shift included)
    base_median: float  # the baseline level (geometric mean of the reference runs)
    head_median: float
    p_value: float | None  # one-sided, in the direction of the change
    z: float | None  # the moderated t statistic
    noise: float | None  # s~, the moderated run-to-run spread of ln(per-run median)
    history_runs: int  # reference runs the level came from
    min_effect: float  # the minimum effect that applied
    low_confidence: bool
    threshold: float | None = None  # the |t| a discovery needed
    shift: float = 0.0  # the run-level shift (log) the change was judged relative to
    reason: str | None = None  # why an inconclusive verdict is inconclusive
    side_by_side: bool = False  # the noise came from A/B rounds, not from history
    df: float | None = None  # degrees of freedom of the moderated spread
    detectable: float | None = None  # smallest change (fraction) the rule would have called

    @property
    def change(self) -> float:
        """Relative change of the value, head vs base (+0.05 = 5% higher)."""
        return self.ratio - 1.0

    @property
    def relative_ratio(self) -> float:
        """The ratio once the run-level shift is taken out: what the rule judged."""
        return self.ratio / math.exp(self.shift)


@dataclass(frozen=True)
class Case:
    """A benchmark as the suite-level rule sees it."""

    evidence: Evidence | None  # None: not enough history for any test
    lower_is_better: bool
    min_effect: float
    prior_group: str  # benchmarks of one group share a prior (a metric)
    reference_runs: int  # for "not enough history"
    levels: tuple[float, float]  # (base, head) medians as shown: exp of the raw log means
    shift: float = 0.0


def fit_priors(cases: Sequence[Case]) -> dict[str, Prior]:
    groups: dict[str, list[Evidence]] = {}
    for case in cases:
        if case.evidence is not None:
            groups.setdefault(case.prior_group, []).append(case.evidence)
    return {name: fit_prior([e.variance for e in found], [e.df for e in found])
            for name, found in groups.items()}


@dataclass(frozen=True)
class _Test:
    t: float
    df: float
    scale: float
    spread: float
    p_up: float  # P(T >= t)
    p_down: float  # P(T <= t)


def _moderated(evidence: Evidence, prior: Prior) -> tuple[float, float]:
    return prior.moderate(evidence.variance if evidence.df else 0.0, evidence.df)


MIN_TAIL_VALUES = 50  # fewer prediction residuals say nothing about the tails
HEAVY_TAIL_LR = 3.84  # the likelihood ratio (chi-square, 1 df, 5%) that makes tails heavy
USE_TAIL = True


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


def prediction_residuals(cases: Sequence[Case], priors: Mapping[str, Prior]) -> np.ndarray:
    """Each reference run of each benchmark taken in turn as if it were the head, against the
    others: its t with the variance learned without it (externally studentized). Under the
    null the head is one more such run, so these show what its t can do."""
    values = []
    for case in cases:
        e = case.evidence
        if e is None or e.side_by_side or e.reference.size < 3 or e.df < 2:
            continue
        prior = priors.get(case.prior_group, NO_PRIOR)
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


def suite_autocorrelation(cases: Sequence[Case]) -> float:
    """The lag-1 autocorrelation of the reference runs, pooled over the suite and corrected
    for the bias of a short mean-centred series (about -(1 + 3 rho) / n); 0 unless clearly
    positive (beyond 2 standard errors), so that a fleet without memory pays nothing."""
    products = squares = 0.0
    values = series = 0
    for case in cases:
        e = case.evidence
        if e is None or e.side_by_side or e.reference.size < 4:
            continue
        r = e.reference - e.reference.mean()
        products += float(np.dot(r[:-1], r[1:]))
        squares += float(np.dot(r, r))
        values += r.size
        series += 1
    if not squares or values < MIN_TAIL_VALUES:
        return 0.0
    rho = products / squares
    rho += (1 + 3 * rho) / (values / series)
    return min(rho, 0.95) if rho > 2 / math.sqrt(values) else 0.0


@lru_cache(maxsize=256)
def memory_factor(rho: float, n: int) -> float:
    """For runs that remember the previous one (AR(1), `rho`): the variance of the head minus
    the mean of n runs before it, over what independent runs would give (the sample variance
    of the n runs, times 1 + 1/n). 1 for rho = 0."""
    if rho <= 0 or n < 2:
        return 1.0
    lags = np.arange(1, n)
    mean_var = (n + 2 * float(np.sum((n - lags) * rho ** lags))) / n ** 2
    cov_next = float(np.sum(rho ** np.arange(1, n + 1))) / n
    true = 1 + mean_var - 2 * cov_next
    expected_s2 = n / (n - 1) * (1 - mean_var)
    return max(1.0, true / (expected_s2 * (1 + 1 / n)))


def _t_test(evidence: Evidence, prior: Prior, tails: Tails = Tails(),
            rho: float = 0.0) -> _Test | None:
    variance, df = _moderated(evidence, prior)
    if df <= 0 or not math.isfinite(variance):
        return None
    spread = math.sqrt(variance)
    # A head run far noisier inside than history's runs were is not judged by history's noise.
    head_variance = max(variance, evidence.head_within)
    scale = math.sqrt((variance / evidence.reference.size + head_variance / evidence.head.size)
                      * memory_factor(round(rho, 3), int(evidence.reference.size)))
    estimate = evidence.estimate
    if scale > 0:
        t = estimate / scale
    else:  # a constant series: any change is beyond its noise
        t = 0.0 if estimate == 0 else math.copysign(math.inf, estimate)
    p_up = t_sf(t, df) if math.isfinite(t) else (0.0 if t > 0 else 1.0)
    p_down = t_sf(-t, df) if math.isfinite(t) else (0.0 if t < 0 else 1.0)
    if not evidence.side_by_side:  # never more lenient than the t distribution
        p_up = max(p_up, tails.sf(t) or 0.0)
        p_down = max(p_down, tails.sf(-t) or 0.0)
    return _Test(t, df, scale, spread, p_up, p_down)


def judge(cases: Sequence[Case], policy: RulePolicy = DEFAULT_POLICY,
          priors: Mapping[str, Prior] | None = None) -> list[Assessment]:
    """The rule over a suite (see the module docstring); one assessment per case."""
    priors = fit_priors(cases) if priors is None else priors
    tails = learn_tails(prediction_residuals(cases, priors)) if USE_TAIL else Tails()
    rho = suite_autocorrelation(cases)
    tests = [_t_test(c.evidence, priors.get(c.prior_group, NO_PRIOR), tails, rho)
             if c.evidence else None for c in cases]
    p_worse = np.array([math.nan if t is None else (t.p_up if c.lower_is_better else t.p_down)
                        for c, t in zip(cases, tests, strict=True)])
    p_better = np.array([math.nan if t is None else (t.p_down if c.lower_is_better else t.p_up)
                         for c, t in zip(cases, tests, strict=True)])
    worse_found = benjamini_hochberg(p_worse, policy.fdr)
    better_found = benjamini_hochberg(p_better, policy.fdr)
    cutoff = min(policy.alpha, next_cutoff(p_worse, policy.fdr))
    return [_assess_one(case, test, (p_worse[i], worse_found[i]), (p_better[i], better_found[i]),
                        cutoff, policy)
            for i, (case, test) in enumerate(zip(cases, tests, strict=True))]


def _assess_one(case: Case, test: _Test | None, worse: tuple[float, bool],
                better: tuple[float, bool], cutoff: float, policy: RulePolicy) -> Assessment:
    base, head = case.levels
    ratio = head / base if base > 0 else math.inf
    evidence = case.evidence
    side_by_side = bool(evidence and evidence.side_by_side)
    low = not side_by_side and case.reference_runs < policy.confident_history
    common = dict(ratio=ratio, base_median=base, head_median=head,
                  history_runs=case.reference_runs, min_effect=case.min_effect,
                  low_confidence=low, shift=case.shift, side_by_side=side_by_side)
    estimate = evidence.estimate if evidence is not None else math.log(ratio) - case.shift \
        if 0 < ratio < math.inf else math.copysign(math.inf, ratio - 1)
    big_enough = abs(estimate) >= math.log1p(case.min_effect)
    if test is None:
        outcome = Outcome.UNSURE if big_enough else Outcome.SAME
        reason = not_enough_history(case.reference_runs, policy.min_history) if big_enough \
            else None
        return Assessment(outcome, p_value=None, z=None, noise=None, reason=reason, **common)
    is_worse = estimate > 0 if case.lower_is_better else estimate < 0
    p, found = worse if is_worse else better
    threshold = t_critical(cutoff, test.df)
    detectable = max(math.expm1(threshold * test.scale), case.min_effect) \
        if math.isfinite(threshold) else None
    stats = dict(p_value=float(p), z=test.t, noise=test.spread, df=test.df,
                 threshold=threshold, detectable=detectable)
    if not big_enough or p >= policy.alpha:
        return Assessment(Outcome.SAME, **stats, **common)
    if not found:
        return Assessment(Outcome.UNSURE, reason=f"p = {p:.2g} on its own, not significant "
                                                 f"among the suite's benchmarks at the "
                                                 f"per-PR level ({policy.fdr:g})",
                          **stats, **common)
    return Assessment(Outcome.WORSE if is_worse else Outcome.BETTER, **stats, **common)


def run_median(samples: Sequence[float]) -> float:
    return float(np.median(np.asarray(samples, dtype=float)))


def side_median(runs: Sequence[Sequence[float]]) -> float:
    """Geometric mean of the per-run medians (the median itself for one run)."""
    medians = np.array([run_median(r) for r in runs if len(r)], dtype=float)
    if medians.size == 1 or np.any(medians <= 0):
        return float(np.median(medians))
    return float(np.exp(np.mean(np.log(medians))))


def assess(reference: Sequence[float], head: Sequence[float], *, lower_is_better: bool,
           policy: RulePolicy = DEFAULT_POLICY, min_effect: float | None = None,
           other_groups: Sequence[Sequence[float]] = (), prior: Prior = NO_PRIOR,
           side_by_side: bool = False, shift: float = 0.0) -> Assessment:
    """The rule for one benchmark on its own (no suite to borrow from or correct for):
    `reference` and `head` are per-run medians (positive, not logs)."""
    reference_logs, head_logs = np.log(reference), np.log(head) - shift
    enough = side_by_side or len(reference) >= policy.min_history
    evidence = evidence_from_groups(reference_logs, head_logs,
                                    [np.log(g) for g in other_groups], side_by_side) \
        if enough else None
    case = Case(evidence, lower_is_better,
                policy.min_effect if min_effect is None else min_effect, "", len(reference),
                (float(np.exp(reference_logs.mean())), float(np.exp(head_logs.mean() + shift))),
                shift)
    return judge([case], policy, {"": prior})[0]
