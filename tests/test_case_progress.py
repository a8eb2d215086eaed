"""A stuck case is visible: where no live bar is drawn (a CI log), a line names the running
case, its time so far and what bounds it, when it starts and every --progress-every seconds."""

from __future__ import annotations

import threading

from torch_bench.cli.case_progress import CaseWatch, bounds_text, progress_line
from torch_bench.config import build_run_config


def test_the_bounds_are_said_in_the_flags_terms():
    adaptive = build_run_config(suites=["rnns"], timing={"max_time_s": 0.2},
                                isolation={"timeout_s": 60})
    assert bounds_text(adaptive) == ("--max-time 0.2 s a metric once --min-repeats 10 are in; "
                                     "the case stopped at --timeout 60 s")
    fixed = build_run_config(suites=["rnns"], timing={"nloops": 100})
    assert bounds_text(fixed).startswith("--nloops 100 samples a metric")
    assert progress_line("rnns/aten", 754.2, "B") == "rnns/aten: running for 12m34s (B)"


def test_the_watch_reports_the_running_case_and_stops_when_it_ends():
    seen: list[str] = []
    spoke = threading.Event()

    def show(text):
        seen.append(text)
        spoke.set()

    now = [100.0]
    with CaseWatch(show, "bounds", every=0.05, clock=lambda: now[0]) as watch:
        watch.started("transformers/tiny-bert (batch_size=64)")
        now[0] = 190.0
        assert spoke.wait(10)
        watch.finished()
        spoke.clear()
        assert not spoke.wait(0.3)  # nothing running: nothing said
    assert seen[0] == "transformers/tiny-bert (batch_size=64): running for 1m30s (bounds)"


def test_a_hung_case_is_named_in_the_log_while_it_runs(cli, tmp_path, child_can_import_support):
    (tmp_path / "c.yaml").write_text(
        "suites: [support.fault_suite]\noptions:\n  support.fault_suite: {cases: [hang]}\n")
    done = cli("run", "--config", "c.yaml", "--timeout", "3", "--progress-every", "0.5",
               "--no-preflight", "--out", "r.json")
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert "[1/1] faults/hang: started" in lines
    running = [line for line in lines if line.startswith("faults/hang: running for ")]
    assert running and "--timeout 3 s" in running[0]
