"""Change points: PELT with an L1 cost on ln(value)."""

from __future__ import annotations

import numpy as np
import pytest

from torch_bench.analyze.changepoints import commit_range, find_change_points


def noisy(n, cv, seed):
    return np.exp(np.random.default_rng(seed).normal(0.0, cv, n))


def test_a_step_is_found_where_it_happened_with_the_ratio_of_medians():
    values = 10 * noisy(60, 0.01, 1)
    values[40:] *= 1.10
    [change] = find_change_points(values)
    assert change.index == 40
    assert change.ratio == pytest.approx(1.10, rel=0.01)
    assert change.before == pytest.approx(10, rel=0.01)
    assert change.after == pytest.approx(11, rel=0.01)
    commits = [f"c{i}" for i in range(60)]
    assert commit_range(change, commits) == ("c39", "c40")


def test_two_steps_in_index_order():
    values = noisy(90, 0.01, 2)
    values[30:] *= 0.8
    values[60:] *= 1.5
    found = find_change_points(values)
    assert [c.index for c in found] == [30, 60]
    assert found[0].ratio < 1 < found[1].ratio


def test_a_flat_noisy_series_has_no_change_point():
    assert find_change_points(noisy(100, 0.03, 3)) == []


def test_a_lone_spike_is_not_a_change():
    values = noisy(100, 0.01, 4)
    values[50] *= 3
    assert find_change_points(values) == []


def test_two_spikes_close_together_are_a_transient_not_two_changes():
    values = noisy(100, 0.02, 6)
    values[[40, 42]] *= 1.8  # up, then down: PELT alone cuts [40, 43) out as its own level
    assert find_change_points(values) == []


def test_a_level_that_lasts_returns_and_is_two_changes():
    values = noisy(100, 0.01, 7)
    values[40:55] *= 1.3
    assert [c.index for c in find_change_points(values)] == [40, 55]


def test_a_short_new_level_at_the_end_is_kept():
    values = noisy(60, 0.01, 8)
    values[57:] *= 1.3
    [change] = find_change_points(values)
    assert change.index == 57


def test_a_step_under_two_percent_is_ignored():
    values = noisy(100, 0.001, 5)
    values[50:] *= 1.015
    assert find_change_points(values) == []
    assert find_change_points(values, min_change=0.01)[0].index == 50


def test_too_short_or_invalid_series():
    assert find_change_points([1.0, 2.0, 3.0]) == []
    assert find_change_points([1.0, 1.0, 1.0, 0.0, 2.0, 2.0, 2.0]) == []
    assert find_change_points([1.0] * 10) == []
