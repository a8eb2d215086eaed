"""The compiled change-point search gives the numpy table search's answers to the last bit.

`tests/test_changepoint_sameness.py` holds both against the per-step oracle; here the
compiled recursion is held directly against the table search it replaces (same segment
starts for every piece, ties and flat stretches included), its helpers against numpy, and the
fallback without numba against the compiled answers.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import torch_bench.analyze
from test_changepoint_sameness import assert_same, level_series, oracle_find_change_points_whole
from torch_bench.analyze import changepoints
from torch_bench.analyze.changepoints import (
    MAX_TABLE_SEARCH,
    _median,
    _search_arrays,
    _search_penalties,
    _search_penalty,
    find_change_points,
    find_change_points_many,
    find_change_points_whole,
)

pytest.importorskip("numba")


@pytest.fixture(autouse=True)
def compiled_for_any_number_of_pieces(monkeypatch):
    monkeypatch.setattr(changepoints, "COMPILED_FROM", 1)


def table_search(monkeypatch, arrays: list[np.ndarray]) -> list[list[int]]:
    """The segment starts of the numpy table search (the compiled recursion switched off)."""
    with monkeypatch.context() as patch:
        patch.setattr(changepoints, "_compiled_pelt", lambda: None)
        return _search_arrays(arrays, changepoints.MIN_CHANGE, changepoints.MIN_SEGMENT)


def compiled_search(arrays: list[np.ndarray]) -> list[list[int]]:
    assert changepoints._compiled_pelt() is not None
    return _search_arrays(arrays, changepoints.MIN_CHANGE, changepoints.MIN_SEGMENT)


@st.composite
def pieces(draw):
    """A few pieces of any searchable length: levels of a few points, noisy or exact,
    often rounded so that many values and costs tie."""
    found = []
    for _ in range(draw(st.integers(1, 6))):
        length = draw(st.integers(6, MAX_TABLE_SEARCH))
        levels = draw(st.lists(st.sampled_from([1.0, 1.01, 1.5, 2.0, 9.0]), min_size=1,
                               max_size=5))
        values = np.repeat(levels, -(-length // len(levels)))[:length]
        noise = draw(st.sampled_from([0.0, 0.001, 0.03]))
        rng = np.random.default_rng(draw(st.integers(0, 2**16)))
        values = values * np.exp(rng.normal(0.0, noise, length))
        if draw(st.booleans()):
            values = np.maximum(np.round(values, draw(st.integers(0, 2))), 0.5)
        found.append(values)
    return found


@settings(max_examples=150, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(pieces())
def test_the_compiled_search_finds_the_segments_of_the_table_search(monkeypatch, arrays):
    assert compiled_search(arrays) == table_search(monkeypatch, arrays)


@pytest.mark.parametrize("seed", range(3))
def test_many_long_histories_get_the_change_points_of_the_table_search(monkeypatch, seed):
    rng = np.random.default_rng(seed)
    histories = []
    for n in (40, 76, 101, 333, 1000):
        values = 10 * np.exp(rng.normal(0.0, 0.01, n))
        values[n // 3:] *= 1.1
        values[rng.integers(0, n, size=n // 50)] *= 1.6
        histories.append(values)
    compiled = find_change_points_many(histories)
    assert any(compiled)  # the steps are found
    with monkeypatch.context() as patch:
        patch.setattr(changepoints, "_compiled_pelt", lambda: None)
        assert find_change_points_many(histories) == compiled


def test_penalties_of_rows_of_one_length_are_each_rows_own_penalty_to_the_last_bit():
    rng = np.random.default_rng(3)
    logs = [np.log(10 * np.exp(rng.normal(0, 0.02, n))) for n in (75, 75, 50, 75, 6, 2, 1)]
    logs.append(np.zeros(75))  # flat: the smallest penalty
    expected = [_search_penalty(row) for row in logs]
    assert np.array_equal(_search_penalties(logs), expected)


@pytest.mark.parametrize("n", [1, 2, 3, 8, 75, 1001])
def test_the_short_median_is_numpys_median_to_the_last_bit(n):
    values = np.random.default_rng(n).random(n) * 7
    assert _median(values) == float(np.median(values))
    assert _median(np.round(values, 1)) == float(np.median(np.round(values, 1)))


def test_without_numba_the_table_search_gives_the_same_change_points(monkeypatch):
    rng = np.random.default_rng(5)
    values = 10 * np.exp(rng.normal(0.0, 0.01, 120))
    values[70:] *= 1.2
    compiled = find_change_points(values)
    assert [point.index for point in compiled] == [70]
    monkeypatch.setitem(sys.modules, "numba", None)  # `import numba` fails
    monkeypatch.delitem(sys.modules, "torch_bench.analyze.pelt_kernel", raising=False)
    monkeypatch.delattr(torch_bench.analyze, "pelt_kernel", raising=False)
    changepoints._compiled_pelt.cache_clear()
    try:
        assert changepoints._compiled_pelt() is None
        assert find_change_points(values) == compiled
    finally:
        changepoints._compiled_pelt.cache_clear()


@settings(max_examples=40, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(level_series())
def test_the_compiled_search_gives_the_change_points_of_the_per_step_search(values):
    assert_same(find_change_points_whole(values), oracle_find_change_points_whole(values))


def test_a_one_run_update_does_not_wait_for_the_compiler(monkeypatch):
    monkeypatch.undo()  # the real threshold
    compiled = []
    monkeypatch.setattr(changepoints, "_compiled_pelt", lambda: compiled.append(1))
    rng = np.random.default_rng(2)
    find_change_points_many([10 * np.exp(rng.normal(0, 0.01, 60)) for _ in range(1000)])
    assert compiled == []
