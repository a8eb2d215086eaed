"""The rule that turns a suite's measurements into verdicts, one benchmark at a time but
judged together.

Everything is in log space (ln of per-run medians; a ratio is a difference). For each
benchmark the caller gathers its `Evidence` (`evidence.py`):
- the *reference*: the base branch's runs since the benchmark's last change point (the base
  runs among them), or the base rounds in A/B mode; the baseline level is their mean;
- the *head*: the head's runs (or rounds);
- the run-to-run variance s_j^2 with d_j degrees of freedom, pooled within the segments of
  history between change points and within the head's runs;
- the head runs' and the reference runs' own sampling variances of their medians, from
  their samples: a head run noisier inside than history's runs (a busy machine) has the
  difference added to the run-to-run variance (`Evidence.head_variance`);
timings taken relative to their run's run-level shift (`shift.py`).

1. Moderation: the suite's variances, per metric, give a prior (`moderation.py`), and each
   benchmark's variance becomes s~_j^2 with d0 + d_j degrees of freedom.
2. Test: t = (mean(head) - mean(reference)) / sqrt(s~_j^2 / n_ref + v_h / n_head), v_h =
   max(s~_j^2, max(s~_j^2 - w_r, 0) + w_h), w_h and w_r the head's and the reference runs' own
   sampling variances (`Evidence.head_variance`), one-sided
   p-values for "worse" and "better" from Student's t with d0 + d_j degrees of freedom.
   When the suite's own history shows heavier tails or runs that remember the previous one,
   the p-values and the scale follow what it shows (`null_shape.py`).
3. Per-benchmark rate: a change is a candidate when its p < `alpha` (1%: the chance that an
   unchanged benchmark is called a regression) and it is at least the minimum effect (2% by
   default, configurable per suite or metric).
4. Per-PR rate: candidates must also be discoveries of the Benjamini-Hochberg procedure at
   `fdr` (5%) over the suite, for regressions and improvements separately
   (`multiplicity.py`), less the whole run's share when its shift is tested beside them
   (`RulePolicy.family_level`: 1%, so 4%), so that an unchanged PR names a false
   regression at most 5% of the time, whatever the suite's size.
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

from torch_bench.analyze.groups import Evidence, evidence_from_groups
from torch_bench.analyze.moderation import NO_PRIOR, Prior, fit_prior
from torch_bench.analyze.multiplicity import benjamini_hochberg, next_cutoff
from torch_bench.analyze.null_shape import (
    AS_ASSUMED,
    Tails,
    learn_tails,
    memory_df,
    memory_factor,
    prediction_residuals,
    suite_autocorrelation,
    white_share,
)
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
    def whole_run_level(self) -> float:
        """The whole run's share of the per-PR level: its test's own rate, the false-alarm
        rate, and at most half the level. The benchmarks' family has the rest, so that
        together they name a false regression at most at the per-PR level."""
        return min(self.alpha, self.fdr / 2)

    def family_level(self, beside_whole_run: bool) -> float:
        """The benchmarks' Benjamini-Hochberg level: the per-PR level, less the whole run's
        share when its test is beside them (at 1, no correction, there is nothing to share)."""
        if not beside_whole_run or self.fdr >= 1:
            return self.fdr
        return self.fdr - self.whole_run_level

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


def growth(log_change: float) -> float:
    """exp(x) - 1, infinite where it would overflow (a tiny rate's threshold on a noisy
    history)."""
    return math.expm1(log_change) if log_change < 709.0 else math.inf


def not_enough_history(runs: int, needed: int) -> str:
    return f"not enough history ({runs} runs; {needed} needed)"


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


def _t_test(evidence: Evidence, prior: Prior, tails: Tails = AS_ASSUMED,
            rho: float = 0.0) -> _Test | None:
    variance, df = _moderated(evidence, prior)
    if df <= 0 or not math.isfinite(variance):
        return None
    n, k = int(evidence.reference.size), int(evidence.head.size)
    white = round(white_share(evidence, rho, variance), 2) if rho > 0 else 0.0
    df = memory_df(df, rho, n, k, white)
    spread = math.sqrt(variance)
    head_variance = evidence.head_variance(variance)
    scale = math.sqrt((variance / n + head_variance / k) * memory_factor(rho, n, k, white))
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
          priors: Mapping[str, Prior] | None = None,
          memory: float | None = None, level: float | None = None) -> list[Assessment]:
    """The rule over a suite (see the module docstring); one assessment per case. `memory`:
    the runs' AR(1) rho when the caller reads it from more than these cases' own series (the
    whole run's shift, one series, reads it from the suite's timings). `level`: the
    Benjamini-Hochberg level, by default the per-PR level (less the whole run's share when
    its test is beside these, `RulePolicy.family_level`)."""
    level = policy.fdr if level is None else level
    priors = fit_priors(cases) if priors is None else priors
    tested = [(c.evidence, priors.get(c.prior_group, NO_PRIOR)) for c in cases if c.evidence]
    tails = learn_tails(prediction_residuals(tested))
    # the upper end of the memory's range: too little memory names false regressions
    rho = round(suite_autocorrelation([e for e, _ in tested], errors=1.0), 3) \
        if memory is None else memory
    tests = [_t_test(c.evidence, priors.get(c.prior_group, NO_PRIOR), tails, rho)
             if c.evidence else None for c in cases]
    p_worse = np.array([math.nan if t is None else (t.p_up if c.lower_is_better else t.p_down)
                        for c, t in zip(cases, tests, strict=True)])
    p_better = np.array([math.nan if t is None else (t.p_down if c.lower_is_better else t.p_up)
                         for c, t in zip(cases, tests, strict=True)])
    worse_found = benjamini_hochberg(p_worse, level)
    better_found = benjamini_hochberg(p_better, level)
    cutoff = min(policy.alpha, next_cutoff(p_worse, level))
    return [_assess_one(case, test, (p_worse[i], worse_found[i]), (p_better[i], better_found[i]),
                        cutoff, policy, level)
            for i, (case, test) in enumerate(zip(cases, tests, strict=True))]


def _assess_one(case: Case, test: _Test | None, worse: tuple[float, bool],
                better: tuple[float, bool], cutoff: float, policy: RulePolicy,
                level: float) -> Assessment:
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
    detectable = max(growth(threshold * test.scale), case.min_effect) \
        if math.isfinite(threshold) else None
    stats = dict(p_value=float(p), z=test.t, noise=test.spread, df=test.df,
                 threshold=threshold, detectable=detectable)
    if not big_enough or p >= policy.alpha:
        return Assessment(Outcome.SAME, **stats, **common)
    if not found:
        at = f"per-PR level ({policy.fdr:g})" if level == policy.fdr else \
            f"benchmarks' share ({level:g}) of the per-PR level ({policy.fdr:g})"
        return Assessment(Outcome.UNSURE, reason=f"p = {p:.2g} on its own, not significant "
                                                 f"among the suite's benchmarks at the {at}",
                          **stats, **common)
    return Assessment(Outcome.WORSE if is_worse else Outcome.BETTER, **stats, **common)


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
