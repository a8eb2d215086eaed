"""Change points in a benchmark's history.

    find_change_points(values: Sequence[float]) -> list[ChangePoint]

`values` is one benchmark's series on the main branch, oldest first (positive numbers: per-run
medians). The series is searched in log space with PELT (as `ruptures` runs it), L1 cost
(robust to the odd spike), every index a candidate (jump 1), segments of at least 3 points,
and penalty

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

`find_change_points_whole(values, memo)` searches a whole history of any length in fixed
chunks, remembering the answer of every chunk that can no longer change, so each new run costs
at most two chunk searches however long the history is (see the comment above it).
"""

from __future__ import annotations

import hashlib
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
    """Segment ends (the last one is len(logs)) of the optimal partition under an L1 cost per
    segment (sum of |x - segment median|) plus `beta` per segment: PELT with every index a
    candidate, the recursion and pruning of ruptures' `Pelt(model="l1", jump=1)`, with the
    costs of all candidate segments ending at one index computed together (10x faster)."""
    n = logs.size
    best = {0: 0.0}  # cost of the best partition of logs[:end]
    previous = {0: 0}  # where its last segment starts
    admissible: list[int] = []
    for end in [*range(min_segment, n), n]:
        start = end - min_segment
        if start == 0 or start >= min_segment:  # a partition can end there
            admissible.append(start)
        totals = np.asarray([best[s] for s in admissible]) + (
            _l1_costs(logs, np.asarray(admissible), end) + beta)
        k = int(np.argmin(totals))
        best[end], previous[end] = float(totals[k]), admissible[k]
        admissible = [s for s, total in zip(admissible, totals, strict=True)
                      if total <= best[end] + beta]
    ends = []
    while n > 0:
        ends.append(n)
        n = previous[n]
    return ends[::-1]


def _l1_costs(logs: np.ndarray, starts: np.ndarray, end: int) -> np.ndarray:
    """sum |x - median(x)| of each segment logs[start:end]."""
    lengths = end - starts
    columns = np.arange(int(lengths.max()))
    inside = columns[None, :] < lengths[:, None]
    segments = np.where(inside, logs[np.minimum(starts[:, None] + columns, end - 1)], np.inf)
    ordered = np.sort(segments, axis=1)
    rows = np.arange(starts.size)
    medians = (ordered[rows, (lengths - 1) // 2] + ordered[rows, lengths // 2]) / 2
    return np.where(inside, np.abs(segments - medians[:, None]), 0.0).sum(axis=1)


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


# -- The whole history at a flat cost --------------------------------------------------------
#
# A long series is searched in fixed chunks: chunk k owns the indexes [k*STRIDE, (k+1)*STRIDE)
# and is searched over [k*STRIDE - CONTEXT, (k+1)*STRIDE + CONTEXT), so a step near either edge
# is seen with points on both sides; only change points in its own indexes are kept. A chunk
# is complete once the series reaches the end of its search range: from then on its values
# never change, so its answer is remembered under a hash of those values. The newest,
# incomplete chunk is searched on every call. Chunk boundaries depend only on the index, never
# on when the series was analysed, so the result is the same with a warm or a cold memo. The
# segments are then described (and small or transient changes merged) over the whole series.
# The final segment starts of the whole series are remembered too (key "whole:..."), so a
# series that did not change since the last call (a benchmark the newest run did not measure)
# costs no search at all.

STRIDE = 25
CONTEXT = 25
MEMO_VERSION = "2"  # part of every memo key: change it when the search itself changes


def chunk_key(values: np.ndarray) -> str:
    digest = hashlib.sha1(np.ascontiguousarray(values, dtype=float).tobytes())
    return f"{MEMO_VERSION}:{digest.hexdigest()[:20]}"


class ChangePointMemo:
    """Owned change points of complete chunks, keyed by the hash of the chunk's values. Plain
    data (`entries` maps key -> owned indexes relative to the chunk start), so it can be kept
    as JSON between builds; `used` collects the keys looked up, to drop stale entries."""

    def __init__(self, entries: dict[str, list[int]] | None = None):
        self.entries: dict[str, list[int]] = dict(entries or {})
        self.used: set[str] = set()
        self.searches = 0  # chunk searches actually run (memo misses and open chunks)

    def kept(self) -> dict[str, list[int]]:
        """The entries used since this memo was made, in a stable order."""
        return {key: self.entries[key] for key in sorted(self.used) if key in self.entries}


def find_change_points_whole(values: Sequence[float], memo: ChangePointMemo | None = None, *,
                             min_change: float = MIN_CHANGE,
                             min_segment: int = MIN_SEGMENT) -> list[ChangePoint]:
    """Change points over the whole of a positive series, oldest first, at a cost that stays
    flat as the series grows when `memo` is kept between calls. Same result with or without
    a memo; a series shorter than STRIDE + CONTEXT is searched in one piece, exactly as
    `find_change_points` does."""
    series = np.asarray(values, dtype=float)
    if series.size < 2 * min_segment or np.any(~np.isfinite(series)) or np.any(series <= 0):
        return []
    memo = memo if memo is not None else ChangePointMemo()
    whole = f"whole:{min_change!r}:{min_segment}:{chunk_key(series)}"
    if whole in memo.entries:  # the same series as before: nothing to search
        memo.used.add(whole)
        for _, _, lo, hi in _chunks(series.size)[:-1]:
            if (key := chunk_key(series[lo:hi])) in memo.entries:
                memo.used.add(key)  # still needed once the series grows
        starts = memo.entries[whole]
        return [_describe(series, starts, i) for i in range(1, len(starts))]
    starts = [0]
    for owned_start, owned_end, lo, hi in _chunks(series.size):
        piece = series[lo:hi]
        key = chunk_key(piece) if hi < series.size else None  # complete: values are final
        if key is not None and key in memo.entries:
            found = memo.entries[key]
        else:
            memo.searches += 1
            found = [c.index + lo - owned_start
                     for c in find_change_points(piece, min_change=min_change,
                                                 min_segment=min_segment)
                     if owned_start <= c.index + lo < owned_end]
            if key is not None:
                memo.entries[key] = found
        if key is not None:
            memo.used.add(key)
        starts.extend(owned_start + i for i in found)
    starts = _merge_small(series, sorted(set(starts)), min_change)
    starts = _merge_transients(series, starts, min_change)
    memo.entries[whole] = starts
    memo.used.add(whole)
    return [_describe(series, starts, i) for i in range(1, len(starts))]


def _chunks(n: int) -> list[tuple[int, int, int, int]]:
    """(owned start, owned end, search start, search end) of each chunk of a series of n:
    complete chunks first, then one open chunk owning everything after them."""
    chunks = []
    k = 0
    while (k + 1) * STRIDE + CONTEXT < n:
        chunks.append((k * STRIDE, (k + 1) * STRIDE, max(k * STRIDE - CONTEXT, 0),
                       (k + 1) * STRIDE + CONTEXT))
        k += 1
    chunks.append((k * STRIDE, n, max(k * STRIDE - CONTEXT, 0), n))
    return chunks
