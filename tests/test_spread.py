"""A case's samples spread over worker processes: bounds shared out, results joined, loops
calibrated once, and any process's failure is the case's status."""

import pytest

from torch_bench.analyze.speed_scaling import speed_ratios
from torch_bench.config import build_run_config
from torch_bench.measure.spread import join_processes, process_policies, shares
from torch_bench.measure.timer import TimingPolicy
from torch_bench.results.schema import failed, measured
from torch_bench.runner import execute, plan_cases


def test_sample_bounds_are_totals_shared_out_among_the_processes():
    assert shares(10, 3) == [4, 3, 3] and shares(2, 3) == [1, 1, 0]
    fixed = process_policies(TimingPolicy(min_repeats=20, max_repeats=20, max_time_s=0.01), 3)
    assert [(p.min_repeats, p.max_repeats) for p in fixed] == [(7, 7), (7, 7), (6, 6)]
    assert sum(p.max_time_s for p in fixed) == pytest.approx(0.01)
    assert [p.nloops for p in process_policies(TimingPolicy(nloops=10), 3)] == [4, 3, 3]


def test_never_more_processes_than_samples():
    assert len(process_policies(TimingPolicy(min_repeats=1, max_repeats=2), 5)) == 2
    assert len(process_policies(TimingPolicy(nloops=1), 3)) == 1
    assert len(process_policies(TimingPolicy(), 1)) == 1


def test_joined_results_keep_every_sample_and_say_which_process_gave_it():
    first = [measured("s", "c", "forward_time", [1.0, 1.1], extra={"loops": 8}),
             measured("s", "c", "peak_rss", [300.0])]
    second = [measured("s", "c", "forward_time", [1.2, 1.3, 1.4], extra={"loops": 8}),
              measured("s", "c", "peak_rss", [320.0])]
    third = [measured("s", "c", "forward_time", [1.5], extra={"loops": 8}),
             measured("s", "c", "peak_rss", [900.0])]
    time, memory = join_processes([first, second, third])
    assert time.samples == (1.0, 1.1, 1.2, 1.3, 1.4, 1.5)
    assert time.extra == {"loops": 8, "process_sizes": [2, 3, 1]}
    assert time.summary.n == 6 and time.summary.median == pytest.approx(1.25)
    # Memory: one figure per process; the median is the typical process, max the worst.
    assert memory.extra["process_sizes"] == [1, 1, 1]
    assert memory.summary.median == pytest.approx(320.0)
    assert memory.summary.max == pytest.approx(900.0)


def test_the_clock_and_interruptions_of_every_sample_are_joined_like_the_samples():
    def part(samples, wall, switches, reference):
        return [measured("s", "c", "forward_time", samples,
                         extra={"loops": 8, "clock": "cpu", "wall_samples": wall,
                                "involuntary_switches": switches, "migrations": 1,
                                "interrupted_share": 0.0, "cpu_wall_ratio": 1.0,
                                "reference": "sgemm", "reference_samples": reference})]

    [joined] = join_processes([part([1.0, 1.1], [1.0, 5.0], [0, 2], [0.5, 0.6]),
                               part([1.2], [1.2], [0], [0.7]), part([1.0], [4.0], [1], [0.8])])
    assert joined.extra["wall_samples"] == [1.0, 5.0, 1.2, 4.0]
    # The speed reference beside every sample, or the verdicts cannot divide it out.
    assert joined.extra["reference_samples"] == [0.5, 0.6, 0.7, 0.8]
    assert speed_ratios(joined) is not None
    # A field one process lacks is left out rather than kept short of the samples.
    lacking = part([1.3], [1.3], [0], [0.9])
    del lacking[0].extra["reference_samples"]
    [partial] = join_processes([part([1.0, 1.1], [1.0, 5.0], [0, 2], [0.5, 0.6]), lacking])
    assert "reference_samples" not in partial.extra and speed_ratios(partial) is None
    assert partial.extra["wall_samples"] == [1.0, 5.0, 1.3]
    assert joined.extra["involuntary_switches"] == [0, 2, 0, 1]
    assert joined.extra["interrupted_share"] == pytest.approx(0.5)
    assert joined.extra["migrations"] == 3 and joined.extra["clock"] == "cpu"


def test_one_process_is_left_as_it_is():
    only = [measured("s", "c", "forward_time", [1.0, 2.0]),
            failed("s", "c", "backward_time", "error", "e")]
    assert join_processes([only]) == only


def run_processes(cases, tmp_path, **timing):
    config = build_run_config(suites=["support.process_suite"], processes=3, timing=timing,
                              cli_options={"cases": cases, "marker": str(tmp_path / "marker")})
    return {r.name: r for r in execute(plan_cases(config), config) if r.metric == "latency"}


@pytest.mark.usefixtures("child_can_import_support")
def test_a_case_runs_in_several_processes_and_the_first_one_calibrates(tmp_path):
    result = run_processes("steady", tmp_path, min_repeats=10, max_repeats=10)["steady"]
    assert result.status == "ok" and result.extra["process_sizes"] == [4, 3, 3]
    # The first process calibrated (its count is its pid); the other two reused its count.
    assert len(set(result.samples)) == 1 and result.extra["loops"] == result.samples[0]


@pytest.mark.usefixtures("child_can_import_support")
def test_a_crash_in_a_later_process_is_the_case_status(tmp_path):
    result = run_processes("crash_second,steady", tmp_path, min_repeats=3, max_repeats=3)
    assert result["crash_second"].status == "crash"
    assert "SIGABRT" in result["crash_second"].error
    assert result["steady"].status == "ok" and len(result["steady"].samples) == 3
