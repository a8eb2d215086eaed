"""The Action's verdict, as a workflow author reads it: with `fail-on-regression`, a slowdown
that only the whole-run test calls fails the job with a warning and an `::error` naming it,
and the step outputs agree (`verdict=regression`, `regressions` counting the whole run). The
pipeline runs in this process against a local bare data remote, its PR head ingested from a
run document."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from support.runs import history, make_run, ok
from torch_bench.action import stages
from torch_bench.action.pipeline import run_pipeline
from torch_bench.results.document import save_run
from torch_bench.store.remote import Target

SUITE = {f"b{i}": 1.0 + i for i in range(8)}


@pytest.fixture
def pr_job(tmp_path):
    """A data remote holding 12 quiet runs of main, and a PR event."""
    remote = tmp_path / "data.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    runs = tmp_path / "main-runs"
    for run in history(12, SUITE, spread=0.005):
        save_run(run, runs / f"{run.run_id}.json")
    stages.store(runs, Target(str(remote), "gh-pages", "benchmarks"), None)
    event, outputs, summary = (tmp_path / name for name in ("event.json", "outputs", "summary"))
    repo = {"full_name": "octo/bench", "default_branch": "main"}
    event.write_text(json.dumps({"repository": repo, "pull_request": {
        "number": 7, "head": {"sha": "b" * 40, "ref": "feature", "repo": repo},
        "base": {"sha": "0" * 40, "ref": "main", "repo": repo}}}))
    outputs.write_text("")
    summary.write_text("")
    environ = {"GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": str(event),
               "GITHUB_REPOSITORY": "octo/bench", "GITHUB_ACTIONS": "true",
               "GITHUB_OUTPUT": str(outputs), "GITHUB_STEP_SUMMARY": str(summary),
               "GITHUB_WORKSPACE": str(tmp_path), "GITHUB_REF": "refs/pull/7/merge",
               "TB_DATA_REMOTE": str(remote), "TB_OUTPUT_DIR": str(tmp_path / "out"),
               "TB_DEVICE": "cpu", "TB_BASELINE": "latest", "TB_AB": "never",
               "TB_CONFIRM_BUDGET": "0", "TB_EXPLAIN": "never", "TB_COMMENT": "never",
               "TB_PUSH": "false", "TB_BUILD_SITE": "false", "TB_FAIL_ON_REGRESSION": "true"}
    return environ, tmp_path


def head_results(root, factor: float):
    head = make_run([ok(name, m * factor, seed=31 + j) for j, (name, m) in
                     enumerate(SUITE.items())], sha="b" * 40, branch="feature",
                    base_branch="main", pr=7, run_id="head-1",
                    created_at="2026-01-02T00:00:00Z")
    save_run(head, root / "head.json")
    return str(root / "head.json")


def outputs_of(environ) -> dict[str, str]:
    lines = open(environ["GITHUB_OUTPUT"], encoding="utf-8").read().splitlines()
    return dict(line.split("=", 1) for line in lines if "=" in line)


def test_a_whole_run_regression_fails_the_job_with_an_annotation_naming_it(
        pr_job, monkeypatch, capsys):
    environ, root = pr_job
    for key, value in {**environ, "TB_RESULTS_FILE": head_results(root, 1.10)}.items():
        monkeypatch.setenv(key, value)
    assert run_pipeline() == 1
    printed = capsys.readouterr().out
    assert re.search(r"^::warning title=torch-bench whole-run regression::the whole run is "
                     r"1\d\.\d%25 slower than its baseline", printed, flags=re.M), printed
    assert re.search(r"^::error title=torch-bench regression::failing the job "
                     r"\(fail-on-regression\): whole run 1\d\.\d%25 slower", printed, flags=re.M)
    shown = outputs_of(environ)
    assert (shown["verdict"], shown["regressions"], shown["has-regression"]) == (
        "regression", "1", "true")
    assert shown["headline"].startswith("whole run 1")


def test_an_unchanged_pr_passes_without_an_error(pr_job, monkeypatch, capsys):
    environ, root = pr_job
    for key, value in {**environ, "TB_RESULTS_FILE": head_results(root, 1.0)}.items():
        monkeypatch.setenv(key, value)
    assert run_pipeline() == 0
    assert "::error" not in capsys.readouterr().out
    shown = outputs_of(environ)
    assert (shown["verdict"], shown["regressions"], shown["not-judged"]) == (
        "unchanged", "0", "0")
    assert re.fullmatch(r"no change beyond ±[\d.–]+% in 8 benchmarks", shown["headline"])
