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
chunks, remembering the answer for the part of the history that can no longer change, so each
new run costs at most two chunk searches however long the history is (see the comment above it).

How the search is made fast without changing a single answer: a series of up to
`MAX_TABLE_SEARCH` points (every chunk is one) has the L1 cost of every candidate segment
computed at once, for many series together, and the PELT recursion then reads that table.
Each cost is summed in exactly the order numpy's pairwise sum uses for the per-step search
(`_pelt_l1`, kept for longer series), so every cost, and so every decision, is bit-for-bit
the same. With numba installed, a search of many pieces at once (a cold build) runs the same
recursion compiled instead (`pelt_kernel.py`), computing only the costs it asks for.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
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
    if series.size <= MAX_TABLE_SEARCH:
        [starts] = _search_pieces(series, [(0, series.size)], min_change, min_segment)
        return _describe(starts, _medians(series, starts))
    logs = np.log(series)
    ends = _pelt_l1(logs, _search_penalty(logs), min_segment)
    return _describe(*_merge(series, [0, *ends[:-1]], min_change))


def _search_penalty(logs: np.ndarray) -> float:
    beta = float(penalty(logs))
    return beta if beta > 0 else 1e-12  # a flat series, or noise below float precision: any step


def _pelt_l1(logs: np.ndarray, beta: float, min_segment: int) -> list[int]:
    """Segment ends (the last one is len(logs)) of the optimal partition under an L1 cost per
    segment (sum of |x - segment median|) plus `beta` per segment: PELT with every index a
    candidate, the recursion and pruning of ruptures' `Pelt(model="l1", jump=1)`, with the
    costs of all candidate segments ending at one index computed together."""
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


# -- Every segment's cost at once --------------------------------------------------------------
#
# `_l1_costs` sums each segment's deviations as one row of a matrix as wide as the longest
# candidate segment at that step, padded with zeros; numpy sums a row of at most 128 values
# with eight interleaved accumulators over the whole blocks of 8, added as a tree, then adds
# the rest one by one. Padding zeros change nothing except where a segment's last partial
# block of 8 is summed: with the accumulators when the row is at least one block of 8 longer
# than the segment ("padded"), otherwise one by one after them ("tight"). Both sums are
# tabulated for every segment, and the recursion picks the one `_l1_costs` would have made.

MAX_TABLE_SEARCH = 128  # numpy sums rows of up to 128 values in one block of accumulators
PIECES_PER_BATCH = 48  # pieces searched together: bounds the memory of the cost tables
BLOCK = 8  # numpy's pairwise sum: accumulators
FEW_PIECES = 3  # searched one by one in plain Python
COMPILED_BATCH = 4096  # pieces per call of the compiled search
# Fewer pieces (a one-run update: one or two per benchmark) are searched by the table search:
# compiling the recursion where no cache of it is kept (a fresh CI job) takes 5-15 s.
COMPILED_FROM = 4096


def _search_pieces(series: np.ndarray, pieces: list[tuple[int, int]], min_change: float,
                   min_segment: int) -> list[list[int]]:
    """Segment starts (relative to the piece, merged as `find_change_points` merges them) of
    each piece series[lo:hi] (at least 2 x min_segment and at most MAX_TABLE_SEARCH points),
    searched together in batches."""
    return _search_arrays([series[lo:hi] for lo, hi in pieces], min_change, min_segment)


def _search_arrays(arrays: list[np.ndarray], min_change: float,
                   min_segment: int) -> list[list[int]]:
    """`_search_pieces` of separate arrays (pieces of one series or of several)."""
    kernel = _compiled_pelt() if len(arrays) >= COMPILED_FROM else None
    if kernel is not None:
        return _search_compiled(kernel, arrays, min_change, min_segment)
    found = []
    for first in range(0, len(arrays), PIECES_PER_BATCH):
        batch = arrays[first:first + PIECES_PER_BATCH]
        width = max(piece.size for piece in batch)
        logs = [np.log(piece) for piece in batch]
        stacked = np.stack([np.pad(row, (0, width - row.size), mode="edge") for row in logs])
        beta = np.asarray([_search_penalty(row) for row in logs])
        sizes = [piece.size for piece in batch]
        for piece, ends in zip(batch, _pelt_l1_table(stacked, sizes, beta, min_segment),
                               strict=True):
            found.append(_merge(piece, [0, *ends[:-1]], min_change)[0])
    return found


