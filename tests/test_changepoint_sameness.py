"""The fast change-point search gives the answers of the per-step search it replaced.

The replaced implementation is kept below, unchanged except for its names, as the oracle:
cold and warm whole-history searches and single searches are compared with it over seeded
series of every shape the dashboard meets (steps, spikes, transients, flat and constant runs,
tied values), and over series Hypothesis draws.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from torch_bench.analyze.changepoints import (
    ChangePoint,
    ChangePointMemo,
    find_change_points,
    find_change_points_many,
    find_change_points_whole,
)

MIN_SEGMENT = 3
MIN_CHANGE = 0.02
MAX_TRANSIENT = 5


def assert_same(found: list[ChangePoint], expected: list[ChangePoint]) -> None:
    assert [c.index for c in found] == [c.index for c in expected]
    for got, want in zip(found, expected, strict=True):
        assert (got.before, got.after, got.ratio) == pytest.approx(
            (want.before, want.after, want.ratio), rel=1e-12)


def draw_series(rng: np.random.Generator, n: int) -> np.ndarray:
    """A positive series: noise at one of several levels, then some of: steps up and down,
    spikes, a transient level, a constant run, values rounded so that many tie."""
    values = 10 * np.exp(rng.normal(0.0, rng.choice([0.0005, 0.01, 0.05]), n))
    for _ in range(int(rng.integers(0, 4))):
        values[int(rng.integers(0, n)):] *= rng.choice([0.7, 0.9, 0.97, 1.015, 1.03, 1.1, 1.6])
    shape = rng.integers(0, 6)
    if shape == 1:  # spikes, alone or close together
        spikes = rng.integers(0, n, size=max(1, n // 25))
        values[spikes] *= rng.choice([1.5, 3.0])
        values[np.minimum(spikes + 2, n - 1)] *= 1.8
    elif shape == 2:  # a transient level of 1 to 8 points
        at = int(rng.integers(1, n - 1))
        values[at:at + int(rng.integers(1, 9))] *= rng.choice([0.8, 1.3])
    elif shape == 3:  # a constant run
        at = int(rng.integers(0, n))
        values[at:at + int(rng.integers(3, 60))] = values[at]
    elif shape == 4:  # coarse values: many ties
        values = np.round(values, int(rng.integers(0, 2)))
        values[values <= 0] = 1.0
    elif shape == 5:  # entirely flat, then perhaps one step
        values = np.full(n, 5.0)
        if rng.random() < 0.5:
            values[int(rng.integers(0, n)):] = 5.5
    return values


LENGTHS = [*range(6, 131, 3), 150, 199, 257, 333, 400]


@pytest.mark.parametrize("n", LENGTHS)
def test_a_single_search_gives_the_same_change_points(n):
    rng = np.random.default_rng(1000 + n)
    for _ in range(3):
        values = draw_series(rng, n)
        assert_same(find_change_points(values), oracle_find_change_points(values))


@pytest.mark.parametrize("n", [*range(6, 131, 7), 199, 257, 333, 400, 1000, 1234])
def test_a_cold_whole_history_search_gives_the_same_change_points(n):
    rng = np.random.default_rng(2000 + n)
    for _ in range(1 if n >= 1000 else 2):
        values = draw_series(rng, n)
        assert_same(find_change_points_whole(values), oracle_find_change_points_whole(values))


@pytest.mark.parametrize("seed", range(4))
def test_a_memo_kept_while_the_series_grows_gives_the_same_change_points(seed):
    """Growth by one run at a time, by a few, past one and several chunks at once, and with
    the memo kept as JSON between builds, as the dashboard keeps it."""
    rng = np.random.default_rng(3000 + seed)
    values = draw_series(rng, 420)
    memo, oracle_memo = ChangePointMemo(), OracleMemo()
    n = 20
    while n <= values.size:
        series = values[:n]
        assert_same(find_change_points_whole(series, memo),
                    oracle_find_change_points_whole(series, oracle_memo))
        memo = ChangePointMemo(json.loads(json.dumps(memo.kept())))
        oracle_memo = OracleMemo(oracle_memo.kept())
        n += int(rng.choice([1, 1, 1, 2, 7, 26, 60, 240]))


@pytest.mark.parametrize("seed", range(3))
def test_many_histories_searched_together_give_each_one_its_own_change_points(seed):
    """As the dashboard searches them: all benchmarks at once, growing together, a memo kept
    between builds; short, flat and invalid histories among them."""
    rng = np.random.default_rng(5000 + seed)
    histories = [draw_series(rng, int(rng.integers(2, 400))) for _ in range(60)]
    histories[3] = np.ones(50)
    histories[4] = np.asarray([1.0, -1.0, 2.0, 2.0, 2.0, 2.0, 2.0])
    memo, oracle_memo = ChangePointMemo(), OracleMemo()
    for grow in (0, 1, 1, 30):
        grown = [h[:max(h.size - 30 + grow, 2)] for h in histories] if grow < 30 else histories
        found = find_change_points_many(grown, memo)
        for history, answer in zip(grown, found, strict=True):
            assert_same(answer, oracle_find_change_points_whole(history, oracle_memo))
        memo = ChangePointMemo(json.loads(json.dumps(memo.kept())))
        oracle_memo = OracleMemo(oracle_memo.kept())


def test_the_same_series_again_is_answered_from_the_memo_with_the_same_change_points():
    rng = np.random.default_rng(4)
    values = draw_series(rng, 700)
    values[300:] *= 1.2
    memo = ChangePointMemo()
    first = find_change_points_whole(values, memo)
    again = ChangePointMemo(memo.kept())
    assert_same(find_change_points_whole(values, again), first)
    assert again.searches == 0
    assert_same(first, oracle_find_change_points_whole(values))


def test_every_tabulated_cost_is_the_per_step_sum_to_the_last_bit():
    """Exact equality on purpose: PELT keeps the first of equal totals, and two sums of the
    same deviations in different orders can differ in the last bit, so a table summed in
    another order could split a tie differently on tied or constant values."""
    from torch_bench.analyze.changepoints import BLOCK, _l1_costs, _segment_cost_tables

    rng = np.random.default_rng(5)
    for m in [6, 7, 8, 9, 16, 17, 50, 75, 128]:
        rows = np.log(np.stack([draw_series(rng, m) for _ in range(3)]))
        tight, padded = _segment_cost_tables(rows, MIN_SEGMENT)
        for row in range(rows.shape[0]):
            for end in range(MIN_SEGMENT, m + 1):
                starts = np.sort(rng.choice(end - MIN_SEGMENT + 1,
                                            size=int(rng.integers(1, end - MIN_SEGMENT + 2)),
                                            replace=False))
                width = end - starts[0]
                table = [tight[row, s, end] if width // BLOCK == (end - s) // BLOCK
                         else padded[row, s, end] for s in starts]
                assert table == _l1_costs(rows[row], starts, end).tolist()


@st.composite
def level_series(draw):
    """Levels of a few runs each, with or without noise, coarse enough to tie."""
    levels = draw(st.lists(st.tuples(st.integers(1, 40), st.sampled_from([1.0, 2.0, 2.05, 3.0])),
                           min_size=1, max_size=6))
    noise = draw(st.sampled_from([0.0, 0.001, 0.02]))
    seed = draw(st.integers(0, 2**16))
    values = np.concatenate([np.full(length, level) for length, level in levels])
    values = values * np.exp(np.random.default_rng(seed).normal(0.0, noise, values.size))
    if draw(st.booleans()):
        values = np.round(values, 2)
    return values


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(level_series())
def test_any_series_gives_the_change_points_of_the_per_step_search(values):
    assert_same(find_change_points(values), oracle_find_change_points(values))
    assert_same(find_change_points_whole(values), oracle_find_change_points_whole(values))


# -- The search as it was before the cost tables (the oracle) ---------------------------------

def noise_scale(logs: np.ndarray) -> float:
    """Robust standard deviation of one point, from the differences of the series."""
    diffs = np.diff(logs)
    if diffs.size == 0:
        return 0.0
    return float(1.4826 * np.median(np.abs(diffs - np.median(diffs))) / math.sqrt(2))


def penalty(logs: np.ndarray) -> float:
    return 2.0 * math.log(len(logs)) * noise_scale(logs)


def oracle_find_change_points(values: Sequence[float], *, min_change: float = MIN_CHANGE,
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


STRIDE = 25
CONTEXT = 25
MEMO_VERSION = "oracle"


def chunk_key(values: np.ndarray) -> str:
    digest = hashlib.sha1(np.ascontiguousarray(values, dtype=float).tobytes())
    return f"{MEMO_VERSION}:{digest.hexdigest()[:20]}"


class OracleMemo:
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


def oracle_find_change_points_whole(values: Sequence[float], memo: OracleMemo | None = None, *,
                             min_change: float = MIN_CHANGE,
                             min_segment: int = MIN_SEGMENT) -> list[ChangePoint]:
    """Change points over the whole of a positive series, oldest first, at a cost that stays
    flat as the series grows when `memo` is kept between calls. Same result with or without
    a memo; a series shorter than STRIDE + CONTEXT is searched in one piece, exactly as
    `find_change_points` does."""
    series = np.asarray(values, dtype=float)
    if series.size < 2 * min_segment or np.any(~np.isfinite(series)) or np.any(series <= 0):
        return []
    memo = memo if memo is not None else OracleMemo()
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
                     for c in oracle_find_change_points(piece, min_change=min_change,
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
