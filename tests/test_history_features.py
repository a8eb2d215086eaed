"""The rule on base-branch histories as they really are: a past step, an outlier run, a head run
noisier inside than history. Each history is a suite of 12 benchmarks whose runs move together
(a shared offset) and on their own, built as run documents and judged by `compare_runs`."""

from __future__ import annotations

import math

import numpy as np
import pytest

from support.runs import make_run, ok
from torch_bench.analyze.evidence import gather, outlier_runs, series_memory
from torch_bench.analyze.groups import evidence_from_groups
from torch_bench.analyze.rule import Outcome
from torch_bench.analyze.verdicts import Kind, compare_runs

NAMES = [f"b{j}" for j in range(12)]
LEVELS = np.exp(np.linspace(0.0, 2.0, 12))


def suite_runs(rng, offsets: np.ndarray, first: int, branch: str, *, cv: float = 0.01,
               seed: int = 0, factors: np.ndarray | None = None) -> list:
    """One run document per row of `offsets` (log, one column per benchmark)."""
    factors = np.ones(len(NAMES)) if factors is None else factors
    runs = []
    for i, row in enumerate(offsets):
        day = first + i
        results = [ok(name, float(LEVELS[j] * factors[j] * math.exp(row[j])), cv=cv, n=30,
                      seed=seed * 1000 + day * 20 + j)
                   for j, name in enumerate(NAMES)]
        runs.append(make_run(results, sha=f"{day:040x}", branch=branch,
                             created_at=f"2026-{1 + day // 28:02d}-{1 + day % 28:02d}T00:00:00Z",
                             run_id=f"{branch}-{day:03d}"))
    return runs


def run_offsets(rng, runs: int, run_cv: float = 0.02) -> np.ndarray:
    """A shared and an own offset per run, half the run variance each."""
    s = run_cv * math.sqrt(0.5)
    return rng.normal(0, s, (runs, 1)) + rng.normal(0, s, (runs, len(NAMES)))


def judged(seed: int, history: int, features, factors, *, head_cv: float = 0.01):
    rng = np.random.default_rng(seed)
    offsets = run_offsets(rng, history + 1)
    past, now = features(rng, offsets[:history].copy(), offsets[history:].copy())
    hist = suite_runs(rng, past, 0, "main", seed=seed)
    head = suite_runs(rng, now, history, "pr", seed=seed, factors=factors, cv=head_cv)
    return hist, head, compare_runs(hist[-1:], head, hist)


def stepped(back: int, size: float = math.log(1.15), columns=(0,)):
    def apply(rng, past, now):
        past[len(past) - back:, list(columns)] += size
        now[:, list(columns)] += size
        return past, now
    return apply


def slowed(name_index: int, change: float) -> np.ndarray:
    factors = np.ones(len(NAMES))
    factors[name_index] = 1 + change
    return factors


def test_a_past_step_is_cut_and_a_slowdown_of_the_stepped_benchmark_is_found():
    # A merged change moved b0 by 15% four runs back; the PR slows it by 10% more. Left uncut,
    # the step read as memory and inflated every variance: the slowdown was found in 1 PR of 20.
    found = [judged(seed, 10, stepped(4), slowed(0, 0.10))[2] for seed in range(20)]
    caught = sum(next(v for v in c.verdicts if v.name == "b0").kind is Kind.REGRESSION
                 for c in found)
    assert caught >= 14
    assert not any(v.kind is Kind.REGRESSION for c in found for v in c.verdicts if v.name != "b0")


@pytest.mark.parametrize("runs,stepped,most", [(10, 1, 0.5), (20, 3, 0.6)],
                         ids=["one-of-12", "a-quarter"])
