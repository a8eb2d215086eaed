"""Whether a change the dashboard shows is beyond run-to-run noise, judged with the verdict
rule's own noise estimate and thresholds (analyze/noise.py, analyze/rule.py), so the pages
never colour a change the rule would call noise.

A table cell compares one run with one run, so the rule's z test becomes
|ln r| > t x s x sqrt(1/1 + 1/1), where t is the rule's threshold for s learned from n runs
(a Student-t quantile that widens as n shrinks, `rule.t_threshold`); the change must also
reach the rule's minimum effect. The noise s is learned from the newest baseline-branch points
before the newest point, since the last change point when enough points follow it (a step is
not noise; with fewer, each point of the window is taken relative to its own segment's
median). With fewer runs than `BAND_MIN_RUNS` (5) nothing
is coloured, as the rule calls such changes inconclusive.

Pure functions; no I/O.
"""

from __future__ import annotations

import bisect
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from torch_bench.analyze.noise import HISTORY_WINDOW, NoiseEstimate
from torch_bench.analyze.rule import DEFAULT_POLICY, RulePolicy, t_threshold
from torch_bench.render.markers import ChangeMark, baseline_positions
from torch_bench.render.model import Series

MIN_NOISE_RUNS = 3  # the fewest runs a spread is estimated from (noise.robust_log_spread)
# A table colours many single-run comparisons at once, with no per-page correction: it
# colours only what is beyond z = 3 (0.13% per cell) from at least 5 runs, stricter than a PR
# verdict, so a page of a thousand cells is not speckled with chance colours.
BAND_Z = 3.0
BAND_MIN_RUNS = 5


@dataclass(frozen=True)
class NoiseBand:
    spread: float | None  # s: run-to-run spread of ln(median); None when unknown
    runs: int  # how many runs s was learned from
    z: float  # the |z| a change must exceed: the rule's t threshold for these runs
    min_effect: float

    @property
    def log_half_width(self) -> float | None:
        """Largest |ln(new / old)| between two single runs that is still noise."""
        return None if self.spread is None else self.z * self.spread * math.sqrt(2)

    @property
    def percent(self) -> float | None:
        """The band's upper edge as a percentage change."""
        width = self.log_half_width
        return None if width is None else math.expm1(width) * 100

    def describe(self) -> str:
        """The hover text of a coloured or neutral change."""
        if self.spread is None:
            return (f"noise unknown: {self.runs} baseline run(s), {BAND_MIN_RUNS} "
                    f"needed; "
                    f"not coloured")
        return (f"noise band ±{self.percent:.1f}% (t {self.z:.3g} × s {self.spread * 100:.2f}% "
                f"× √2, s from {self.runs} runs); minimum effect {self.min_effect * 100:g}%")


def noise_band(series: Series, baseline_branch: str | None, marks: Sequence[ChangeMark] = (),
               policy: RulePolicy = DEFAULT_POLICY) -> NoiseBand:
    medians = noise_medians(series, baseline_branch, marks)
    if len(medians) < BAND_MIN_RUNS:  # too few since the step: use the runs around it
        medians = step_free_ratios(series, baseline_branch, marks)
    estimate = NoiseEstimate.from_medians(medians)
    min_effect = policy.effect_for(series.suite, series.metric)
    if estimate.runs < BAND_MIN_RUNS or estimate.spread is None:
        return NoiseBand(None, estimate.runs, BAND_Z, min_effect)
    threshold = t_threshold(BAND_Z, estimate.degrees_of_freedom)
    return NoiseBand(estimate.spread, estimate.runs, threshold, min_effect)


def noise_medians(series: Series, baseline_branch: str | None,
                  marks: Sequence[ChangeMark] = ()) -> list[float]:
    """Baseline-branch medians before the newest point (all branches when it has none), since
    the newest change point when at least 3 of them follow it, newest `HISTORY_WINDOW`."""
    positions = baseline_positions(series, baseline_branch, len(series.points) - 1)
    if marks:
        since = positions[positions >= max(m.index for m in marks)]
        if len(since) >= MIN_NOISE_RUNS:
            positions = since
    return series.points.median[positions[-HISTORY_WINDOW:]].tolist()


def step_free_ratios(series: Series, baseline_branch: str | None,
                     marks: Sequence[ChangeMark]) -> list[float]:
    """The newest `HISTORY_WINDOW` baseline-branch medians before the newest point, each
    divided by the median of its own segment between change points, so that the steps
    themselves are not taken for noise."""
    positions = baseline_positions(series, baseline_branch, len(series.points) - 1)
    starts = sorted(m.index for m in marks)
    segments: dict[int, list[float]] = {}
    for i in positions[-HISTORY_WINDOW:].tolist():
        segments.setdefault(bisect.bisect_right(starts, i), []).append(
            float(series.points.median[i]))
    ratios = []
    for values in segments.values():
        middle = statistics.median(values)
        ratios.extend(value / middle for value in values if middle > 0)
    return ratios


def change_css(change: float | None, direction: str, band: NoiseBand) -> str:
    """'better' or 'worse' for a change beyond noise and the minimum effect, else 'same'."""
    width = band.log_half_width
    if change is None or width is None or change <= -1:
        return "same"
    if abs(math.log1p(change)) <= width or abs(change) < band.min_effect:
        return "same"
    better = change < 0 if direction == "lower" else change > 0
    return "better" if better else "worse"
