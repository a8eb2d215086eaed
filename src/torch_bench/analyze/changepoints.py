"""Change points in a benchmark's history.

    find_change_points(values: Sequence[float]) -> list[ChangePoint]

`values` is one benchmark's series on the main branch, oldest first (positive numbers: per-run
medians). The series is searched in log space with PELT (`ruptures`), L1 cost (robust to the
odd spike), every index a candidate (jump 1), segments of at least 3 points, and penalty

    2 ln(n) x sigma,   sigma = 1.4826 x MAD(diff(ln values)) / sqrt(2)

the robust point-to-point noise of the series (differencing removes the steps themselves).
A change whose segment medians differ by less than 2% is dropped and its two segments merged.

A spike is not a step: two or three outliers close together can form a minimum-size segment of
their own, which PELT then cuts out as "up, then down". An interior segment of at most
`MAX_TRANSIENT` (5) points whose neighbours' medians agree within 2% is a transient, not two
changes: it is merged back into its neighbours. A level that held for longer, or one that did not
return (a real step, or the newest points of the series), is kept.

Each `ChangePoint` has `index` (the first index of the new segment, so the change happened
between `values[index - 1]` and `values[index]`), `before` and `after` (medians of the
segments on either side, in the values' unit) and `ratio` (after / before).
`commit_range(point, commits)` gives the commits the change happened between: the last one
measured before it and the first one measured after it.
Results are in index order; list them newest first by reversing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

MIN_SEGMENT = 3
MIN_CHANGE = 0.02
MAX_TRANSIENT = 5  # an excursion of at most this many points that returns is not a step


@dataclass(frozen=True)
class ChangePoint:
    index: int  # first index of the new segment
    before: float  # median of the segment before
    after: float  # median of the segment from `index`
    ratio: float  # after / before

    @property
    def change(self) -> float:
        return self.ratio - 1.0


def noise_scale(logs: np.ndarray) -> float:
    """Robust standard deviation of one point, from the differences of the series."""
    diffs = np.diff(logs)
    if diffs.size == 0:
        return 0.0
    return float(1.4826 * np.median(np.abs(diffs - np.median(diffs))) / math.sqrt(2))


def penalty(logs: np.ndarray) -> float:
    return 2.0 * math.log(len(logs)) * noise_scale(logs)


def find_change_points(values: Sequence[float], *, min_change: float = MIN_CHANGE,
                       min_segment: int = MIN_SEGMENT) -> list[ChangePoint]:
    """Change points of a positive series, oldest first; see the module docstring."""
    series = np.asarray(values, dtype=float)
    if series.size < 2 * min_segment or np.any(~np.isfinite(series)) or np.any(series <= 0):
        return []
    logs = np.log(series)
    beta = penalty(logs)
    if beta <= 0:  # a flat series, or noise below float precision: any step is a change
        beta = 1e-12
    ends = _pelt_l1(logs, beta, min_segment)
    starts = _merge_small(series, [0, *ends[:-1]], min_change)
    starts = _merge_transients(series, starts, min_change)
    return [_describe(series, starts, i) for i in range(1, len(starts))]


def _pelt_l1(logs: np.ndarray, beta: float, min_segment: int) -> list[int]:
    import ruptures

    algo = ruptures.Pelt(model="l1", min_size=min_segment, jump=1).fit(logs.reshape(-1, 1))
    return list(algo.predict(pen=beta))


def _medians(series: np.ndarray, starts: list[int]) -> list[float]:
    bounds = [*starts, len(series)]
    return [float(np.median(series[a:b])) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def _merge_small(series: np.ndarray, starts: list[int], min_change: float) -> list[int]:
    """Drop the smallest change under `min_change` until none is left."""
    starts = list(starts)
    while len(starts) > 1:
        medians = _medians(series, starts)
        sizes = [abs(math.log(b / a)) for a, b in zip(medians[:-1], medians[1:], strict=True)]
        smallest = int(np.argmin(sizes))
        if sizes[smallest] >= math.log1p(min_change):
            break
        del starts[smallest + 1]
    return starts


def _merge_transients(series: np.ndarray, starts: list[int], min_change: float) -> list[int]:
    """Merge each short interior segment whose neighbours are at the same level (within
    `min_change`) into them, shortest first, until none is left."""
    starts = list(starts)
    while len(starts) > 2:
        bounds = [*starts, len(series)]
        medians = _medians(series, starts)
        transients = [
            (bounds[i + 1] - bounds[i], i) for i in range(1, len(starts) - 1)
            if bounds[i + 1] - bounds[i] <= MAX_TRANSIENT
            and abs(math.log(medians[i + 1] / medians[i - 1])) < math.log1p(min_change)]
        if not transients:
            break
        _, i = min(transients)
        del starts[i:i + 2]
        starts = _merge_small(series, starts, min_change)
    return starts


def _describe(series: np.ndarray, starts: list[int], i: int) -> ChangePoint:
    medians = _medians(series, starts)
    before, after = medians[i - 1], medians[i]
    return ChangePoint(index=starts[i], before=before, after=after, ratio=after / before)


def commit_range(point: ChangePoint, commits: Sequence[str]) -> tuple[str, str]:
    """(last commit of the old level, first commit of the new level) for a series whose
    values were measured at `commits` (same order and length as the values)."""
    return commits[point.index - 1], commits[point.index]
