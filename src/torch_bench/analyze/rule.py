"""The rule that turns two sets of samples into a verdict on one benchmark.

For a benchmark measured in R_base runs on the baseline and R_head runs on the head, each run
contributing its per-iteration samples, the change is a *regression* (or an *improvement*,
the same rule mirrored) only when all three hold:

1. the per-iteration samples differ: Mann-Whitney U on the pooled samples, two-sided,
   p < `alpha` (0.001);
2. the change is large against the run-to-run noise learned from history:
   z = ln(r) / (s * sqrt(1/R_base + 1/R_head)) > `z` (3), where s is the robust spread of
   ln(per-run median) over the last 20 base-branch runs (see `noise.py`);
3. |ln r| >= ln(1 + minimum effect) (2% by default, configurable per suite or metric).

r is the ratio of the medians, head / base; with several runs a side each side's median is
the geometric mean of its per-run medians, which is the quantity the z formula's variance
describes. Ratios (speedups, memory ratios) are compared in log space like everything else.
Direction comes from the metric table: for a lower-is-better metric r > 1 is worse, for a
higher-is-better metric r < 1 is worse.

With too little history (fewer than `min_history` = 10 runs) the minimum effect becomes
`low_history_min_effect` (10%) and the verdict is labelled low-confidence; with fewer than
3 runs there is no noise estimate and condition 2 is skipped.

A change of at least the minimum effect that fails condition 1 or 2 is *inconclusive*
(too noisy to say); a smaller change is *unchanged*.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum

import numpy as np

from torch_bench.analyze.noise import NoiseEstimate


class Outcome(str, Enum):
    WORSE = "worse"
    BETTER = "better"
    SAME = "same"
    UNSURE = "unsure"


@dataclass(frozen=True)
class RulePolicy:
    """Thresholds of the rule. `min_effect_for` maps "suite", "metric" or "suite:metric" to a
    minimum effect that overrides `min_effect` (the most specific key wins)."""

    alpha: float = 0.001
    z: float = 3.0
    min_effect: float = 0.02
    min_history: int = 10
    low_history_min_effect: float = 0.10
    min_effect_for: Mapping[str, float] = field(default_factory=dict)
    # many benchmarks multiply false alarms: above this many comparisons use `large_suite_z`
    large_suite_size: int = 50
    large_suite_z: float = 4.0

    def effect_for(self, suite: str, metric: str) -> float:
        for key in (f"{suite}:{metric}", metric, suite):
            if key in self.min_effect_for:
                return self.min_effect_for[key]
        return self.min_effect

    def z_for(self, comparisons: int) -> float:
        return self.large_suite_z if comparisons > self.large_suite_size else self.z


DEFAULT_POLICY = RulePolicy()


@dataclass(frozen=True)
class Assessment:
    """What the rule saw and decided for one benchmark."""

    outcome: Outcome
    ratio: float  # head median / base median
    base_median: float
    head_median: float
    p_value: float | None
    z: float | None
    noise: float | None  # s, the run-to-run spread of ln(per-run median)
    history_runs: int
    min_effect: float  # the minimum effect that applied
    low_confidence: bool

    @property
    def change(self) -> float:
        """Relative change of the value, head vs base (+0.05 = 5% higher)."""
        return self.ratio - 1.0


def run_median(samples: Sequence[float]) -> float:
    return float(np.median(np.asarray(samples, dtype=float)))


def side_median(runs: Sequence[Sequence[float]]) -> float:
    """Geometric mean of the per-run medians (the median itself for one run)."""
    medians = np.array([run_median(r) for r in runs if len(r)], dtype=float)
    if medians.size == 1 or np.any(medians <= 0):
        return float(np.median(medians))
    return float(np.exp(np.mean(np.log(medians))))


def mann_whitney_p(base: Sequence[float], head: Sequence[float]) -> float | None:
    """Two-sided Mann-Whitney U p-value; None when either side has fewer than 2 samples or all
    samples are identical."""
    if len(base) < 2 or len(head) < 2:
        return None
    if np.ptp(np.concatenate([base, head])) == 0:
        return 1.0
    from scipy.stats import mannwhitneyu  # imported here: commands that only read stay light

    return float(mannwhitneyu(base, head, alternative="two-sided").pvalue)


def assess(
    base_runs: Sequence[Sequence[float]],
    head_runs: Sequence[Sequence[float]],
    noise: NoiseEstimate,
    *,
    lower_is_better: bool,
    policy: RulePolicy = DEFAULT_POLICY,
    min_effect: float | None = None,
    z_threshold: float | None = None,
) -> Assessment:
    """Apply the rule to one benchmark. `base_runs`/`head_runs` hold each run's samples;
    `noise` the run-to-run spread learned from recent base-branch runs."""
    base_runs = [r for r in base_runs if len(r)]
    head_runs = [r for r in head_runs if len(r)]
    if not base_runs or not head_runs:
        raise ValueError("assess needs at least one run with samples on each side")
    base_median, head_median = side_median(base_runs), side_median(head_runs)
    ratio = head_median / base_median if base_median > 0 else math.inf
    log_ratio = math.log(ratio) if 0 < ratio < math.inf else math.copysign(math.inf, ratio - 1)
    history_runs = noise.runs
    low_confidence = history_runs < policy.min_history
    effect = min_effect if min_effect is not None else policy.min_effect
    if low_confidence:
        effect = max(effect, policy.low_history_min_effect)
    z = None
    if noise.spread is not None:
        scale = noise.spread * math.sqrt(1 / len(base_runs) + 1 / len(head_runs))
        z = log_ratio / scale if scale > 0 else math.copysign(math.inf, log_ratio or 1)
        if log_ratio == 0:
            z = 0.0
    pooled_base = np.concatenate([np.asarray(r, dtype=float) for r in base_runs])
    pooled_head = np.concatenate([np.asarray(r, dtype=float) for r in head_runs])
    p_value = mann_whitney_p(pooled_base, pooled_head)
    outcome = decide(log_ratio, p_value, z, effect, policy.alpha,
                     z_threshold if z_threshold is not None else policy.z, lower_is_better)
    return Assessment(outcome, ratio, base_median, head_median, p_value, z, noise.spread,
                      history_runs, effect, low_confidence)


def decide(log_ratio: float, p_value: float | None, z: float | None, min_effect: float,
           alpha: float, z_threshold: float, lower_is_better: bool) -> Outcome:
    """The three conditions; pure and vectorisable by callers that need speed."""
    if abs(log_ratio) < math.log1p(min_effect):
        return Outcome.SAME
    differs = p_value is not None and p_value < alpha
    beyond_noise = z is None or abs(z) > z_threshold
    if not (differs and beyond_noise):
        return Outcome.UNSURE
    worse = log_ratio > 0 if lower_is_better else log_ratio < 0
    return Outcome.WORSE if worse else Outcome.BETTER
