"""A result's own samples showing contention: too many interrupted, interrupted ones slower,
or two clusters of samples (calls that ran alone and calls that lost a time slice)."""

import numpy as np

from torch_bench.analyze.contention import contention_reason
from torch_bench.results.schema import failed, measured


def lognormal(median, n, cv=0.02, seed=0):
    return list(median * np.exp(np.random.default_rng(seed).normal(0.0, cv, n)))


def result(samples, metric="forward_time", **extra):
    return measured("s", "b", metric, samples, extra=extra)


def test_steady_samples_show_no_contention():
    steady = lognormal(2.0, 60)
    assert contention_reason(result(steady)) is None
    assert contention_reason(result(steady, clock="cpu", interrupted_share=0.05,
                                    involuntary_switches=[0] * 57 + [1] * 3)) is None


def test_a_wide_but_single_hill_is_not_called_bimodal():
    assert contention_reason(result(lognormal(2.0, 200, cv=0.25, seed=3))) is None


def test_too_many_interrupted_samples_are_named_with_the_clocks_limit():
    samples = lognormal(2.0, 40)
    reason = contention_reason(result(samples, clock="wall", interrupted_share=0.4))
    assert reason == ("40% of its samples were interrupted by other processes (more than the "
                      "25% the wall clock tolerates)")
    # The CPU clock does not count the time taken away: 40% is within what it tolerates.
    assert contention_reason(result(samples, clock="cpu", interrupted_share=0.4)) is None


def test_interrupted_samples_that_took_longer_are_named():
    samples = lognormal(2.0, 36) + lognormal(6.0, 4, seed=1)  # 4 calls lost a time slice
    switches = [0] * 36 + [1] * 4
    reason = contention_reason(result(samples, clock="wall", interrupted_share=0.1,
                                      involuntary_switches=switches))
    assert reason.startswith("10% of its samples were interrupted by other processes and "
                             "took 3.0x as long")


def test_two_clusters_without_switch_counts_are_called_bimodal():
    samples = lognormal(2.2, 30) + lognormal(7.0, 10, seed=2)
    assert "two clusters: 25% of them 3.2x slower" in contention_reason(result(samples))


def test_a_rate_under_contention_drops_and_is_seen_too():
    times = lognormal(2.2, 30) + lognormal(7.0, 10, seed=2)
    rates = [1000.0 / t for t in times]
    assert "two clusters" in contention_reason(result(rates, metric="throughput"))


def test_failed_or_tiny_results_say_nothing():
    assert contention_reason(failed("s", "b", "forward_time", "error", "boom")) is None
    assert contention_reason(result([1.0, 9.0, 1.0, 9.0])) is None


def test_the_uninterrupted_samples_are_those_of_blocks_nothing_cut_when_there_are_enough():
    from torch_bench.analyze.contention import uninterrupted_samples

    samples = [1.0] * 8 + [1.3, 1.4]
    cut = result(samples, involuntary_switches=[0] * 8 + [2, 1])
    assert uninterrupted_samples(cut) == (1.0,) * 8
    mostly_cut = result(samples, involuntary_switches=[1] * 9 + [0])
    assert uninterrupted_samples(mostly_cut) == tuple(samples)  # too few left: all of them
    assert uninterrupted_samples(result(samples)) == tuple(samples)  # switches not counted
