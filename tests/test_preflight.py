import json
import subprocess
import sys

import pytest

from torch_bench.measure.preflight import (
    CpuReading,
    CpuTimes,
    GpuReading,
    Thresholds,
    cpu_reading,
    decode_throttle_reasons,
    evaluate,
    read_cpu,
)

HEALTHY = GpuReading(index=0, name="A100", temperature_c=45, slowdown_temperature_c=90,
                     sm_clock_mhz=1410, sm_clock_max_mhz=1410, power_limit_w=400,
                     default_power_limit_w=400)


def checks(report, severity):
    return {f.check for f in report.findings if f.severity == severity}


def test_healthy_gpu_is_trusted():
    report = evaluate([HEALTHY], CpuReading(cores=8, others_core_percent=3))
    assert report.trusted and checks(report, "fail") == set()


def test_each_problem_fails_its_check_and_names_the_gpu():
    from dataclasses import replace

    bad = replace(HEALTHY, other_processes=(4242,), temperature_c=88, power_limit_w=250,
                  throttle_reasons=("hw_thermal_slowdown",))
    report = evaluate([bad], None)
    assert not report.trusted
    assert checks(report, "fail") == {"gpu_processes", "temperature", "power_limit", "throttling"}
    assert all("GPU 0 (A100)" in f.message for f in report.findings)
    assert "4242" in next(f.message for f in report.findings if f.check == "gpu_processes")
    assert report.to_dict()["trusted"] is False


def test_other_processes_over_a_tenth_of_a_core_make_the_run_untrusted():
    report = evaluate([], CpuReading(cores=2, others_core_percent=12, interval_s=1))
    assert not report.trusted and checks(report, "fail") == {"cpu_load"}
    assert "12% of one core" in report.findings[0].message
    assert "--cpu-busy-limit" in report.findings[0].message
    assert evaluate([], CpuReading(cores=2, others_core_percent=8)).trusted


def test_the_cpu_limit_can_be_raised_for_a_shared_machine():
    shared = Thresholds(cpu_busy_limit=150)
    assert evaluate([], CpuReading(cores=4, others_core_percent=120), shared).trusted
    assert not evaluate([], CpuReading(cores=4, others_core_percent=160), shared).trusted


def test_cpu_reading_counts_only_what_others_used_per_second_of_wall_time():
    before = CpuTimes(at_s=10.0, machine_busy_s=100.0, own_s=5.0)
    after = CpuTimes(at_s=12.0, machine_busy_s=103.0, own_s=6.8)  # 3 s busy, 1.8 s ours
    reading = cpu_reading(before, after, cores=4)
    assert reading.others_core_percent == pytest.approx(60.0)
    assert reading.interval_s == pytest.approx(2.0)
    quiet = cpu_reading(before, CpuTimes(12.0, 101.0, 6.2), cores=4)  # all of it ours
    assert quiet.others_core_percent == 0.0
    overshoot = cpu_reading(before, CpuTimes(10.1, 100.25, 5.0), cores=2)  # coarse counters
    assert overshoot.others_core_percent == pytest.approx(200.0)


def test_read_cpu_takes_two_snapshots_around_the_interval():
    snapshots = iter([CpuTimes(0.0, 0.0, 0.0), CpuTimes(1.0, 0.5, 0.1)])
    slept = []
    reading = read_cpu(1.0, take=lambda: next(snapshots), sleep=slept.append)
    assert slept == [1.0] and reading.others_core_percent == pytest.approx(40.0)


def test_throttle_mask_decoding_ignores_idle():
    assert decode_throttle_reasons(0x1) == ()  # GPU idle
    assert decode_throttle_reasons(0x4 | 0x40) == ("sw_power_cap", "hw_thermal_slowdown")


def test_cpu_reading_is_taken_from_this_machine():
    reading = read_cpu(interval_s=0.1)
    assert reading.cores >= 1 and 0 <= reading.others_core_percent <= 100 * reading.cores


def test_a_process_keeping_a_core_busy_is_detected(cli):
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        done = cli("preflight", "--json", check=True)
    finally:
        hog.kill()
        hog.wait()
    report = json.loads(done.stdout)
    cpu = next(f for f in report["findings"] if f["check"] == "cpu_load")
    assert cpu["severity"] == "fail" and report["trusted"] is False


