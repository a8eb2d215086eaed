"""The rule on one benchmark: the three conditions, direction, log space, little history."""

from __future__ import annotations

import math

import pytest

from support.runs import samples
from torch_bench.analyze.noise import NoiseEstimate, robust_log_spread
from torch_bench.analyze.rule import Outcome, RulePolicy, assess

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
    one = assess([run(10, 1)], [run(10.5, 2)], NoiseEstimate(0.02, 20), lower_is_better=True)
    three = assess([run(10, s) for s in (1, 3, 5)], [run(10.5, s) for s in (2, 4, 6)],
                   NoiseEstimate(0.02, 20), lower_is_better=True)
    assert three.z == pytest.approx(one.z * math.sqrt(3), rel=0.1)
    assert one.outcome is Outcome.UNSURE and three.outcome is Outcome.WORSE


def test_too_little_history_needs_ten_percent_and_is_low_confidence():
    few = NoiseEstimate(0.01, 5)
    small = assess([run(10, 1)], [run(10.7, 2)], few, lower_is_better=True)
    assert small.low_confidence and small.min_effect == 0.10
    assert small.outcome is Outcome.SAME  # 7% would be a regression with enough history
    large = assess([run(10, 1)], [run(11.5, 2)], few, lower_is_better=True)
    assert large.outcome is Outcome.WORSE and large.low_confidence


def test_no_history_at_all_skips_the_z_condition():
    a = assess([run(10, 1)], [run(12, 2)], NoiseEstimate.from_medians([]),
               lower_is_better=True)
    assert a.z is None and a.noise is None and a.history_runs == 0
    assert a.outcome is Outcome.WORSE and a.low_confidence


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
