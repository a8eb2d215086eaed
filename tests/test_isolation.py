"""Isolation with real child processes: every misbehaving case gets a status; the run goes on."""

import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import replace

import psutil
import pytest

from support.hostile_suite import LINGER
from torch_bench.config import build_run_config
from torch_bench.runner import execute, plan_cases

pytestmark = pytest.mark.usefixtures("child_can_import_support")


def run_faults(cases, **isolation):
    # One worker process per case: these are the per-process semantics (test_spread.py
    # covers a case spread over several).
    config = build_run_config(suites=["support.fault_suite"], cli_options={"cases": cases},
                              isolation=isolation, processes=1)
    return {r.name: r for r in execute(plan_cases(config), config) if r.metric == "latency"}


def assert_each_fault_has_its_status(results):
    """The statuses of support.fault_suite's cases raise, ok, abort, exit and hog."""
    assert results["ok"].status == "ok" and results["ok"].summary.median == pytest.approx(2.0)
    assert results["raise"].status == "error"
    assert "ValueError: this case fails on purpose" in results["raise"].error
    assert results["abort"].status == "crash" and "SIGABRT" in results["abort"].error
    assert results["exit"].status == "crash" and "status 3" in results["exit"].error
    assert results["hog"].status == "oom"


def test_each_failure_gets_its_status_and_the_run_goes_on():
    # a generous timeout: on a busy machine loading torch alone can take over 10 s
    results = run_faults("raise,ok,abort,exit,hog,ok", timeout_s=300, memory_limit_mb=1024)
    assert_each_fault_has_its_status(results)
    assert "allocate" in results["hog"].error


def test_a_hung_case_is_stopped_at_the_timeout():
    results = run_faults("hang", timeout_s=1.5)
    assert results["hang"].status == "timeout" and "1.5 s" in results["hang"].error


def test_a_failed_case_keeps_its_group_and_params():
    result = run_faults("raise")["raise"]
    assert result.group == "faults" and result.params == {"device": "cpu"}
    assert result.summary is None and result.samples == ()


def test_successful_case_reports_its_process_peak_memory():
    config = build_run_config(suites=["support.fault_suite"], cli_options={"cases": "ok"})
    results = execute(plan_cases(config), config)
    memory = [r for r in results if r.metric == "peak_rss"]
    assert len(memory) == 1 and memory[0].unit == "MB"
    assert 50 < memory[0].summary.median < 4000  # a Python process with torch imported


def run_hostile(cases, secret_env=(), **isolation):
    config = build_run_config(suites=["support.hostile_suite"], cli_options={"cases": cases},
                              isolation=isolation)
    if secret_env:
        config = replace(config, isolation=replace(config.isolation, secret_env=secret_env))
    return {r.name: r for r in execute(plan_cases(config), config) if r.metric == "latency"}


def test_invalid_numbers_make_only_that_result_an_error():
    results = run_hostile("nan,ok,inf,negative")
    assert results["ok"].status == "ok" and results["ok"].summary.median == pytest.approx(2.0)
    for name, shown in (("nan", "nan"), ("inf", "inf"), ("negative", "cannot be negative")):
        assert results[name].status == "error", name
        assert shown in results[name].error and results[name].samples == ()


def test_a_small_memory_cap_limits_the_case_not_torchs_import():
    results = run_faults("ok,hog", memory_limit_mb=256)
    assert results["ok"].status == "ok", results["ok"].error
    assert results["hog"].status == "oom"


def test_a_timeout_kills_the_case_and_every_process_it_started():
    started = time.monotonic()
    results = run_hostile("escape~hang", timeout_s=1.5)
    # The escaped grandchild holds the case's output for 600 s: a run that waited for it would
    # take that long. Half of it, not a speed figure, so a loaded machine cannot fail this.
    assert time.monotonic() - started < 300
    assert results["escape~hang"].status == "timeout"
    assert not _ours(escaped_processes(), this_process_cases())


def test_a_process_left_behind_by_a_finished_case_is_stopped_with_it():
    started = time.monotonic()
    mine = this_process_cases()
    try:
        results = run_hostile("escape,linger,ok")
        assert time.monotonic() - started < 300  # the escaped process lives for 600 s
        assert all(r.status == "ok" for r in results.values()), results
        assert not _ours(escaped_processes() + escaped_processes(LINGER), mine)
    finally:
        for process in _ours(escaped_processes() + escaped_processes(LINGER), mine):
            process.kill()


