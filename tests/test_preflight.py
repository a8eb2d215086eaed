from torch_bench.measure.preflight import (
    CpuReading,
    GpuReading,
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
    report = evaluate([HEALTHY], CpuReading(cores=8, busy_percent_others=3))
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


def test_busy_cpu_is_a_warning_not_a_failure():
    report = evaluate([], CpuReading(cores=2, busy_percent_others=80))
    assert report.trusted and checks(report, "warn") == {"cpu_load"}


def test_throttle_mask_decoding_ignores_idle():
    assert decode_throttle_reasons(0x1) == ()  # GPU idle
    assert decode_throttle_reasons(0x4 | 0x40) == ("sw_power_cap", "hw_thermal_slowdown")


def test_cpu_reading_is_taken_from_this_machine():
    reading = read_cpu(interval_s=0.1)
    assert reading.cores >= 1 and 0 <= reading.busy_percent_others <= 100


def test_run_records_the_preflight(cli, tmp_path):
    from conftest import TINY_RNN
    from torch_bench.results.document import load_run

    cli("run", "--suite", "rnns", "--variants", "py", *TINY_RNN, "--out", "r.json", check=True)
    run = load_run(tmp_path / "r.json")
    assert run.env["preflight"]["trusted"] is True and run.trusted
    assert any(f["check"] == "cpu_load" for f in run.env["preflight"]["findings"])
