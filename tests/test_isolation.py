"""Isolation with real child processes: every misbehaving case gets a status; the run goes on."""

import time

import pytest

from torch_bench.config import build_run_config
from torch_bench.runner import execute, plan_cases

pytestmark = pytest.mark.usefixtures("child_can_import_support")


def run_faults(cases, **isolation):
    config = build_run_config(suites=["support.fault_suite"], cli_options={"cases": cases},
                              isolation=isolation)
    return {r.name: r for r in execute(plan_cases(config), config) if r.metric == "latency"}


def test_each_failure_gets_its_status_and_the_run_goes_on():
    started = time.monotonic()
    results = run_faults("raise,ok,abort,hang,exit,hog,ok", timeout_s=8, memory_limit_mb=1024)
    assert time.monotonic() - started < 60
    assert results["ok"].status == "ok" and results["ok"].summary.median == pytest.approx(2.0)
    assert results["raise"].status == "error"
    assert "ValueError: this case fails on purpose" in results["raise"].error
    assert results["abort"].status == "crash" and "SIGABRT" in results["abort"].error
    assert results["hang"].status == "timeout" and "8 s" in results["hang"].error
    assert results["exit"].status == "crash" and "status 3" in results["exit"].error
    assert results["hog"].status == "oom"
    assert "allocate" in results["hog"].error


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