@functools.cache
def _compiled_pelt():
    """`pelt_kernel.pelt_previous` (the table search's recursion, compiled), or None without
    numba."""
    try:
        from torch_bench.analyze import pelt_kernel
    except (ImportError, RuntimeError):  # no numba, or no folder to cache its compiled code in
        return None
    return pelt_kernel.pelt_previous


def _search_compiled(kernel, arrays: list[np.ndarray], min_change: float,
                     min_segment: int) -> list[list[int]]:
    """`_search_arrays` with the compiled recursion, COMPILED_BATCH pieces per call (so a
    cold build's memory does not grow with the number of pieces)."""
    found = []
    for first in range(0, len(arrays), COMPILED_BATCH):
        batch = arrays[first:first + COMPILED_BATCH]
        logs = [np.log(piece) for piece in batch]
        offsets = np.cumsum([0, *(piece.size for piece in batch)])
        betas = _search_penalties(logs)
        previous = kernel(np.concatenate(logs), offsets, betas, min_segment).tolist()
        for p, piece in enumerate(batch):
            first_end = int(offsets[p]) + p
            n, ends = piece.size, []
            while n > 0:
                ends.append(n)
                n = previous[first_end + n]
            found.append(_merge(piece, [0, *ends[:0:-1]], min_change)[0])
    return found


def _search_penalties(logs: list[np.ndarray]) -> np.ndarray:
    """`_search_penalty` of each row, rows of one length at a time (the same medians, the same
    arithmetic, in one numpy call per length instead of one per row)."""
    betas = np.empty(len(logs))
    by_size: dict[int, list[int]] = {}
    for row, values in enumerate(logs):
        by_size.setdefault(values.size, []).append(row)
    for size, rows in by_size.items():
        if size < 3:  # fewer than two differences: no noise scale to take
            betas[rows] = [_search_penalty(logs[row]) for row in rows]
            continue
        diffs = np.diff(np.stack([logs[row] for row in rows]), axis=1)
        spread = np.median(np.abs(diffs - np.median(diffs, axis=1, keepdims=True)), axis=1)
        found = 2.0 * math.log(size) * (1.4826 * spread / math.sqrt(2))
        betas[rows] = np.where(found > 0, found, 1e-12)
    return betas


def _pelt_l1_table(stacked: np.ndarray, sizes: list[int], beta: np.ndarray,
                   min_segment: int) -> list[list[int]]:
    """`_pelt_l1(row[:size], beta, min_segment)` of every row of `stacked` (rows longer than
    their size are padded): the same recursion, pruning and tie-breaking, over cost tables."""
    tight, padded = _segment_cost_tables(stacked, min_segment)
    if len(sizes) <= FEW_PIECES:  # plain Python is faster than numpy's per-call overhead
        previous = [_pelt_one(tight[row].T.tolist(), padded[row].T.tolist(), n,
                              float(beta[row]), min_segment)
                    for row, n in enumerate(sizes)]
    else:
        previous = _pelt_together(tight, padded, beta, min_segment).tolist()
    all_ends = []
    for row, n in enumerate(sizes):
        ends = []
        while n > 0:
            ends.append(n)
            n = previous[row][n]
        all_ends.append(ends[::-1])
    return all_ends


