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


def test_the_recursion_agrees_with_ruptures_pelt():
    ruptures = pytest.importorskip("ruptures")
    from torch_bench.analyze.changepoints import _pelt_l1, penalty

    rng = np.random.default_rng(11)
    for _ in range(25):
        logs = rng.normal(0, 0.01, int(rng.integers(8, 90)))
        logs[int(rng.integers(0, logs.size)):] += 0.1
        beta = penalty(logs)
        expected = ruptures.Pelt(model="l1", min_size=3, jump=1).fit(
            logs.reshape(-1, 1)).predict(pen=beta)
        assert _pelt_l1(logs, beta, 3) == expected


def test_the_whole_history_is_searched_so_an_old_step_is_found():
    from torch_bench.analyze.changepoints import find_change_points_whole

    values = 10 * noisy(1000, 0.01, 12)
    values[667:] *= 1.08  # 333 runs back
    [change] = find_change_points_whole(values)
    assert change.index == 667
    assert change.ratio == pytest.approx(1.08, rel=0.01)


def test_a_kept_memo_searches_only_the_newest_chunk_and_changes_nothing():
    from torch_bench.analyze.changepoints import ChangePointMemo, find_change_points_whole

    values = 10 * noisy(600, 0.01, 13)
    values[120:] *= 1.1
    values[430:] *= 0.9
    cold = ChangePointMemo()
    first = find_change_points_whole(values, cold)
    assert [c.index for c in first] == [120, 430]
    assert cold.searches > 5
    grown = np.append(values, values[-1])
    warm = ChangePointMemo(cold.kept())
    assert find_change_points_whole(grown, warm) == find_change_points_whole(grown)
    assert warm.searches <= 2  # the open chunk at the end, and one that just closed


def test_a_series_unchanged_since_the_memo_was_kept_is_not_searched_again():
    import json

    from torch_bench.analyze.changepoints import ChangePointMemo, find_change_points_whole

    values = 10 * noisy(300, 0.01, 15)
    values[200:] *= 1.1
    cold = ChangePointMemo()
    first = find_change_points_whole(values, cold)
    warm = ChangePointMemo(json.loads(json.dumps(cold.kept())))  # as a site keeps it
    assert find_change_points_whole(values, warm) == first
    assert warm.searches == 0
    assert warm.kept() == cold.kept()  # the chunks stay remembered for the next run


def test_a_short_series_gives_the_same_answer_as_the_single_search():
    from torch_bench.analyze.changepoints import find_change_points_whole

    values = noisy(70, 0.01, 14)
    values[30:] *= 1.2
    assert find_change_points_whole(values) == find_change_points(values)


def test_a_series_grown_by_more_than_a_chunk_searches_only_the_chunks_after_what_was_settled():
    import json

    from torch_bench.analyze.changepoints import ChangePointMemo, find_change_points_whole

    values = 10 * noisy(700, 0.01, 16)
    values[150:] *= 1.1
    values[640:] *= 0.9
    cold = ChangePointMemo()
    find_change_points_whole(values[:600], cold)
    warm = ChangePointMemo(json.loads(json.dumps(cold.kept())))
    assert find_change_points_whole(values, warm) == find_change_points_whole(values)
    assert [c.index for c in find_change_points_whole(values, warm)] == [150, 640]
    assert warm.searches <= 5  # the 4 chunks completed by the 100 new runs, and the open one


def test_the_memo_keeps_two_small_entries_per_series_however_long_it_is():
    import json

    from torch_bench.analyze.changepoints import ChangePointMemo, find_change_points_whole

    memo = ChangePointMemo()
    for seed in (17, 18):
        values = 10 * noisy(3000, 0.01, seed)
        values[1000:] *= 1.1
        find_change_points_whole(values, memo)
    kept = memo.kept()
    assert len(kept) == 4
    assert len(json.dumps(kept)) < 400



def test_a_damaged_memo_entry_is_ignored_and_the_answer_is_unchanged():
    from torch_bench.analyze.changepoints import ChangePointMemo, find_change_points_whole

    values = 10 * noisy(400, 0.01, 20)
    values[250:] *= 1.1
    memo = ChangePointMemo()
    expected = find_change_points_whole(values, memo)
    damaged = {key: [0, 5000] if key.startswith("whole") else [399, 3]
               for key in memo.kept()}
    assert find_change_points_whole(values, ChangePointMemo(damaged)) == expected
    grown = np.append(values, values[-1])
    assert (find_change_points_whole(grown, ChangePointMemo(damaged))
            == find_change_points_whole(grown))
