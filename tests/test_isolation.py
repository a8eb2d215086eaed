"""Isolation with real child processes: every misbehaving case gets a status; the run goes on."""

import time
from dataclasses import replace

import psutil
import pytest

from torch_bench.config import build_run_config
from torch_bench.runner import execute, plan_cases

pytestmark = pytest.mark.usefixtures("child_can_import_support")


def run_faults(cases, **isolation):
    # One worker process per case: these are the per-process semantics (test_spread.py
    # covers a case spread over several).
    config = build_run_config(suites=["support.fault_suite"], cli_options={"cases": cases},
                              isolation=isolation, processes=1)
    return {r.name: r for r in execute(plan_cases(config), config) if r.metric == "latency"}


def test_each_failure_gets_its_status_and_the_run_goes_on():
    # a generous timeout: on a busy machine loading torch alone can take over 10 s
    results = run_faults("raise,ok,abort,exit,hog,ok", timeout_s=300, memory_limit_mb=1024)
    assert results["ok"].status == "ok" and results["ok"].summary.median == pytest.approx(2.0)
    assert results["raise"].status == "error"
    assert "ValueError: this case fails on purpose" in results["raise"].error
    assert results["abort"].status == "crash" and "SIGABRT" in results["abort"].error
    assert results["exit"].status == "crash" and "status 3" in results["exit"].error
    assert results["hog"].status == "oom"
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
    assert time.monotonic() - started < 20  # the escaped grandchild holds the case's output
    assert results["escape~hang"].status == "timeout"
    assert not escaped_processes()


def test_a_process_left_behind_by_a_finished_case_does_not_hold_up_the_run():
    started = time.monotonic()
    try:
        results = run_hostile("escape,ok")
        assert time.monotonic() - started < 300  # the escaped process lives for 600 s
        assert results["escape"].status == "ok" and results["ok"].status == "ok"
    finally:
        for process in escaped_processes():
            process.kill()


def escaped_processes():
    from support.hostile_suite import ESCAPE

    found = []
    for process in psutil.process_iter(["cmdline"]):
        if ESCAPE in (process.info["cmdline"] or []):
            found.append(process)
    return found


def test_cases_start_without_tokens_and_captured_text_is_scrubbed(monkeypatch):
    secret = "s3cr3t-value-from-the-runner"
    monkeypatch.setenv("GITHUB_TOKEN", secret)
    monkeypatch.setenv("ACTIONS_RUNTIME_TOKEN", "runtime-" + secret)
    monkeypatch.setenv("INPUT_TOKEN", "input-" + secret)
    monkeypatch.setenv("MY_PAT", "pat-" + secret)
    monkeypatch.setenv("HOSTILE_ECHO", f"pat-{secret} and {secret}")  # a case that finds them
    results = run_hostile("leak,leak~exit", secret_env=("MY_PAT",))
    error, tail = results["leak"].error, results["leak~exit"].error
    assert "'GITHUB_TOKEN': None" in error and "'MY_PAT': None" in error
    assert "'ACTIONS_RUNTIME_TOKEN': None" in error and "'INPUT_TOKEN': None" in error
    assert results["leak~exit"].status == "crash" and "stderr tail:" in tail
    for text in (error, tail):
        assert secret not in text and "ghp_" not in text and "***" in text