def _pelt_one(tight: list[list[float]], padded: list[list[float]], m: int, beta: float,
              min_segment: int) -> list[int]:
    """Start of the last segment of the best partition of each prefix of one row, with the
    costs tight[end][start] and padded[end][start]."""
    best = [0.0] * (m + 1)
    previous = [0] * (m + 1)
    admissible: list[int] = []
    for end in range(min_segment, m + 1):
        start = end - min_segment
        if start == 0 or start >= min_segment:
            admissible.append(start)
        band = (end - admissible[0]) // BLOCK  # the row width `_l1_costs` would use
        tight_here, padded_here = tight[end], padded[end]
        totals = [best[s] + ((tight_here[s] if (end - s) // BLOCK == band else padded_here[s])
                             + beta) for s in admissible]
        best[end] = min(totals)
        previous[end] = admissible[totals.index(best[end])]  # the first of equal totals
        admissible = [s for s, total in zip(admissible, totals, strict=True)
                      if total <= best[end] + beta]
    return previous


def _pelt_together(tight: np.ndarray, padded: np.ndarray, beta: np.ndarray,
                   min_segment: int) -> np.ndarray:
    """`_pelt_one` of every row at once: previous[row, end]."""
    count, m = tight.shape[0], tight.shape[1] - 1
    rows = np.arange(count)
    best = np.full((count, m + 1), np.inf)
    best[:, 0] = 0.0
    previous = np.zeros((count, m + 1), dtype=np.int64)
    admissible = np.zeros((count, m + 1), dtype=bool)
    for end in range(min_segment, m + 1):
        start = end - min_segment
        if start == 0 or start >= min_segment:
            admissible[:, start] = True
        width = end - admissible.argmax(axis=1)
        is_tight = (width // BLOCK)[:, None] == (end - np.arange(end)) // BLOCK
        costs = np.where(is_tight, tight[:, :end, end], padded[:, :end, end])
        totals = np.where(admissible[:, :end], best[:, :end] + (costs + beta[:, None]), np.inf)
        chosen = totals.argmin(axis=1)
        best[:, end] = totals[rows, chosen]
        previous[:, end] = chosen
        admissible[:, :end] &= totals <= (best[:, end] + beta)[:, None]
    return previous


def _segment_cost_tables(stacked: np.ndarray, min_segment: int) -> tuple[np.ndarray, np.ndarray]:
    """(tight, padded)[row, start, end]: sum |x - median| of stacked[row, start:end], for every
    segment of at least `min_segment` points, summed as numpy sums a row that ends with the
    segment's last block of 8 (tight) or has more zeros after it (padded); see above."""
    count, m = stacked.shape
    tight = np.full((count, m + 1, m + 1), np.inf)
    padded = np.full((count, m + 1, m + 1), np.inf)
    # Each row followed by -inf and +inf, gathered as padding around segments to sort them.
    extended = np.concatenate([stacked, np.full((count, 1), -np.inf),
                               np.full((count, 1), np.inf)], axis=1)
    for whole_blocks in range(min_segment // BLOCK, m // BLOCK + 1):
        layout = _band_layout(m, max(whole_blocks * BLOCK, min_segment))
        if layout is None:
            continue
        starts, lengths, gather, outside = layout
        width = gather.shape[1]
        values = np.take(extended, gather, axis=1)  # (count, segments, width)
        # With as many -inf as +inf around each segment (one more +inf for an odd count),
        # its median sits at the middle of the row for every segment length.
        middle = np.sort(values, axis=2)
        low = middle[:, :, width // 2 - 1]
        high = np.where(lengths % 2 == 0, middle[:, :, width // 2], low)
        deviations = np.abs(np.subtract(values, ((low + high) / 2)[:, :, None], out=values),
                            out=values)
        deviations[:, outside] = 0.0
        accumulators = deviations[:, :, 0:BLOCK]
        for block in range(1, whole_blocks):
            accumulators = accumulators + deviations[:, :, block * BLOCK:(block + 1) * BLOCK]
        if whole_blocks == 0:
            accumulators = np.zeros_like(accumulators)
        last = deviations[:, :, whole_blocks * BLOCK:(whole_blocks + 1) * BLOCK]
        one_by_one = _accumulator_tree(accumulators)
        for j in range(min(BLOCK, int(lengths.max()) - whole_blocks * BLOCK)):
            one_by_one = one_by_one + last[:, :, j]  # the rest, one by one
        tight[:, starts, starts + lengths] = one_by_one
        padded[:, starts, starts + lengths] = _accumulator_tree(accumulators + last)
    return tight, padded


def _accumulator_tree(accumulators: np.ndarray) -> np.ndarray:
    """((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7)) over the last axis."""
    while accumulators.shape[-1] > 1:
        accumulators = accumulators[..., 0::2] + accumulators[..., 1::2]
    return accumulators[..., 0]


@functools.lru_cache(maxsize=256)
def _band_layout(m: int, shortest: int):
    """Every segment of a series of m points with a length from `shortest` to the end of its
    block of 8: starts, lengths, and for each a row of (blocks + 1) x 8 indexes into the series
    followed by -inf (index m) and +inf (m + 1): the segment's values first, then as many
    -inf as +inf (one more +inf for an odd length); with which columns are outside it."""
    longest = min((shortest // BLOCK + 1) * BLOCK - 1, m)
    if shortest > longest:
        return None
    lengths = np.concatenate([np.full(m - n + 1, n) for n in range(shortest, longest + 1)])
    starts = np.concatenate([np.arange(m - n + 1) for n in range(shortest, longest + 1)])
    width = (shortest // BLOCK + 1) * BLOCK
    columns = np.arange(width)[None, :]
    below = lengths[:, None] + (width - lengths[:, None]) // 2
    gather = np.where(columns < lengths[:, None], starts[:, None] + columns,
                      np.where(columns < below, m, m + 1))
    return starts, lengths, gather, columns >= lengths[:, None]


# -- Merging small and transient changes, and describing the segments ---------------------------

def _median(values: np.ndarray) -> float:
    """`np.median` of a 1-D array to the last bit, without its overhead on short arrays: the
    middle value, or (a + b) / 2 of the middle two, as np.mean sums and divides them."""
    ordered = np.sort(values)
    middle = ordered.size // 2
    if ordered.size % 2:
        return float(ordered[middle])
    return float((ordered[middle - 1] + ordered[middle]) / 2)


def _medians(series: np.ndarray, starts: list[int]) -> list[float]:
    bounds = [*starts, len(series)]
    return [_median(series[a:b]) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def _merge(series: np.ndarray, starts: list[int],
           min_change: float) -> tuple[list[int], list[float]]:
    """Small changes merged, then transients: the segments `find_change_points` reports, as
    their starts and medians."""
    starts = list(starts)
    medians = _medians(series, starts)
    _merge_small(series, starts, medians, min_change)
    _merge_transients(series, starts, medians, min_change)
    return starts, medians


def _merge_small(series: np.ndarray, starts: list[int], medians: list[float],
                 min_change: float) -> None:
    """Drop the smallest change under `min_change` until none is left (in place; `medians`
    are those of the segments and are kept up to date)."""
    limit = math.log1p(min_change)
    sizes = [abs(math.log(b / a)) for a, b in zip(medians[:-1], medians[1:], strict=True)]
    while sizes:
        smallest = min(range(len(sizes)), key=sizes.__getitem__)  # the first of equal sizes
        if sizes[smallest] >= limit:
            break
        del starts[smallest + 1]
        end = starts[smallest + 1] if smallest + 1 < len(starts) else len(series)
        medians[smallest:smallest + 2] = [_median(series[starts[smallest]:end])]
        del sizes[smallest]
        if smallest > 0:
            sizes[smallest - 1] = abs(math.log(medians[smallest] / medians[smallest - 1]))
        if smallest < len(sizes):
            sizes[smallest] = abs(math.log(medians[smallest + 1] / medians[smallest]))


def _merge_transients(series: np.ndarray, starts: list[int], medians: list[float],
                      min_change: float) -> None:
    """Merge each short interior segment whose neighbours are at the same level (within
    `min_change`) into them, shortest first, until none is left (in place, as above)."""
    limit = math.log1p(min_change)
    while len(starts) > 2:
        bounds = [*starts, len(series)]
        transients = [
            (bounds[i + 1] - bounds[i], i) for i in range(1, len(starts) - 1)
            if bounds[i + 1] - bounds[i] <= MAX_TRANSIENT
            and abs(math.log(medians[i + 1] / medians[i - 1])) < limit]
        if not transients:
            break
        _, i = min(transients)
        del starts[i:i + 2]
        medians[i - 1:i + 2] = [_median(series[bounds[i - 1]:bounds[i + 2]])]
        _merge_small(series, starts, medians, min_change)


def _describe(starts: list[int], medians: list[float]) -> list[ChangePoint]:
    return [ChangePoint(index=starts[i], before=medians[i - 1], after=medians[i],
                        ratio=medians[i] / medians[i - 1]) for i in range(1, len(starts))]


def commit_range(point: ChangePoint, commits: Sequence[str]) -> tuple[str, str]:
    """(last commit of the old level, first commit of the new level) for a series whose
    values were measured at `commits` (same order and length as the values)."""
    return commits[point.index - 1], commits[point.index]


# -- The whole history at a flat cost --------------------------------------------------------
#
# A long series is searched in fixed chunks: chunk k owns the indexes [k*STRIDE, (k+1)*STRIDE)
# and is searched over [k*STRIDE - CONTEXT, (k+1)*STRIDE + CONTEXT), so a step near either edge
# is seen with points on both sides; only change points in its own indexes are kept. A chunk
# is complete once the series reaches past the end of its search range: from then on its
# values never change. The complete chunks of a series cover its first
# `k*STRIDE + CONTEXT` values (its settled part); the change points they found are remembered
# under a hash of those values (key "settled:..."). The next call on the grown series looks
# up its own settled part, or one a few chunks shorter, and searches only the chunks after
# it: the newest, open chunk on every call, plus one that just completed. Chunk boundaries
# depend only on the index, never on when the series was analysed, so the result is the same
# with a warm or a cold memo. The segments are then described (and small or transient
# changes merged) over the whole series. The final segment starts of the whole series are
# remembered too (key "whole:..."), so a series that did not change since the last call (a
# benchmark the newest run did not measure) costs one hash and no search at all.

STRIDE = 25
CONTEXT = 25
LOOKBACK_CHUNKS = 8  # settled parts up to this many chunks shorter are looked up
# Part of every memo key: change it when the search or the keys change.
# "2": chunk entries keyed by the chunk's values. "3": one "settled" entry per series.
MEMO_VERSION = "3"


class ChangePointMemo:
    """Change points of settled parts of series and segment starts of whole series, keyed by
    a hash of their values. Plain data (`entries` maps key -> indexes), so it can be kept as
    JSON between builds; `used` collects the keys looked up, to drop stale entries."""

    def __init__(self, entries: dict[str, list[int]] | None = None):
        self.entries: dict[str, list[int]] = dict(entries or {})
        self.used: set[str] = set()
        self.searches = 0  # chunk searches actually run

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
    return find_change_points_many([values], memo, min_change=min_change,
                                   min_segment=min_segment)[0]


def find_change_points_many(histories: Sequence[Sequence[float]],
                            memo: ChangePointMemo | None = None, *,
                            min_change: float = MIN_CHANGE,
                            min_segment: int = MIN_SEGMENT) -> list[list[ChangePoint]]:
    """`find_change_points_whole` of each history, with the pieces that need a search
    searched together (a build that adds one run to a thousand histories runs one batched
    search instead of a thousand small ones). The same answers, the same memo."""
    memo = memo if memo is not None else ChangePointMemo()
    params = f"{min_change!r}:{min_segment}"
    answers: list[list[ChangePoint] | None] = []
    pending = []  # (history index, series, starts, todo, complete, settled key)
    for index, values in enumerate(histories):
        series = np.ascontiguousarray(values, dtype=float)
        if series.size < 2 * min_segment or np.any(~np.isfinite(series)) or np.any(series <= 0):
            answers.append([])
            continue
        complete = _complete_chunks(series.size)
        settled_keys, whole = _memo_keys(series, complete, params)
        memo.used.update((whole, settled_keys[complete]) if complete else (whole,))
        remembered = memo.entries.get(whole)
        if remembered and remembered[0] == 0 and _ascending_within(remembered, 0, series.size):
            answers.append(_describe(remembered, _medians(series, remembered)))
            continue
        known = next(k for k in sorted(settled_keys, reverse=True) if k == 0 or
                     _ascending_within(memo.entries.get(settled_keys[k]), 1, k * STRIDE))
        starts = [0, *memo.entries[settled_keys[known]]] if known else [0]
        todo = _chunks(series.size, known)
        memo.searches += len(todo)
        pending.append((index, series, starts, todo, complete, settled_keys, whole))
        answers.append(None)
    pieces = _search_arrays([series[lo:hi] for _, series, _, todo, *_ in pending
                             for _, _, lo, hi in todo], min_change, min_segment)
    position = 0
    for index, series, starts, todo, complete, settled_keys, whole in pending:
        found_all = pieces[position:position + len(todo)]
        position += len(todo)
        for (owned_start, owned_end, lo, _), found in zip(todo, found_all, strict=True):
            starts.extend(lo + i for i in found[1:] if owned_start <= lo + i < owned_end)
        if complete:
            open_start = todo[-1][0]
            memo.entries[settled_keys[complete]] = [i for i in starts[1:] if i < open_start]
        merged, medians = _merge(series, sorted(set(starts)), min_change)
        memo.entries[whole] = merged
        answers[index] = _describe(merged, medians)
    return answers  # type: ignore[return-value]


def _ascending_within(indexes: list[int] | None, low: int, high: int) -> bool:
    """Whether a remembered entry can be one this search wrote (a damaged one is ignored)."""
    return (indexes is not None and all(low <= i < high for i in indexes)
            and all(a < b for a, b in itertools.pairwise(indexes)))


def _memo_keys(series: np.ndarray, complete: int, params: str) -> tuple[dict[int, str], str]:
    """Keys of the settled parts of `series` with `complete` chunks and a few less
    ({chunks: key}, 0 chunks has no entry), and of the whole series, from one pass of the
    hash over its values."""
    data = memoryview(series).cast("B")
    digest = hashlib.sha1()
    done = 0
    keys = {0: ""}
    for chunks in range(max(complete - LOOKBACK_CHUNKS, 1), complete + 1):
        end = (chunks * STRIDE + CONTEXT) * series.itemsize
        digest.update(data[done:end])
        done = end
        keys[chunks] = f"settled:{params}:{MEMO_VERSION}:{digest.copy().hexdigest()[:20]}"
    digest.update(data[done:])
    return keys, f"whole:{params}:{MEMO_VERSION}:{digest.hexdigest()[:20]}"


def _complete_chunks(n: int) -> int:
    """How many chunks of a series of n are complete: (k + 1) * STRIDE + CONTEXT < n."""
    return max(0, (n - CONTEXT - 1) // STRIDE)


def _chunks(n: int, first: int = 0) -> list[tuple[int, int, int, int]]:
    """(owned start, owned end, search start, search end) of each chunk of a series of n from
    chunk `first` on: complete chunks first, then one open chunk owning everything after them."""
    complete = _complete_chunks(n)
    chunks = [(k * STRIDE, (k + 1) * STRIDE, max(k * STRIDE - CONTEXT, 0),
               (k + 1) * STRIDE + CONTEXT) for k in range(first, complete)]
    chunks.append((complete * STRIDE, n, max(complete * STRIDE - CONTEXT, 0), n))
    return chunks
