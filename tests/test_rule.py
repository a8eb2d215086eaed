"""The rule on one benchmark: the three conditions, direction, log space, little history."""

from __future__ import annotations

import math

import pytest

from support.runs import samples
from torch_bench.analyze.noise import NoiseEstimate, robust_log_spread
from torch_bench.analyze.rule import Outcome, RulePolicy, assess, t_threshold

QUIET = NoiseEstimate(0.01, 20)  # 1% run-to-run noise learned from 20 runs


def run(median, seed, cv=0.01, n=60):
    return samples(median, n=n, cv=cv, seed=seed)


def test_a_clear_slowdown_is_worse_with_high_confidence():
    a = assess([run(10, 1)], [run(11, 2)], QUIET, lower_is_better=True)
    assert a.outcome is Outcome.WORSE
    assert not a.low_confidence
    assert a.ratio == pytest.approx(1.1, rel=0.01)
    assert a.p_value < 0.001 and a.z > 3


def test_direction_comes_from_the_metric_a_higher_throughput_is_better():
    a = assess([run(100, 1)], [run(110, 2)], QUIET, lower_is_better=False)
    assert a.outcome is Outcome.BETTER
    b = assess([run(100, 1)], [run(90, 2)], QUIET, lower_is_better=False)
    assert b.outcome is Outcome.WORSE


def test_a_change_under_the_minimum_effect_is_unchanged_even_when_significant():
    # 1% slower with almost no per-iteration noise: Mann-Whitney is sure, but 1% < 2%
    a = assess([run(10, 1, cv=0.001)], [run(10.1, 2, cv=0.001)], NoiseEstimate(0.001, 20),
               lower_is_better=True)
    assert a.p_value < 1e-6
    assert a.outcome is Outcome.SAME


def test_a_change_within_run_to_run_noise_is_inconclusive():
    # 6% slower, samples clearly differ, but runs move by 5% from one to the next: z < 3
    a = assess([run(10, 1)], [run(10.6, 2)], NoiseEstimate(0.05, 20), lower_is_better=True)
    assert a.p_value < 0.001
    assert abs(a.z) < 3
    assert a.outcome is Outcome.UNSURE


def test_samples_too_noisy_to_differ_are_inconclusive():
    a = assess([run(10, 1, cv=0.5, n=10)], [run(11, 2, cv=0.5, n=10)], QUIET,
               lower_is_better=True)
    assert a.p_value > 0.001
    assert a.outcome is Outcome.UNSURE


def test_more_runs_a_side_shrink_the_noise_term():
    one = assess([run(10, 1)], [run(10.6, 2)], NoiseEstimate(0.02, 20), lower_is_better=True)
    three = assess([run(10, s) for s in (1, 3, 5)], [run(10.6, s) for s in (2, 4, 6)],
                   NoiseEstimate(0.02, 20), lower_is_better=True)
    assert three.z == pytest.approx(one.z * math.sqrt(3), rel=0.1)
    assert one.outcome is Outcome.UNSURE and three.outcome is Outcome.WORSE


@pytest.mark.parametrize("runs", [0, 1, 2, 4])
def test_without_enough_history_a_large_change_is_inconclusive_and_says_why(runs):
    medians = [10.0, 10.1, 9.9, 10.05][:runs]
    a = assess([run(10, 1)], [run(15, 2)], NoiseEstimate.from_medians(medians),
               lower_is_better=True)
    assert a.p_value < 1e-6  # the samples clearly differ, yet the run-to-run noise is unknown
    assert a.outcome is Outcome.UNSURE
    assert a.reason == f"not enough history ({runs} runs; 5 needed)"


def test_without_history_a_small_change_is_still_unchanged():
    a = assess([run(10, 1)], [run(10.05, 2)], NoiseEstimate.from_medians([]),
               lower_is_better=True)
    assert a.outcome is Outcome.SAME and a.reason is None


def test_the_threshold_widens_as_the_history_shrinks():
    # the same 8% change against the same 1.5% spread: enough from 20 runs, not from 5
    base, head = [run(10, 1)], [run(10.8, 2)]
    long = assess(base, head, NoiseEstimate(0.015, 20), lower_is_better=True)
    short = assess(base, head, NoiseEstimate(0.015, 5), lower_is_better=True)
    assert long.z == pytest.approx(short.z)
    assert short.threshold > 1.8 * long.threshold > 6
    assert long.outcome is Outcome.WORSE and not long.low_confidence
    assert short.outcome is Outcome.UNSURE and short.low_confidence
    assert short.reason == "within the run-to-run noise"


def test_t_threshold_matches_the_normal_one_with_endless_history():
    assert t_threshold(3.0, 10_000) == pytest.approx(3.0, rel=0.01)
    assert t_threshold(3.0, 2) == pytest.approx(19.2, rel=0.01)
    assert t_threshold(3.0, 0) == math.inf


def test_ratios_compare_in_log_space_halving_and_doubling_are_the_same_size():
    up = assess([run(2.0, 1)], [run(4.0, 2)], QUIET, lower_is_better=False)
    down = assess([run(2.0, 1)], [run(1.0, 2)], QUIET, lower_is_better=False)
    assert up.z == pytest.approx(-down.z, rel=0.02)


