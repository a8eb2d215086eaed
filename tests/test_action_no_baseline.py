"""What the Action says when it finds no baseline: a first stored run starts the history (a
run that is not stored says why), and runs left out because their pre-flight check failed
are named, with what to change."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from support.runs import make_run, ok
from torch_bench.action import stages
from torch_bench.action.context import read_context
from torch_bench.action.inputs import read_inputs
from torch_bench.action.left_out import left_out_note
from torch_bench.results.document import save_run
from torch_bench.store.layout import run_path

BUSY = {"trusted": False, "findings": [
    {"check": "cpu_load", "severity": "fail",
     "message": "other processes used 80% of one core (limit 10%)"}]}


def busy(run):
    return replace(run, env={**run.env, "preflight": BUSY})


@pytest.fixture
def pr_job(tmp_path, monkeypatch):
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {
        "number": 7, "head": {"sha": "b" * 40, "repo": {"full_name": "octo/bench"}},
        "base": {"ref": "main", "repo": {"full_name": "octo/bench"}}}}))
    summary = tmp_path / "summary.md"
    summary.write_text("")
    environ = {"GITHUB_EVENT_PATH": str(event), "GITHUB_EVENT_NAME": "pull_request",
               "GITHUB_REPOSITORY": "octo/bench", "GITHUB_WORKSPACE": str(tmp_path),
               "GITHUB_STEP_SUMMARY": str(summary)}
    for key, value in environ.items():
        monkeypatch.setenv(key, value)
    head = make_run([ok("lstm", 10.0, seed=9)], sha="b" * 40, branch="feature",
                    base_branch="main", pr=7, run_id="head")
    save_run(head, tmp_path / "out" / "results.json")
    return environ, tmp_path


def compare_in(environ, root, history_runs):
    history = root / "history"
    history.mkdir()
    for run in history_runs:
        save_run(run, history / run_path(run))
    paths = stages.Paths(root / "out")
    outcome = stages.compare(read_inputs({"TB_AB": "never", "TB_DEVICE": "cpu"}),
                             read_context(environ), paths.results, history, paths, "bench")
    return outcome, (root / "summary.md").read_text()


def test_runs_left_out_by_a_failed_pre_flight_are_named_in_the_summary(pr_job):
    environ, root = pr_job
    runs = [busy(make_run([ok("lstm", 10.0, seed=i)], sha=f"{i:040x}", run_id=f"h{i}",
                          created_at=f"2026-01-0{i + 1}T00:00:00Z")) for i in range(3)]
    outcome, summary = compare_in(environ, root, runs)
    assert outcome.verdict == "no-baseline"
    assert "3 runs left out: CPU busy during pre-flight; see --cpu-busy-limit" in summary
    assert "starts the history" not in summary


def test_a_pr_without_a_baseline_says_it_is_not_stored_rather_than_starting_the_history(
        pr_job):
    environ, root = pr_job
    outcome, summary = compare_in(environ, root, [])
    assert outcome.verdict == "no-baseline"
    assert "This run is not stored, so it does not start the history either: PR runs are " \
        "compared with their base branch, never stored" in summary
    assert "starts the history" not in summary and "left out" not in summary


def test_several_reasons_are_each_said_once_most_frequent_first():
    throttled = {"trusted": False, "findings": [
        {"check": "throttling", "severity": "fail", "message": "throttled"},
        {"check": "cpu_load", "severity": "ok", "message": "fine"}]}
    runs = [busy(make_run([])), busy(make_run([])),
            replace(make_run([]), env={"preflight": throttled})]
    assert left_out_note(runs) == ("3 runs left out: CPU busy during pre-flight; see "
                                   "--cpu-busy-limit · GPU throttled during pre-flight")
    assert left_out_note([]) is None
