"""The model groups ten million rows by benchmark two ways: a blocked transpose when every run
holds each benchmark once in the same order (a suite run whole each time), a stable sort
otherwise. Both must give every benchmark the same points, in time order."""

from __future__ import annotations

import numpy as np
import pytest

from torch_bench.render.model import POINT_FIELDS, GroupedRows, grid_layout, group_rows


def grid_rows(runs: int, benchmarks: int, seed: int) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Rows of `runs` runs, each holding every benchmark once in one shuffled order."""
    rng = np.random.default_rng(seed)
    layout = rng.permutation(benchmarks).astype(np.int32)
    size = runs * benchmarks
    rows = {"run": np.repeat(np.arange(runs, dtype=np.int32), benchmarks),
            "median": rng.random(size), "q1": rng.random(size), "q3": rng.random(size),
            "n": rng.integers(1, 50, size).astype(np.int32)}
    return rows, np.tile(layout, runs)


def by_sorting(rows, codes, count, chosen) -> GroupedRows:
    """What the grid path must agree with: each code's rows picked out one code at a time."""
    first, last, parts, bounds = [], [], {f: [] for f in POINT_FIELDS}, [0]
    for code in range(count):
        where = np.flatnonzero(codes == code)
        first.append(where[0])
        last.append(where[-1])
        picked = where[chosen[where]]
        for f in POINT_FIELDS:
            parts[f].append(rows[f][picked])
        bounds.append(bounds[-1] + len(picked))
    return GroupedRows(np.asarray(first), np.asarray(last),
                       {f: np.concatenate(parts[f]) for f in POINT_FIELDS}, np.asarray(bounds))


def assert_same(found: GroupedRows, expected: GroupedRows) -> None:
    assert found.first.tolist() == expected.first.tolist()
    assert found.last.tolist() == expected.last.tolist()
    assert found.bounds.tolist() == expected.bounds.tolist()
    for f in POINT_FIELDS:
        assert found.columns[f].dtype == expected.columns[f].dtype
        assert np.array_equal(found.columns[f], expected.columns[f])  # moved, never computed


@pytest.mark.parametrize("runs,benchmarks", [(1, 1), (3, 7), (700, 13)])  # 700 > one block
def test_a_grid_of_runs_groups_as_picking_each_benchmark_out(runs, benchmarks):
    rows, codes = grid_rows(runs, benchmarks, seed=runs)
    chosen = np.random.default_rng(1).random(len(codes)) < 0.8  # failed results left out
    assert grid_layout(codes, benchmarks) is not None
    assert_same(group_rows(rows, codes, benchmarks, chosen, POINT_FIELDS),
                by_sorting(rows, codes, benchmarks, chosen))


def test_runs_that_differ_in_their_benchmarks_are_grouped_by_sorting():
    rows, codes = grid_rows(50, 6, seed=3)
    irregular = [codes.copy() for _ in range(3)]
    irregular[0][6:12] = irregular[0][6:12][::-1]  # one run in another order
    irregular[1][7] = irregular[1][8]  # one run measured a benchmark twice, another not
    partial = np.concatenate([codes[:-6], codes[-6:-3]])  # the newest run measured half
    cases = [(c, rows) for c in irregular[:2]]
    cases.append((partial, {f: v[:len(partial)] for f, v in rows.items()}))
    for case_codes, case_rows in cases:
        assert grid_layout(case_codes, 6) is None
        chosen = np.ones(len(case_codes), bool)
        assert_same(group_rows(case_rows, case_codes, 6, chosen, POINT_FIELDS),
                    by_sorting(case_rows, case_codes, 6, chosen))
