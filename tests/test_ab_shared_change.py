"""A/B rounds of a change shared by most of the suite: interleaved rounds share the machine's
states, so the run-level shift must not absorb what the head changed in most benchmarks."""

import numpy as np

from support.runs import make_run, ok
from torch_bench.analyze.verdicts import Kind, compare_runs


def rounds(factor, seed, moved, n=3, k=8):
    """`n` interleaved rounds of `k` benchmarks, each moving 2% round to round; those in
    `moved` `factor` times slower."""
    rng = np.random.default_rng(seed)
    return [make_run([ok(f"b{j}", (1.0 + j) * (factor if j in moved else 1.0)
                         * float(np.exp(rng.normal(0, 0.02))), suite="s", seed=seed + 10 * i + j)
                      for j in range(k)],
                     sha=f"{seed:040x}", run_id=f"s{seed}-{i}",
                     created_at=f"2026-01-01T00:00:0{i}Z") for i in range(n)]


def test_a_slowdown_of_six_of_eight_benchmarks_is_called_on_each_and_the_rest_unchanged():
    moved = range(6)
    compared = compare_runs(rounds(1.0, 1, moved), rounds(1.3, 2, moved), side_by_side=True)
    kinds = {v.name: v.kind for v in compared.verdicts}
    assert [kinds[f"b{j}"] for j in moved] == [Kind.REGRESSION] * 6
    assert kinds["b6"] is Kind.UNCHANGED and kinds["b7"] is Kind.UNCHANGED


def test_a_slowdown_of_three_of_eight_benchmarks_is_called_on_each():
    moved = range(3)
    compared = compare_runs(rounds(1.0, 1, moved), rounds(1.3, 2, moved), side_by_side=True)
    kinds = {v.name: v.kind for v in compared.verdicts}
    assert [kinds[f"b{j}"] for j in range(8)] == [Kind.REGRESSION] * 3 + [Kind.UNCHANGED] * 5
