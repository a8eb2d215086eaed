"""The rule that turns two sets of samples into a verdict on one benchmark.

For a benchmark measured in R_base runs on the baseline and R_head runs on the head, the
change is a *regression* (or an *improvement*, the same rule mirrored) only when all hold:

0. the run-to-run noise is known: at least `min_history` trusted runs of history on the
   head's fingerprint (or base and head measured side by side in A/B mode, whose rounds teach
   the noise). Otherwise a change of at least the minimum effect is *inconclusive* with the
   reason "not enough history (N runs; M needed)";
1. the within-run samples differ: Mann-Whitney U, two-sided, p < `alpha` (0.001), on one
   value per worker process (the median of its samples) when the runs were spread over
   several processes, else on the pooled per-iteration samples. When the processes are too
   few for any p below `alpha` to be possible, this condition is left to condition 2;
2. the change is large against the run-to-run noise learned from history:
   z = (ln(r) - shift) / (s * sqrt(1/R_base + 1/R_head)) beyond t_df(`z`), where s is the
   tail-aware, suite-pooled spread of ln(per-run median) (see `noise.py`) learned from n
   runs, and t_df(`z`) (`t_threshold`) is the Student-t quantile with df = n - 1 at the tail
   probability a normal z of `z` (3) has: 19.2 from 3 runs, 6.6 from 5, 4.1 from 10, 3.4
   from 20. `shift` is the run-level shift of the whole suite (`shift.py`; 0 when unknown);
3. |ln r - shift| >= ln(1 + minimum effect) (2% by default, configurable per suite or metric).

r is the ratio of the medians, head / base; with several runs a side each side's median is
the geometric mean of its per-run medians, which is the quantity the z formula's variance
describes. Ratios (speedups, memory ratios) are compared in log space like everything else.
Direction comes from the metric table: for a lower-is-better metric r > 1 is worse, for a
higher-is-better metric r < 1 is worse. With fewer than `confident_history` (10) runs of
history (and no A/B rounds) a verdict is labelled low-confidence.

A change of at least the minimum effect that fails condition 0, 1 or 2 is *inconclusive*;
a smaller change is *unchanged*.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from functools import lru_cache

import numpy as np

from torch_bench.analyze.noise import NoiseEstimate
from torch_bench.analyze.student_t import normal_sf, t_isf


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
    min_history: int = 5
    confident_history: int = 10
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


@lru_cache(maxsize=1024)
def t_threshold(z: float, df: float) -> float:
    """The |z| a change must exceed when s has `df` degrees of freedom: the Student-t
    quantile at the one-sided tail probability of a normal `z` (infinite without df)."""
    if df <= 0:
        return math.inf
    return t_isf(normal_sf(z), df)


def not_enough_history(runs: int, needed: int) -> str:
    return f"not enough history ({runs} runs; {needed} needed)"


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
    threshold: float | None = None  # the |z| that had to be exceeded
    shift: float = 0.0  # the run-level shift (log) the change was judged relative to
    within_test: str = "iterations"  # "iterations", "processes" or "too few processes"
    reason: str | None = None  # why an inconclusive verdict is inconclusive
    side_by_side: bool = False  # the noise came from A/B rounds, not from history

    @property
    def change(self) -> float:
        """Relative change of the value, head vs base (+0.05 = 5% higher)."""
        return self.ratio - 1.0

    @property
    def relative_ratio(self) -> float:
        """The ratio once the run-level shift is taken out."""
        return self.ratio / math.exp(self.shift)


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


def smallest_p_value(n_base: int, n_head: int) -> float:
    """The smallest two-sided Mann-Whitney p-value n_base against n_head values can give."""
    log_arrangements = (math.lgamma(n_base + n_head + 1) - math.lgamma(n_base + 1)
                        - math.lgamma(n_head + 1))
    return min(1.0, 2.0 * math.exp(-log_arrangements))


def process_medians(samples: Sequence[float], process_sizes: Sequence[int] | None) -> list[float]:
    """One value per worker process: the median of each process's consecutive chunk of
    `samples`. One process (no sizes, or sizes that do not add up) gives the run's median."""
    if not process_sizes or sum(process_sizes) != len(samples) or len(process_sizes) < 2:
        return [run_median(samples)]
    bounds = np.cumsum([0, *process_sizes])
    return [run_median(samples[a:b]) for a, b in zip(bounds[:-1], bounds[1:], strict=True)
            if b > a]


@dataclass(frozen=True)
class WithinRun:
    """The values the within-run test compares, and what they are."""

    base: np.ndarray
    head: np.ndarray
    kind: str  # "iterations" or "processes"


