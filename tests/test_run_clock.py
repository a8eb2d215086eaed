"""`torch-bench run --clock`: which clock the samples are on, recorded in the document, and
the interruptions of the samples checked after the run."""

import json

from conftest import TINY_RNN

CASE = ["--suite", "rnns", "--variants", "py", *TINY_RNN]


def test_one_thread_on_cpu_is_timed_on_cpu_time_with_wall_time_beside_it(cli, tmp_path):
    done = cli("run", *CASE, "--cpu-busy-limit", "400", "--out", "auto.json")
    assert done.returncode == 0, done.stderr
    assert "clock: process CPU time" in done.stderr
    run = json.loads((tmp_path / "auto.json").read_text())
    assert run["config"]["timing"]["clock"] == "cpu" and run["env"]["clock"] == "cpu"
    timed = [r for r in run["results"] if r["metric"].endswith("_time")]
    assert {r["extra"]["clock"] for r in timed} == {"cpu"}
    for result in timed:
        assert len(result["extra"]["wall_samples"]) == len(result["samples"])
        assert len(result["extra"]["involuntary_switches"]) == len(result["samples"])
        assert 0 <= result["extra"]["interrupted_share"] <= 1
        assert len(result["extra"]["reference_samples"]) == len(result["samples"])
    assert run["config"]["timing"]["reference"] is True
    checks = {f["check"] for f in run["env"]["preflight"]["findings"]}
    assert "interruptions" in checks

    done = cli("run", *CASE, "--clock", "wall", "--no-preflight", "--out", "wall.json")
    assert done.returncode == 0, done.stderr
    wall = json.loads((tmp_path / "wall.json").read_text())
    assert {r["extra"]["clock"] for r in wall["results"] if r["metric"].endswith("_time")} \
        == {"wall"}
    assert "clock" not in wall["env"]
    assert not any("reference_samples" in r["extra"] for r in wall["results"])
    # Samples on different clocks are never compared with each other.
    assert wall["env"]["fingerprint"] != run["env"]["fingerprint"]


def test_many_threads_default_to_wall_time_and_cpu_time_of_them_is_warned_about(cli):
    done = cli("run", *CASE, "--threads", "2", "--dry-run", "--clock", "cpu")
    assert done.returncode == 0
    assert "clock warning: --clock cpu with 2 torch threads" in done.stderr


def test_an_unknown_clock_is_one_line_naming_the_flag(cli):
    done = cli("run", *CASE, "--clock", "sundial", "--dry-run")
    assert done.returncode == 2 and "--clock" in done.stderr and "Traceback" not in done.stderr


def test_the_speed_reference_can_be_left_out(cli, tmp_path):
    done = cli("run", *CASE, "--no-speed-reference", "--no-preflight", "--out", "plain.json")
    assert done.returncode == 0, done.stderr
    run = json.loads((tmp_path / "plain.json").read_text())
    assert {r["extra"]["clock"] for r in run["results"] if r["metric"].endswith("_time")} \
        == {"cpu"}
    assert not any("reference_samples" in r["extra"] for r in run["results"])


def test_a_case_spread_over_processes_keeps_the_speed_reference_of_every_sample(cli, tmp_path):
    done = cli("run", *CASE, "--processes", "2", "--no-preflight", "--out", "two.json")
    assert done.returncode == 0, done.stderr
    run = json.loads((tmp_path / "two.json").read_text())
    timed = [r for r in run["results"] if r["metric"].endswith("_time")]
    assert timed
    for result in timed:
        assert len(result["extra"]["process_sizes"]) == 2
        assert len(result["extra"]["reference_samples"]) == len(result["samples"])