def test_steps_not_yet_cut_do_not_read_as_the_whole_suite_s_memory(runs, stepped, most):
    # The memory that judges whether a step is clear of the noise: weighed by their sums of
    # squares, one stepped series of 12 made every suite show memory (the others' rho
    # 0.86 in the median suite), three of 12 made it 0.75-0.95; runs without memory then
    # wander that far by chance, and no step was cut.
    found = []
    for seed in range(40):
        rng = np.random.default_rng(seed)
        offsets = run_offsets(rng, runs)
        series = [offsets[:, j].copy() for j in range(12)]
        for j in range(stepped):
            series[j][runs - 4:] += math.log(1.15) * (-1) ** j
        found.append(series_memory(series, [np.zeros(1)] * 12, [0.0] * 12)[-1])
    assert np.mean(np.array(found) > 0) <= most
    assert float(np.median(found)) == pytest.approx(0.0)


def outlier(at: int, size: float = math.log(1.35), uneven: bool = False):
    def apply(rng, past, now):
        feel = rng.uniform(0.7, 1.3, len(NAMES)) if uneven else np.ones(len(NAMES))
        past[at] += size * feel
        return past, now
    return apply


@pytest.mark.parametrize("uneven", [False, True], ids=["uniform", "uneven"])
def test_one_outlier_run_in_history_does_not_blind_the_whole_run_test(uneven):
    # One run 35% slower among 20 made the run-level shifts' variance so large that a real
    # whole-suite slowdown of 10% was never called (0 of 10 here).
    calls = 0
    for seed in range(10):
        hist, head, comparison = judged(seed, 20, outlier(7, uneven=uneven),
                                        np.full(len(NAMES), 1.10))
        calls += comparison.run_shift.outcome is Outcome.WORSE
    assert calls >= 8


def test_the_outlier_run_is_set_aside_by_name_for_every_benchmark():
    rng = np.random.default_rng(3)
    offsets = run_offsets(rng, 21)
    offsets[7] += math.log(1.35)
    hist = suite_runs(rng, offsets[:20], 0, "main")
    head = suite_runs(rng, offsets[20:], 20, "pr")
    first = {r.benchmark_id: r for r in head[0].results}
    found = gather(hist, head, sorted(first), first, min_history=3)
    assert found.set_aside == ("main-007",)
    assert set(found.reference_counts.values()) == {19}


def test_runs_that_come_in_bursts_are_not_set_aside():
    rng = np.random.default_rng(4)
    shifts = rng.normal(0, 0.01, 20)
    shifts[[3, 11]] += math.log(1.3)  # two bursts of 20 runs: more than one in ten
    shifts[15] += math.log(1.3)
    assert outlier_runs(shifts) == []
    shifts[[3, 11]] -= math.log(1.3)
    assert outlier_runs(shifts) == [15]
    assert outlier_runs(shifts[:4]) == []  # too few runs to tell


def test_a_head_noisier_inside_adds_its_own_sampling_variance_to_the_run_variance():
    e = evidence_from_groups([0.0, 0.01, -0.01], [0.02], head_within=4e-4,
                             reference_within=1e-4)
    # the run variance holds history's sampling noise (1e-4); the head's (4e-4) is 3e-4 more
    assert e.head_variance(3e-4) == pytest.approx(6e-4)
    assert e.head_variance(3e-4) > max(3e-4, 4e-4)
    quieter = evidence_from_groups([0.0, 0.01], [0.0], head_within=1e-5, reference_within=1e-4)
    assert quieter.head_variance(3e-4) == pytest.approx(3e-4)
    # history's variance below its runs' own sampling noise (by chance, from few runs): the
    # head's term is still at least the head's own sampling variance
    assert e.head_variance(5e-5) == pytest.approx(4e-4)


def test_a_head_run_noisier_inside_names_no_more_false_regressions_than_a_quiet_one():
    # head samples three times as noisy inside: judged with max(run variance, its own
    # sampling variance), where the truth is the sum, 6 of 60 unchanged PRs named one
    false = sum(any(v.kind is Kind.REGRESSION for v in
                    judged(seed, 10, lambda rng, p, n: (p, n), np.ones(12), head_cv=0.06)[2]
                    .verdicts)
                for seed in range(60))
    assert false <= 3