def within_run_values(base_runs: Sequence[Sequence[float]], head_runs: Sequence[Sequence[float]],
                      base_processes: Sequence[Sequence[int] | None] = (),
                      head_processes: Sequence[Sequence[int] | None] = ()) -> WithinRun:
    """Per-process medians when any run was spread over several processes, else the pooled
    per-iteration samples (one process per run: the only within-run values there are)."""
    several = any(sizes and len(sizes) > 1 for sizes in (*base_processes, *head_processes))
    if not several:
        return WithinRun(np.concatenate([np.asarray(r, dtype=float) for r in base_runs]),
                         np.concatenate([np.asarray(r, dtype=float) for r in head_runs]),
                         "iterations")

    def side(runs, sizes):
        sizes = list(sizes) + [None] * (len(runs) - len(sizes))
        return np.array([m for run, s in zip(runs, sizes, strict=True)
                         for m in process_medians(run, s)], dtype=float)

    return WithinRun(side(base_runs, base_processes), side(head_runs, head_processes),
                     "processes")


def assess(
    base_runs: Sequence[Sequence[float]],
    head_runs: Sequence[Sequence[float]],
    noise: NoiseEstimate,
    *,
    lower_is_better: bool,
    policy: RulePolicy = DEFAULT_POLICY,
    min_effect: float | None = None,
    z_threshold: float | None = None,
    shift: float = 0.0,
    base_processes: Sequence[Sequence[int] | None] = (),
    head_processes: Sequence[Sequence[int] | None] = (),
) -> Assessment:
    """Apply the rule to one benchmark. `base_runs`/`head_runs` hold each run's samples
    (`*_processes`: each run's process sizes, when known); `noise` the run-to-run spread
    learned from recent base-branch runs (or A/B rounds); `shift` the run-level shift in
    log space."""
    keep = [i for i, r in enumerate(base_runs) if len(r)]
    keep_h = [i for i, r in enumerate(head_runs) if len(r)]
    base_processes = [base_processes[i] if i < len(base_processes) else None for i in keep]
    head_processes = [head_processes[i] if i < len(head_processes) else None for i in keep_h]
    base_runs, head_runs = [base_runs[i] for i in keep], [head_runs[i] for i in keep_h]
    if not base_runs or not head_runs:
        raise ValueError("assess needs at least one run with samples on each side")
    base_median, head_median = side_median(base_runs), side_median(head_runs)
    ratio = head_median / base_median if base_median > 0 else math.inf
    log_ratio = math.log(ratio) if 0 < ratio < math.inf else math.copysign(math.inf, ratio - 1)
    relative = log_ratio - shift
    effect = min_effect if min_effect is not None else policy.min_effect
    nominal = z_threshold if z_threshold is not None else policy.z
    enough = noise.spread is not None and (noise.side_by_side
                                           or noise.runs >= policy.min_history)
    z = threshold = None
    if enough:
        scale = noise.spread * math.sqrt(1 / len(base_runs) + 1 / len(head_runs))
        z = relative / scale if scale > 0 else math.copysign(math.inf, relative or 1)
        z = 0.0 if relative == 0 else z
        threshold = t_threshold(nominal, noise.degrees_of_freedom)
    values = within_run_values(base_runs, head_runs, base_processes, head_processes)
    within = values.kind
    p_value = mann_whitney_p(values.base, values.head)
    if within == "processes" and smallest_p_value(values.base.size,
                                                  values.head.size) >= policy.alpha:
        within, p_value = "too few processes", None
    outcome = decide(relative, p_value, z, effect, policy.alpha, threshold or math.inf,
                     lower_is_better, within_required=within != "too few processes")
    low_confidence = not noise.side_by_side and noise.runs < policy.confident_history
    reason = None
    if outcome is Outcome.UNSURE:
        reason = (not_enough_history(noise.runs, policy.min_history) if not enough
                  else "within the run-to-run noise" if z is not None and abs(z) <= threshold
                  else "samples do not differ significantly")
    return Assessment(outcome, ratio, base_median, head_median, p_value, z, noise.spread,
                      noise.runs, effect, low_confidence, threshold,
                      shift, within, reason, noise.side_by_side)


def decide(log_ratio: float, p_value: float | None, z: float | None, min_effect: float,
           alpha: float, threshold: float, lower_is_better: bool, *,
           within_required: bool = True) -> Outcome:
    """The conditions; pure and vectorisable by callers that need speed. `z` None means the
    noise is unknown (condition 0 failed)."""
    if abs(log_ratio) < math.log1p(min_effect):
        return Outcome.SAME
    differs = (p_value is not None and p_value < alpha) or not within_required
    beyond_noise = z is not None and abs(z) > threshold
    if not (differs and beyond_noise):
        return Outcome.UNSURE
    worse = log_ratio > 0 if lower_is_better else log_ratio < 0
    return Outcome.WORSE if worse else Outcome.BETTER