def escaped_processes(command=None):
    from support.hostile_suite import ESCAPE

    found = []
    for process in psutil.process_iter(["cmdline", "status"]):
        if (command or ESCAPE) in (process.info["cmdline"] or []) and \
                process.info["status"] != psutil.STATUS_ZOMBIE:
            found.append(process)
    return found


def test_a_bad_result_is_that_cases_error_never_the_runs():
    results = run_hostile("sideways,ok,slash,empty,huge")
    assert results["ok"].status == "ok"
    assert results["sideways"].status == "error" and "direction" in results["sideways"].error
    assert results["slash"].status == "error" and "cannot be stored" in results["slash"].error
    assert results["empty"].status == "error" and "no results" in results["empty"].error
    assert results["huge"].status == "error" and "characters left out" in results["huge"].error
    assert len(results["huge"].error) < 10_000


def test_a_thread_left_running_does_not_turn_a_finished_case_into_a_timeout():
    results = run_hostile("thread,ok", timeout_s=120)
    assert results["thread"].status == "ok" and results["ok"].status == "ok"


def test_sigkill_without_evidence_of_the_oom_killer_is_a_crash_and_a_flood_is_cut():
    results = run_hostile("sigkill,flood")
    assert results["sigkill"].status == "crash" and "SIGKILL" in results["sigkill"].error
    assert "no sign of the out-of-memory killer" in results["sigkill"].error
    assert results["flood"].status == "crash" and "status 3" in results["flood"].error
    assert len(results["flood"].error) < 5_000


def _hostile_run(tmp_path, cases: str) -> list[str]:
    (tmp_path / f"{cases}.yaml").write_text(
        "suites: [support.hostile_suite]\n"
        f"options:\n  support.hostile_suite: {{cases: '{cases}'}}\n")
    return [sys.executable, "-m", "torch_bench", "run", "--config", f"{cases}.yaml",
            "--no-preflight", "--out", str(tmp_path / f"{cases}.json")]


def this_process_cases() -> str:
    """The beginning of the case folders of cases this process runs."""
    return f"{tempfile.gettempdir()}/torch-bench-case-{os.getpid()}."


def _ours(processes, scratch):
    """Those of `processes` whose case folder starts with `scratch` (other test runs on this
    machine may have escaped processes of their own)."""
    mine = []
    for process in processes:
        try:
            folder = process.environ().get("TORCH_BENCH_CASE_FOLDER", "")
        except psutil.Error:
            continue
        if folder.startswith(str(scratch)):
            mine.append(process)
    return mine


def test_a_killed_run_takes_its_worker_along_and_the_next_run_its_leftovers(tmp_path):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch)}
    started = subprocess.Popen(_hostile_run(tmp_path, "escape~hang"), cwd=tmp_path, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        while not _ours(escaped_processes(), scratch) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _ours(escaped_processes(), scratch), "the case never started its grandchild"
        worker = psutil.Process(started.pid).children()
        os.kill(started.pid, signal.SIGKILL)  # not its group: only the run itself dies
        started.wait()
        assert worker and psutil.wait_procs(worker, timeout=60)[1] == []  # the worker died
        assert _ours(escaped_processes(), scratch)  # the grandchild is still there
        subprocess.run(_hostile_run(tmp_path, "ok"), cwd=tmp_path, env=env, check=True,
                       capture_output=True, timeout=600)
        assert not _ours(escaped_processes(), scratch)  # the next run found it and killed it
        assert not list(scratch.iterdir())  # and removed its folder
    finally:
        for process in _ours(escaped_processes(), scratch):
            process.kill()


def test_a_crash_message_keeps_the_cases_frames_and_drops_ours():
    from torch_bench.execute.isolation import readable_tail

    printed = (
        "Traceback (most recent call last):\n"
        '  File "/venv/lib/python3.11/site-packages/torch_bench/execute/worker.py", line 55, '
        "in run_request\n"
        "    results = list(suite.run_case(case, ctx))\n"
        "                   ^^^^^^^^^^^^^^^^^^^^^^^^^\n"
        '  File "/home/me/bench/suite.py", line 9, in run_case\n'
        "    load(path)\n"
        "    ~~~~^^^^^^\n"
        "OSError: cannot load /data/x\n")
    assert readable_tail(printed) == ['File "/home/me/bench/suite.py", line 9, in run_case',
                                      "load(path)", "OSError: cannot load /data/x"]