def test_run_records_the_preflight(cli, tmp_path):
    from conftest import TINY_RNN
    from torch_bench.results.document import load_run

    # A limit no machine can exceed, so that the outcome does not depend on the load.
    cli("run", "--suite", "rnns", "--variants", "py", *TINY_RNN, "--cpu-busy-limit", "100000",
        "--out", "r.json", check=True)
    run = load_run(tmp_path / "r.json")
    assert run.env["preflight"]["trusted"] is True and run.trusted
    assert any(f["check"] == "cpu_load" for f in run.env["preflight"]["findings"])
    assert run.config["preflight"]["cpu_busy_limit"] == 100000


def timed(name, share, clock="wall"):
    from torch_bench.results.schema import measured

    return measured("s", name, "forward_time", [1.0, 1.1, 1.2],
                    extra={"clock": clock, "interrupted_share": share})


def test_a_busy_cpu_fails_the_wall_clock_but_only_warns_on_the_cpu_clock():
    busy = CpuReading(cores=2, others_core_percent=150, interval_s=1.0)
    assert not evaluate([], busy).trusted
    on_cpu = evaluate([], busy, clock="cpu")
    assert on_cpu.trusted and checks(on_cpu, "warn") == {"cpu_load"}
    assert "interruptions decide" in on_cpu.findings[0].message


def test_a_run_whose_typical_result_was_interrupted_too_often_is_untrusted_with_that_reason():
    from torch_bench.measure.preflight import Preflight, evaluate_interruptions, with_findings

    disturbed = evaluate_interruptions([timed("a", 0.6), timed("b", 0.4), timed("c", 0.1)])
    report = with_findings(Preflight(), disturbed)
    assert not report.trusted
    [finding] = report.findings
    assert finding.check == "interruptions" and "40% in the typical result" in finding.message
    assert "60% at worst (s/a[]:forward_time)" in finding.message
    assert "2 of 3 result(s) above the 25% the wall clock tolerates" in finding.message


def test_the_cpu_clock_tolerates_more_interruptions_and_one_bad_result_only_warns():
    from torch_bench.measure.preflight import evaluate_interruptions

    [cpu] = evaluate_interruptions([timed("a", 0.6, "cpu"), timed("b", 0.5, "cpu")])
    assert cpu.severity == "ok"
    [one] = evaluate_interruptions([timed("a", 0.9), timed("b", 0.0), timed("c", 0.1)])
    assert one.severity == "warn"
    assert evaluate_interruptions([timed("a", 0.0)])[0].severity == "ok"
    from torch_bench.results.schema import measured

    assert evaluate_interruptions([measured("s", "x", "latency", [1.0])]) == []  # not counted


def test_a_busy_cpu_with_several_torch_threads_names_threads_1_as_the_remedy():
    busy = CpuReading(cores=2, others_core_percent=150, interval_s=1.0)
    for clock in ("wall", "cpu"):
        [finding] = evaluate([], busy, clock=clock, threads=2).findings
        assert "the cases run 2 torch threads" in finding.message
        assert "pass --threads 1" in finding.message
    for quiet in (evaluate([], busy, threads=1), evaluate([], busy),
                  evaluate([], CpuReading(cores=2, others_core_percent=2, interval_s=1.0),
                           threads=2)):
        assert "--threads 1" not in quiet.findings[0].message


def test_a_slower_benchmark_beside_the_same_neighbour_is_judged_by_its_rate_not_its_share():
    # CPU-clock blocks of 1 ms and of 4 ms, both interrupted 1,200 times a second of CPU
    # time: the long blocks are all cut, the short ones 80%; per second, alike, and 1 ms
    # blocks at that rate are cut 70% of the time, within what the CPU clock tolerates.
    from torch_bench.measure.preflight import evaluate_interruptions
    from torch_bench.results.schema import measured

    def timed_blocks(name, block_ms, switches):
        return measured("s", name, "latency", [block_ms] * 20,
                        extra={"clock": "cpu", "loops": 1, "involuntary_switches": switches,
                               "interrupted_share": sum(1 for k in switches if k) / 20})

    short = timed_blocks("short", 1.0, [1, 0, 2, 1, 2] * 4)
    long = timed_blocks("long", 4.0, [5, 5, 4, 5, 5] * 4)
    assert long.extra["interrupted_share"] == 1.0
    [finding] = evaluate_interruptions([short, long])
    assert finding.severity == "ok"
    assert "70% in the typical result, 70% at worst" in finding.message
