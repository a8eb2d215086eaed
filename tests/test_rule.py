"""The verdict rule on worked cases: one benchmark, a suite, the statistics under it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from torch_bench.analyze.changepoints import find_change_points_many
from torch_bench.analyze.evidence import clear_steps, series_memory
from torch_bench.analyze.groups import evidence_from_groups, median_sampling_variance
from torch_bench.analyze.moderation import Prior, digamma, fit_prior, trigamma
from torch_bench.analyze.multiplicity import benjamini_hochberg, next_cutoff
from torch_bench.analyze.null_shape import (
    Tails,
    expected_lag_one,
    learn_tails,
    memory_df,
    memory_factor,
    suite_autocorrelation,
    white_share,
)
from torch_bench.analyze.rule import Case, Outcome, RulePolicy, assess, judge
from torch_bench.analyze.shift import biweight_location, run_shifts, shift_scale
from torch_bench.analyze.student_t import t_sf


def levels(centre: float, spread: float, n: int, seed: int) -> list[float]:
    """n per-run medians around `centre`, log-normal with sd `spread`, exactly centred."""
    noise = np.random.default_rng(seed).normal(0.0, spread, n)
    return list(centre * np.exp(noise - noise.mean()))


def test_a_clear_slowdown_is_worse_and_a_clear_speedup_better():
    history = levels(10.0, 0.01, 20, 1)
    worse = assess(history, [11.0], lower_is_better=True)
    assert worse.outcome is Outcome.WORSE and not worse.low_confidence
    assert worse.ratio == pytest.approx(1.1, rel=1e-6) and worse.history_runs == 20
    assert assess(history, [9.0], lower_is_better=True).outcome is Outcome.BETTER


def test_direction_comes_from_the_metric_a_higher_throughput_is_better():
    history = levels(100.0, 0.01, 20, 2)
    assert assess(history, [80.0], lower_is_better=False).outcome is Outcome.WORSE
    assert assess(history, [120.0], lower_is_better=False).outcome is Outcome.BETTER


def test_a_change_under_the_minimum_effect_is_unchanged_even_when_significant():
    history = levels(10.0, 0.0005, 20, 3)
    a = assess(history, [10.15], lower_is_better=True)
    assert a.p_value < 1e-6 and a.outcome is Outcome.SAME


def test_a_change_within_the_noise_is_unchanged_and_says_what_could_have_been_seen():
    history = levels(10.0, 0.05, 20, 4)
    a = assess(history, [10.6], lower_is_better=True)
    assert a.outcome is Outcome.SAME and a.reason is None
    # the smallest change that would have been called: t threshold x scale, beyond +6%
    assert a.detectable == pytest.approx(math.expm1(a.threshold * a.noise
                                                    * math.sqrt(1 / 20 + 1)), rel=1e-9)
    assert a.detectable > 0.06
    assert assess(history, [10.0 * (1 + a.detectable) * 1.01],
                  lower_is_better=True).outcome is Outcome.WORSE


def test_the_resolution_is_never_finer_than_the_minimum_effect():
    a = assess(levels(10.0, 0.0001, 20, 5), [10.0], lower_is_better=True)
    assert a.detectable == pytest.approx(0.02)


@pytest.mark.parametrize("runs", [1, 2])
def test_without_enough_history_a_large_change_is_inconclusive_and_says_why(runs):
    a = assess(levels(10.0, 0.01, runs, 6), [15.0], lower_is_better=True)
    assert a.outcome is Outcome.UNSURE
    assert a.reason == f"not enough history ({runs} runs; 3 needed)"
    assert assess(levels(10.0, 0.01, runs, 6), [10.05],
                  lower_is_better=True).outcome is Outcome.SAME


def test_side_by_side_rounds_need_no_history():
    base, head = levels(10.0, 0.01, 3, 7), levels(11.0, 0.01, 3, 8)
    a = assess(base, head, lower_is_better=True, side_by_side=True)
    assert a.outcome is Outcome.WORSE and a.side_by_side and not a.low_confidence
    assert a.df == 4  # one mean per side


def test_a_short_history_needs_a_larger_change():
    five = assess(levels(10.0, 0.02, 5, 9), [10.9], lower_is_better=True)
    twenty = assess(levels(10.0, 0.02, 20, 9), [10.9], lower_is_better=True)
    assert five.threshold > twenty.threshold and five.low_confidence
    assert five.detectable > twenty.detectable


def test_more_head_runs_shrink_the_noise_term():
    history = levels(10.0, 0.03, 20, 10)
    one = assess(history, [10.7], lower_is_better=True)
    three = assess(history, levels(10.7, 0.03, 3, 11), lower_is_better=True)
    assert abs(three.z) > abs(one.z)


def test_halving_and_doubling_are_the_same_size():
    history = levels(10.0, 0.05, 20, 12)
    slower = assess(history, [20.0], lower_is_better=True)
    faster = assess(history, [5.0], lower_is_better=True)
    assert slower.z == pytest.approx(-faster.z, rel=1e-9)


def test_minimum_effect_per_suite_or_metric_most_specific_wins():
    policy = RulePolicy(min_effect_for={"rnns": 0.05, "latency": 0.03,
                                        "rnns:latency": 0.10})
    assert policy.effect_for("rnns", "latency") == 0.10
    assert policy.effect_for("cnns", "latency") == 0.03
    assert policy.effect_for("rnns", "throughput") == 0.05
    assert policy.effect_for("cnns", "memory") == 0.02


def test_a_head_run_noisier_inside_than_history_is_judged_by_its_own_noise():
    history = levels(10.0, 0.01, 20, 13)
    steady = evidence_from_groups(np.log(history), [math.log(11.0)])
    busy = evidence_from_groups(np.log(history), [math.log(11.0)],
                                head_within=median_sampling_variance(
                                    list(11.0 * np.exp(np.random.default_rng(1)
                                                       .normal(0, 0.8, 20)))))
    found = judge([Case(e, True, 0.02, "latency", 20, (10.0, 11.0)) for e in (steady, busy)],
                  RulePolicy(fdr=1.0), {"latency": Prior(0.0, math.nan)})
    assert [a.outcome for a in found] == [Outcome.WORSE, Outcome.SAME]


def suite_cases(rng, m: int, spread: float, runs: int = 10, change: dict | None = None):
    cases = []
    for j in range(m):
        history = rng.normal(0.0, spread, runs)
        head = rng.normal(0.0, spread, 1) + math.log1p((change or {}).get(j, 0.0))
        e = evidence_from_groups(history, head)
        cases.append(Case(e, True, 0.02, "latency", runs, (1.0, float(np.exp(head[0])))))
    return cases


def test_a_benchmark_borrows_degrees_of_freedom_from_its_suite():
    rng = np.random.default_rng(20)
    cases = suite_cases(rng, 30, 0.02, runs=4)
    found = judge(cases)
    assert all(a.df > 3 for a in found)  # more than its own 3
    lone = judge(cases[:1], priors={"latency": Prior(0.0, math.nan)})[0]
    assert lone.df == 3


def test_one_significant_benchmark_among_many_is_not_named_alone():
    rng = np.random.default_rng(21)
    cases = suite_cases(rng, 200, 0.02)
    # benchmark 0: p about 0.003 on its own, not among 200 at the per-PR level
    cases[0] = suite_cases(np.random.default_rng(5), 1, 0.02)[0]
    e = cases[0].evidence
    shifted = evidence_from_groups(e.reference, e.reference.mean() + np.array([0.07]))
    cases[0] = Case(shifted, True, 0.02, "latency", 10, (1.0, 1.07))
    in_suite = judge(cases)[0]
    alone = judge(cases[:1], priors={"latency": Prior(0.0, math.nan)})[0]
    assert alone.outcome is Outcome.WORSE
    assert in_suite.outcome is Outcome.UNSURE and "per-PR level" in in_suite.reason


def test_a_real_change_in_a_large_suite_is_still_found():
    rng = np.random.default_rng(22)
    found = judge(suite_cases(rng, 1000, 0.01, change={0: 0.10}))
    assert found[0].outcome is Outcome.WORSE
    assert sum(a.outcome is Outcome.WORSE for a in found) == 1


def test_benjamini_hochberg_on_a_worked_example():
    p = [0.01, 0.04, 0.03, 0.005, 0.5, math.nan]
    # sorted 0.005 0.01 0.03 0.04 0.5 against 0.01 0.02 0.03 0.04 0.05 (level 0.05, m = 5)
    assert benjamini_hochberg(p, 0.05).tolist() == [True, True, True, True, False, False]
    assert benjamini_hochberg([0.03, 0.9], 0.05).tolist() == [False, False]
    assert benjamini_hochberg([0.02, 0.9], 0.05).tolist() == [True, False]
    assert next_cutoff([0.03, 0.9], 0.05) == pytest.approx(0.025)


def test_polygamma_functions_on_known_values():
    assert float(digamma(1.0)) == pytest.approx(-0.5772156649015329, abs=1e-10)
    assert float(trigamma(1.0)) == pytest.approx(math.pi ** 2 / 6, rel=1e-9)
    assert float(digamma(0.5)) == pytest.approx(-1.9635100260214235, abs=1e-10)


def test_the_prior_is_recovered_from_many_variances():
    rng = np.random.default_rng(23)
    true_variances = 4.0 * 0.001 / rng.chisquare(4.0, 5000)
    observed = true_variances * rng.chisquare(5, 5000) / 5
    prior = fit_prior(observed, np.full(5000, 5))
    assert prior.df == pytest.approx(4.0, rel=0.25)
    assert prior.scale == pytest.approx(0.001, rel=0.15)


def test_identical_variances_make_a_certain_prior_and_too_few_none():
    assert fit_prior([0.01] * 10, [1e9] * 10).df > 1e5
    assert fit_prior([0.01, 0.02], [5, 5]).df == 0


def test_the_suite_lends_at_most_the_degrees_of_freedom_a_benchmark_has():
    assert fit_prior([0.01] * 10, [4] * 10).df == 4
    rng = np.random.default_rng(25)
    observed = 0.001 * rng.chisquare(3, 500) / 3  # one true variance: d0 would be endless
    assert fit_prior(observed, np.full(500, 3)).df == 3


def test_heavy_tails_are_learned_only_when_the_history_shows_them():
    rng = np.random.default_rng(24)
    assert learn_tails(rng.normal(0, 1, 2000)).df is None
    heavy = learn_tails(rng.standard_t(2.5, 2000))
    assert heavy.df is not None and heavy.df < 5
    assert learn_tails(rng.standard_t(2.5, 20)) == Tails(values=20)  # too few to tell


def test_runs_that_remember_the_previous_one_widen_the_scale():
    # worked by hand for rho 0.7 and 10 runs: variance of (head - mean) 0.963 against
    # E[s^2] (1 + 1/10) = 0.714
    assert memory_factor(0.7, 10) == pytest.approx(0.963 / 0.714, rel=0.01)
    assert memory_factor(0.0, 10) == 1.0

    def cases(rho, seed):
        rng = np.random.default_rng(seed)
        found = []
        for _ in range(30):
            x = np.empty(12)
            x[0] = rng.normal()
            for i in range(1, 12):
                x[i] = rho * x[i - 1] + rng.normal(0, math.sqrt(1 - rho * rho))
            found.append(evidence_from_groups(x[:11] * 0.02, x[11:] * 0.02))
        return found

    assert suite_autocorrelation(cases(0.7, 1)) > 0.4
    assert suite_autocorrelation(cases(0.0, 2)) < 0.2  # memory is taken half a standard
    # error above none: a suite without it may read a little


def test_the_run_shift_is_nearly_as_precise_as_a_mean_when_nothing_changed():
    rng = np.random.default_rng(31)
    deviations = rng.normal(0.0, 0.02, (4000, 12))  # 4,000 runs of a 12-timing suite
    shifts = run_shifts(deviations, np.zeros(12))
    # the mean's spread is 0.02 / sqrt(12); a median's would be about 1.25 times that
    assert shifts.std() < 1.08 * 0.02 / math.sqrt(12)


def test_the_run_shift_does_not_follow_a_minority_of_changed_benchmarks():
    rng = np.random.default_rng(32)
    history = rng.normal(0.0, 0.01, (10, 12))
    head = rng.normal(0.0, 0.01, (1, 12))
    head[0, :5] += math.log(1.10)  # five of twelve really 10% slower
    scale = shift_scale(history, np.zeros(12))
    assert scale == pytest.approx(0.01, rel=0.25)
    [shift] = run_shifts(head, np.zeros(12), scale)
    assert abs(shift - float(np.mean(head[0, 5:]))) < 0.004
    assert biweight_location(np.zeros(5), 0.0) == 0.0  # no spread: the median


def test_head_runs_measured_one_after_another_widen_the_scale_by_their_own_memory():
    rng = np.random.default_rng(5)
    n, k, rho, draws = 10, 3, 0.7, 20000
    x = np.empty((draws, n + k))
    x[:, 0] = rng.normal(size=draws)
    for i in range(1, n + k):
        x[:, i] = rho * x[:, i - 1] + rng.normal(0, math.sqrt(1 - rho * rho), draws)
    difference = x[:, n:].mean(axis=1) - x[:, :n].mean(axis=1)  # three head runs vs ten
    # the rule pools the variance within the reference runs and within the head's
    pooled = ((x[:, :n].var(axis=1) * n + x[:, n:].var(axis=1) * k) / (n - 1 + k - 1)).mean()
    assumed = pooled * (1 / n + 1 / k)
    assert difference.var() / (assumed * memory_factor(rho, n, k)) == pytest.approx(1.0, abs=0.04)
    assert memory_factor(rho, n, 1) == memory_factor(rho, n)


def ar_runs(rng, rho: float, draws: int, runs: int) -> np.ndarray:
    """`draws` series of `runs` AR(1) values of unit variance."""
    x = np.empty((draws, runs))
    x[:, 0] = rng.normal(size=draws)
    for i in range(1, runs):
        x[:, i] = rho * x[:, i - 1] + rng.normal(0, math.sqrt(1 - rho * rho), draws)
    return x


def test_the_expected_autocorrelation_of_short_series_is_far_below_their_memory():
    x = ar_runs(np.random.default_rng(41), 0.7, 20000, 5)
    centred = x - x.mean(axis=1, keepdims=True)
    pooled = (centred[:, :-1] * centred[:, 1:]).sum() / (centred * centred).sum()
    assert expected_lag_one(0.7, 5) == pytest.approx(pooled, abs=0.02)
    assert expected_lag_one(0.7, 5) < 0.3
    assert expected_lag_one(0.0, 5) == pytest.approx(-1 / 5)


def test_memory_is_found_in_full_in_short_histories_and_under_the_samples_own_noise():
    rng = np.random.default_rng(42)
    remembered = ar_runs(rng, 0.7, 60, 9) * 0.02  # 60 benchmarks, 8 runs of history, 1 head
    assert suite_autocorrelation([evidence_from_groups(x[:8], x[8:])
                                  for x in remembered]) == pytest.approx(0.7, abs=0.08)
    # half of each run's variance is its median's sampling noise, which nothing remembers;
    # the head's samples say how large it is (one such suite reads 0.5-0.9: ten of them)
    found = []
    for _ in range(10):
        remembered = ar_runs(rng, 0.7, 60, 9) * 0.02
        white = rng.normal(0, 0.02, remembered.shape)
        found.append(suite_autocorrelation([evidence_from_groups(x[:8], x[8:],
                                                                 head_within=0.02 ** 2)
                                            for x in remembered + white]))
    assert float(np.mean(found)) == pytest.approx(0.7, abs=0.1)


def test_a_white_share_of_the_variance_remembers_nothing():
    rng = np.random.default_rng(43)
    n, k, draws = 10, 3, 20000
    x = ar_runs(rng, 0.7, draws, n + k) + rng.normal(0, 1, (draws, n + k))  # half white
    difference = x[:, n:].mean(axis=1) - x[:, :n].mean(axis=1)
    pooled = ((x[:, :n].var(axis=1) * n + x[:, n:].var(axis=1) * k) / (n - 1 + k - 1)).mean()
    factor = memory_factor(0.7, n, k, white=0.5)
    assert difference.var() / (pooled * (1 / n + 1 / k) * factor) == pytest.approx(1.0, abs=0.04)
    assert factor < memory_factor(0.7, n, k)


def test_five_runs_of_history_are_enough_to_find_memory_in_most_suites():
    rng = np.random.default_rng(45)

    def found(rho: float) -> float:
        suites = [ar_runs(rng, rho, 12, 6) * 0.02 for _ in range(300)]  # 12 benchmarks
        return float(np.mean([suite_autocorrelation([evidence_from_groups(x[:5], x[5:])
                                                     for x in suite]) > 0
                              for suite in suites]))

    assert found(0.7) > 0.95
    assert found(0.0) < 0.35  # a fleet without memory pays for some in a minority of PRs


def test_a_slow_drift_is_found_as_memory_from_the_lags_that_see_it():
    # a random walk under run-to-run noise four times its step: neighbours differ by little
    # more than the noise, while the level wanders far over 20 runs
    rng = np.random.default_rng(48)
    found = []
    for _ in range(100):
        runs = np.cumsum(rng.normal(0, 0.25, (12, 23)), axis=1) + rng.normal(0, 1, (12, 23))
        found.append(suite_autocorrelation([evidence_from_groups(x[:20] * 0.02, x[20:] * 0.02)
                                            for x in runs]))
    # lag 1 alone read a median rho of 0.16, which judged such heads as if they had almost
    # no memory (detector_eval.py's drift fleet: 10-13% of PRs named a false regression)
    assert float(np.median(found)) > 0.3


def test_runs_that_remember_wander_without_being_cut_while_a_real_step_still_is():
    rng = np.random.default_rng(2)
    x = ar_runs(rng, 0.7, 120, 13) * 0.03  # 120 benchmarks, 10 runs of history, 3 head runs
    series, heads = list(x[:, :10]), list(x[:, 10:])
    memory = series_memory(series, heads, [0.0] * len(series))
    assert memory[0] == pytest.approx(0.7, abs=0.1)
    found = find_change_points_many([np.exp(s) for s in series])
    cut = np.mean([bool(clear_steps(s, f, m))
                   for s, f, m in zip(series, found, memory, strict=True)])
    # read against point-to-point noise alone, 15% of these series had a "clear" step
    assert np.mean([bool(clear_steps(s, f)) for s, f in zip(series, found, strict=True)]) > 0.1
    assert cut < 0.04
    stepped = [s + np.where(np.arange(10) >= 5, math.log(1.25), 0.0) for s in series[:20]]
    found = find_change_points_many([np.exp(s) for s in stepped])
    assert np.mean([bool(clear_steps(s, f, m))
                    for s, f, m in zip(stepped, found, memory[:20], strict=True)]) > 0.9
    white = list(rng.normal(0, 0.03, (120, 10)))
    assert series_memory(white, heads, [0.0] * len(white)) == [0.0] * len(white)


def test_memory_is_read_at_the_upper_end_of_its_range_so_it_is_seldom_too_small():
    rng = np.random.default_rng(46)
    estimates = [suite_autocorrelation([evidence_from_groups(x[:10], x[10:]) for x in
                                        ar_runs(rng, 0.7, 12, 13) * 0.03], errors=1.0)
                 for _ in range(150)]
    # 12 benchmarks, 10 runs of history and 3 head runs: matched to the pooled value alone, a
    # quarter of these suites read rho below 0.6, and named a false regression in about one
    # PR of ten with the scale that implied
    assert np.mean(np.array(estimates) < 0.6) < 0.1
    assert np.median(estimates) < 0.9


def test_runs_that_remember_and_a_white_share_named_from_few_runs_keep_the_false_alarm_rate():
    # 20 runs of history and 3 head runs, AR(1) 0.7 under a white share of half the variance
    # that the head's samples tell; the share is read from each series' own pooled variance
    rng = np.random.default_rng(46)
    n, k, rho, white, draws = 20, 3, 0.7, 0.5, 3000
    x = ar_runs(rng, rho, draws, n + k) * math.sqrt(1 - white) \
        + rng.normal(0, math.sqrt(white), (draws, n + k))
    alarms = 0
    for series in x * 0.02:
        e = evidence_from_groups(series[:n], series[n:], head_within=white * 0.02 ** 2)
        share = round(white_share(e, rho), 2)
        t = e.estimate / math.sqrt(e.variance * (1 / n + 1 / k) * memory_factor(rho, n, k, share))
        alarms += t_sf(abs(t), memory_df(e.df, rho, n, k, share)) < 0.005
    # two-sided at 1%: 30 of 3,000 expected; with the pooled variance's degrees of freedom
    # kept, 80 came
    assert alarms / draws < 0.018
    assert memory_df(20.0, 0.0, n, k, 0.5) == 20.0 and memory_df(20.0, rho, n, k, 0.0) == 20.0


def test_a_tiny_rate_on_a_noisy_history_says_nothing_is_detectable_instead_of_overflowing():
    # 1e-12 a benchmark over three runs spread by a factor of 10: the threshold's t times
    # the scale is far beyond what exp() can hold
    a = assess([1.0, 10.0, 100.0], [50.0], lower_is_better=True,
               policy=RulePolicy(alpha=1e-12, fdr=1e-30))
    assert a.outcome is Outcome.SAME
    assert a.detectable == math.inf
