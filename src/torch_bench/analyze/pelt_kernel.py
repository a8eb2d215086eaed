"""The L1 PELT recursion of `changepoints._pelt_one`, compiled with numba.

    pelt_previous(logs, offsets, betas, min_segment) -> previous

`logs` holds many pieces end to end (piece p is logs[offsets[p]:offsets[p + 1]], each at
most `changepoints.MAX_TABLE_SEARCH` points), `betas` their penalties. `previous[offsets[p] + p
+ end]` is the start of the last segment of the best partition of piece p's first `end`
points, exactly as the table search gives it: the same recursion, pruning and tie-breaking,
and each segment's cost summed in the same order (eight accumulators over its whole blocks of
8, added as a tree, then its last partial block either one by one ("tight") or with the
accumulators ("padded"), whichever the per-step search would have used). So every cost is the
same to the last bit, and so is every decision.

Only the costs PELT asks for are computed (those of segments starting at an admissible
start), each from a sorted copy of its segment kept up to date by insertion as the segment
grows, instead of the full table of every segment. Importing this module needs numba;
without it `changepoints` falls back to its numpy table search.
"""

from __future__ import annotations

import numba
import numpy as np

BLOCK = 8
jit = numba.njit(cache=True, nogil=True)


@numba.njit(cache=True, inline="always")
def _tree(r0, r1, r2, r3, r4, r5, r6, r7):
    return ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))


@jit
def _segment_cost(x, ordered, s, end, tight):
    """sum |x[s:end] - median| as the per-step search sums it (see the module docstring);
    `ordered[:end - s]` holds x[s:end] sorted."""
    length = end - s
    median = (ordered[(length - 1) // 2] + ordered[length // 2]) / 2
    whole = length // BLOCK
    r0 = r1 = r2 = r3 = r4 = r5 = r6 = r7 = 0.0
    if whole > 0:
        r0, r1 = abs(x[s] - median), abs(x[s + 1] - median)
        r2, r3 = abs(x[s + 2] - median), abs(x[s + 3] - median)
        r4, r5 = abs(x[s + 4] - median), abs(x[s + 5] - median)
        r6, r7 = abs(x[s + 6] - median), abs(x[s + 7] - median)
        for block in range(1, whole):
            i = s + block * BLOCK
            r0, r1 = r0 + abs(x[i] - median), r1 + abs(x[i + 1] - median)
            r2, r3 = r2 + abs(x[i + 2] - median), r3 + abs(x[i + 3] - median)
            r4, r5 = r4 + abs(x[i + 4] - median), r5 + abs(x[i + 5] - median)
            r6, r7 = r6 + abs(x[i + 6] - median), r7 + abs(x[i + 7] - median)
    rest = s + whole * BLOCK
    if tight:
        total = _tree(r0, r1, r2, r3, r4, r5, r6, r7)
        for i in range(rest, end):
            total = total + abs(x[i] - median)
        return total
    left = end - rest  # the last partial block, added to the first `left` accumulators
    if left > 0:
        r0 = r0 + abs(x[rest] - median)
    if left > 1:
        r1 = r1 + abs(x[rest + 1] - median)
    if left > 2:
        r2 = r2 + abs(x[rest + 2] - median)
    if left > 3:
        r3 = r3 + abs(x[rest + 3] - median)
    if left > 4:
        r4 = r4 + abs(x[rest + 4] - median)
    if left > 5:
        r5 = r5 + abs(x[rest + 5] - median)
    if left > 6:
        r6 = r6 + abs(x[rest + 6] - median)
    return _tree(r0, r1, r2, r3, r4, r5, r6, r7)


@jit
def _insert(row, count, value):
    """Insert `value` into the sorted row[:count] (row has room for one more)."""
    i = count
    while i > 0 and row[i - 1] > value:
        row[i] = row[i - 1]
        i -= 1
    row[i] = value


@jit
def _pelt_piece(x, beta, min_segment, previous):
    m = x.size
    best = np.zeros(m + 1)
    admissible = np.empty(m + 1, np.int64)
    count = 0
    ordered = np.empty((m + 1, m))  # ordered[s]: x[s:end] sorted, for each admissible s
    totals = np.empty(m + 1)
    for end in range(min_segment, m + 1):
        for k in range(count):  # the segments of the admissible starts grow by one point
            s = admissible[k]
            _insert(ordered[s], end - 1 - s, x[end - 1])
        start = end - min_segment
        if start == 0 or start >= min_segment:
            admissible[count] = start
            count += 1
            for i in range(start, end):
                _insert(ordered[start], i - start, x[i])
        band = (end - admissible[0]) // BLOCK  # the row width the per-step search would use
        chosen = 0
        for k in range(count):
            s = admissible[k]
            cost = _segment_cost(x, ordered[s], s, end, (end - s) // BLOCK == band)
            totals[k] = best[s] + (cost + beta)
            if totals[k] < totals[chosen]:  # the first of equal totals
                chosen = k
        best[end] = totals[chosen]
        previous[end] = admissible[chosen]
        kept = 0
        for k in range(count):
            if totals[k] <= best[end] + beta:
                admissible[kept] = admissible[k]
                kept += 1
        count = kept


@numba.njit(cache=True, nogil=True, parallel=True)
def _pelt_pieces(logs, offsets, betas, min_segment, previous):
    for p in numba.prange(offsets.size - 1):  # pieces are independent
        lo, hi = offsets[p], offsets[p + 1]
        _pelt_piece(logs[lo:hi], betas[p], min_segment, previous[lo + p:hi + p + 1])


def pelt_previous(logs: np.ndarray, offsets: np.ndarray, betas: np.ndarray,
                  min_segment: int) -> np.ndarray:
    previous = np.zeros(logs.size + offsets.size - 1, np.int64)
    _pelt_pieces(np.ascontiguousarray(logs, dtype=np.float64),
                 np.ascontiguousarray(offsets, dtype=np.int64),
                 np.ascontiguousarray(betas, dtype=np.float64), min_segment, previous)
    return previous