def test_minimum_effect_per_suite_or_metric_most_specific_wins():
    policy = RulePolicy(min_effect_for={"compile": 0.05, "compile:peak_rss": 0.2,
                                        "latency": 0.03})
    assert policy.effect_for("compile", "speedup") == 0.05
    assert policy.effect_for("compile", "peak_rss") == 0.2
    assert policy.effect_for("rnns", "latency") == 0.03
    assert policy.effect_for("rnns", "time") == 0.02


def test_large_suites_get_a_stricter_z():
    policy = RulePolicy(large_suite_size=50, large_suite_z=4.0)
    assert policy.z_for(50) == 3.0 and policy.z_for(51) == 4.0


def test_robust_spread_ignores_one_wild_run():
    values = [10.0, 10.1, 9.9, 10.05, 9.95, 30.0]
    assert robust_log_spread(values) < 0.02
    assert robust_log_spread([10.0, 11.0]) is None


@pytest.mark.parametrize("runs", [3, 5, 10, 20])
def test_the_spread_is_unbiased_from_few_runs(runs):
    # uncorrected, 1.4826 x MAD of 3 runs is a third too small, of 20 runs 4% too small
    import numpy as np

    from torch_bench.analyze.noise import robust_log_spreads

    sd = 0.03
    medians = np.exp(np.random.default_rng(runs).normal(0.0, sd, size=(40_000, runs)))
    assert robust_log_spreads(medians).mean() == pytest.approx(sd, rel=0.015)
    assert robust_log_spread(list(medians[0])) == pytest.approx(robust_log_spreads(medians)[0])


def test_the_tail_aware_spread_sees_a_minority_of_runs_on_a_slower_host():
    from torch_bench.analyze.noise import tail_aware_spread

    fast = [10.0, 10.05, 9.95, 10.02, 9.98, 10.01, 9.99, 10.03]
    mixed = fast + [11.0, 11.05]  # two runs of ten on a host 10% slower
    assert robust_log_spread(mixed) < 0.01  # the MAD alone does not see them
    assert tail_aware_spread(mixed) > 0.03


def test_a_spread_from_runs_that_happen_to_agree_does_not_collapse():
    from torch_bench.analyze.noise import suite_spread

    # 3 runs, two identical: the MAD is 0; the suite's other benchmarks move by about 2%
    series = {"a": [10.0, 10.0, 10.2], "b": [5.0, 5.1, 4.9], "c": [1.0, 1.02, 0.98],
              "d": [2.0, 2.04, 1.96]}
    assert robust_log_spread(series["a"]) == pytest.approx(0.0)
    pooled = NoiseEstimate.from_medians(series["a"], suite_spread(series))
    assert pooled.spread > 0.015


def test_the_suite_never_pulls_a_noisy_benchmark_down():
    noisy = [10.0, 11.0, 9.0, 10.5, 9.5]
    alone = NoiseEstimate.from_medians(noisy)
    assert NoiseEstimate.from_medians(noisy, suite_spread=0.001).spread == pytest.approx(
        alone.spread)


def process_chunks(seed, processes=10, per_process=50, level=10.0):
    """Samples of one run spread over worker processes, each with its own offset."""
    import numpy as np

    rng = np.random.default_rng(seed)
    offsets = rng.normal(0.0, 0.03, processes)
    values = [level * math.exp(o + rng.normal(0.0, 0.005)) for o in offsets
              for _ in range(per_process)]
    return values, [per_process] * processes


def test_the_within_run_test_compares_processes_not_pooled_iterations():
    (base, base_sizes), (head, head_sizes) = process_chunks(1), process_chunks(2)
    pooled = assess([base], [head], QUIET, lower_is_better=True)
    per_process = assess([base], [head], QUIET, lower_is_better=True,
                         base_processes=[base_sizes], head_processes=[head_sizes])
    # unchanged code: the process offsets alone make 200 pooled iterations look different
    assert pooled.within_test == "iterations" and pooled.p_value < 0.001
    assert per_process.within_test == "processes" and per_process.p_value > 0.01


def test_too_few_processes_for_the_test_leave_the_verdict_to_the_noise_condition():
    (base, base_sizes), (head, _) = process_chunks(1, processes=3), process_chunks(2, processes=3)
    slower = [v * 1.2 for v in head]
    a = assess([base], [slower], QUIET, lower_is_better=True, base_processes=[base_sizes],
               head_processes=[[50, 50, 50]])
    assert a.within_test == "too few processes" and a.p_value is None
    assert a.outcome is Outcome.WORSE  # 20% against 1% run-to-run noise from 20 runs


def test_one_process_per_run_falls_back_to_the_iterations():
    from torch_bench.analyze.rule import process_medians

    assert process_medians([1.0, 2.0, 3.0], None) == [2.0]
    assert process_medians([1.0, 2.0, 3.0], [3]) == [2.0]
    assert process_medians([1.0, 2.0, 3.0, 9.0], [2, 2]) == [1.5, 6.0]
    assert process_medians([1.0, 2.0, 3.0], [2, 2]) == [2.0]  # sizes that do not add up
