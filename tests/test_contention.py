"""A result's own samples showing contention: too many interrupted, interrupted ones slower,
or two clusters of samples (calls that ran alone and calls that lost a time slice)."""

from pathlib import Path

import numpy as np

from torch_bench.analyze.contention import contention_reason
from torch_bench.results.schema import failed, measured

# Real A/B rounds of the demo project's MLP and its doubled head (about 3 and 5.5 ms a call)
# beside 4 busy loops and 4 loops starting /bin/true, on the CPU clock: the first round of an
# A/B and of its confirmation.
RECORDS = Path(__file__).parent / "fixtures" / "contention"


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


def steady_neighbour(block_ms, rate_per_s, n, clock="cpu", seed=0):
    """A result timed as the timer records it (one call a block) under a neighbour that
    preempts at a steady rate per second of CPU time: each block's switches a Poisson count."""
    rng = np.random.default_rng(seed)
    samples = lognormal(block_ms, n, seed=seed)
    switches = [int(k) for k in rng.poisson(rate_per_s * block_ms / 1000.0, n)]
    extra = {"clock": clock, "loops": 1, "involuntary_switches": switches,
             "interrupted_share": sum(1 for k in switches if k) / n}
    if clock != "cpu":
        extra["cpu_samples"] = samples
    return measured("s", "b", "latency", samples, extra=extra)


def test_a_side_twice_as_slow_under_the_same_steady_neighbour_is_not_doubted_for_it():
    # 800 switches a second of CPU time cut 93% of 3.3 ms blocks and 72% of 1.6 ms ones: a
    # share of samples would doubt the slower side alone, the rate sees the same neighbour
    fast, slow = steady_neighbour(1.6, 800, 40), steady_neighbour(3.3, 800, 40, seed=1)
    assert slow.extra["interrupted_share"] > 0.9 > fast.extra["interrupted_share"]
    assert contention_reason(fast) is None and contention_reason(slow) is None
    # on the wall clock the same neighbour is too much for both sides alike
    fast, slow = (steady_neighbour(ms, 800, 40, "wall", seed) for ms, seed in ((1.6, 0),
                                                                               (3.3, 1)))
    assert contention_reason(fast).startswith("its blocks were interrupted by other processes")
    assert "the 25% the wall clock tolerates" in contention_reason(slow)


def test_the_rate_of_a_real_record_is_its_switches_per_second_of_cpu_time():
    from torch_bench.analyze.contention import interruption_rate
    from torch_bench.results.document import load_run

    [head] = load_run(RECORDS / "head-round1.json").results
    switches, cpu_ms = head.extra["involuntary_switches"], sum(head.samples)
    assert abs(interruption_rate(head) - 1000 * sum(switches) / cpu_ms) < 1e-9
    # every block of the slower side was cut, at the rate the faster side's were
    assert head.extra["interrupted_share"] == 1.0
    assert contention_reason(head) is None


def test_interleaved_sides_doubt_the_slower_only_for_a_burst_on_its_own_rounds():
    from torch_bench.analyze.contention import burst_reason

    fast = [steady_neighbour(1.6, 600, 40, "wall", seed) for seed in (0, 1)]
    slow = [steady_neighbour(3.3, 600, 40, "wall", seed) for seed in (2, 3)]
    assert burst_reason(slow, fast) is None  # both over the wall clock's limit: neighbours
    quiet = [steady_neighbour(1.6, 100, 40, "wall", seed) for seed in (0, 1)]
    assert "interrupted by other processes" in burst_reason(slow, quiet)
    # the faster side's contention shows no rate: it clears the slower's as before
    hit = [measured("s", "b", "latency", lognormal(1.6, 40), extra={"clock": "wall",
                                                                   "interrupted_share": 0.5})]
    assert burst_reason(slow, hit) is None


def test_a_record_without_times_or_counts_has_no_rate():
    from torch_bench.analyze.contention import interruption_rate

    plain = result(lognormal(2.0, 20), clock="wall", involuntary_switches=[1] * 20)
    assert interruption_rate(plain) is None  # wall clock, no CPU samples beside them
    assert interruption_rate(result(lognormal(2.0, 20), clock="cpu")) is None
    bad = result(lognormal(2.0, 20), clock="cpu", involuntary_switches=["1"] * 20)
    assert interruption_rate(bad) is None


def test_real_ab_rounds_of_a_doubled_model_under_a_steady_neighbour_call_the_regression():
    # The head's blocks were nearly all cut (93-100%), the base's 77-83%, at the same rate
    # per second: the doubled MLP is a regression, not the neighbour's doing.
    from torch_bench.analyze.verdicts import Kind, compare_runs
    from torch_bench.results.document import load_run

    def side(name):
        return [load_run(RECORDS / f"{name}-{which}.json") for which in ("round1",
                                                                        "confirm-round1")]

    [verdict] = compare_runs(side("base"), side("head"), side_by_side=True).verdicts
    assert verdict.kind is Kind.REGRESSION, verdict.note
    assert verdict.assessment.relative_ratio > 1.5
