"""The Action's `ab` input at the stage level: a real git repository whose PR slows a
benchmark down, no history, and the merge-base measured side by side in a second worktree."""

from __future__ import annotations

import json
import subprocess

import pytest

from support.runs import history, make_run, ok
from test_ab import SUITE_MODULE
from torch_bench.action import ab_stage, stages
from torch_bench.action.context import RunContext
from torch_bench.action.inputs import read_inputs
from torch_bench.results.document import save_run
from torch_bench.store.layout import run_path


def git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


def commit_package(repo, package_name, suite_source, message):
    """`package_name/suite.py` written with `suite_source` and committed; the commit's sha."""
    package = repo / package_name
    package.mkdir(exist_ok=True)
    (package / "__init__.py").write_text("")
    (package / "suite.py").write_text(suite_source)
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def commit_suite(repo, factors, message):
    return commit_package(repo, "abwork", SUITE_MODULE.format(factors=factors), message)


@pytest.fixture
def project(tmp_path):
    """main with the suite as it was; feature makes `slow` 30% slower (checked out)."""
    repo = tmp_path / "project"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit_suite(repo, {"same": 1.0, "slow": 1.0}, "base")
    git(repo, "checkout", "-q", "-b", "feature")
    head = commit_suite(repo, {"same": 1.0, "slow": 1.3}, "slower")
    return repo, head


def pr_context(repo):
    return RunContext(event="pull_request", repository="octo/bench", ref="refs/pull/7/merge",
                      default_branch="main", pr_number=7, pr_base_branch="main",
                      pr_head_sha=None, from_fork=False, server_url="https://example.com",
                      workspace=str(repo))


def inputs(ab, confirm_budget="0"):
    return read_inputs({"TB_SUITES": "abwork.suite", "TB_DEVICE": "cpu", "TB_AB": ab,
                        "TB_RUN_ARGS": "--no-preflight --max-time 0.3",
                        "TB_CONFIRM_BUDGET": confirm_budget})


def head_run(tmp_path, sha):
    path = tmp_path / "results.json"
    save_run(make_run([ok("same", 1.0, suite="abwork"), ok("slow", 1.3, suite="abwork")],
                      sha=sha, branch="feature", base_branch="main", pr=7), path)
    return path


@pytest.mark.slow
def test_a_pr_without_history_is_measured_side_by_side_and_gets_its_verdict(project, tmp_path):
    repo, head = project
    empty = tmp_path / "history"
    empty.mkdir()
    paths = stages.Paths(tmp_path / "out")
    outcome = stages.compare(inputs("auto"), pr_context(repo), head_run(tmp_path, head), empty,
                             paths, "bench")
    assert (outcome.verdict, outcome.regressions) == ("regression", 1)
    verdicts = json.loads(paths.verdicts.read_text())
    found = {v["name"]: v for v in verdicts["verdicts"]}
    assert found["slow"]["verdict"] == "regression"
    assert found["slow"]["ratio"] == pytest.approx(1.3, rel=0.03)
    assert found["same"]["verdict"] == "unchanged"
    assert "interleaved with the head over 3 rounds" in verdicts["baseline"]
    # the base is named by what it is, not by an internal folder
    assert "run(s) from merge-base-" in verdicts["baseline"] and "ab-base" not in \
        verdicts["baseline"]
    assert len(verdicts["base_runs"]) == 3 and len(verdicts["head_runs"]) == 3
    assert "### torch-bench: 1 regression" in paths.report.read_text()
    # the merge-base was measured from its own checkout, which is gone again
    assert not list(paths.root.glob("merge-base-*"))
    assert git(repo, "worktree", "list").count("\n") == 0


def test_with_enough_history_auto_compares_with_the_history(project, tmp_path):
    repo, head = project
    data = tmp_path / "history"
    for run in history(6, {"same": 1.0, "slow": 1.0}):
        run = make_run([ok(r.name, r.summary.median, suite="abwork") for r in run.results],
                       sha=run.git["sha"], created_at=run.created_at, run_id=run.run_id)
        save_run(run, data / run_path(run))
    paths = stages.Paths(tmp_path / "out")
    outcome = stages.compare(inputs("auto"), pr_context(repo), head_run(tmp_path, head), data,
                             paths, "bench")
    verdicts = json.loads(paths.verdicts.read_text())
    assert "interleaved" not in verdicts["baseline"]
    assert verdicts["verdicts"][0]["history_runs"] == 6
    assert outcome.verdict == "regression"


def one_run_of_history(tmp_path):
    data = tmp_path / "history"
    one = make_run([ok("same", 1.0, suite="abwork"), ok("slow", 1.0, suite="abwork")],
                   run_id="main-1")
    save_run(one, data / run_path(one))
    return data


def test_never_keeps_the_history_comparison_and_says_why_it_cannot_judge(project, tmp_path):
    repo, head = project
    data = one_run_of_history(tmp_path)
    paths = stages.Paths(tmp_path / "out")
    outcome = stages.compare(inputs("never"), pr_context(repo), head_run(tmp_path, head), data,
                             paths, "bench")
    slow = next(v for v in json.loads(paths.verdicts.read_text())["verdicts"]
                if v["name"] == "slow")
    assert (outcome.verdict, slow["note"]) == ("inconclusive",
                                               "not enough history (1 runs; 3 needed)")


@pytest.mark.slow
def test_targeted_confirmation_settles_what_one_run_of_history_cannot(project, tmp_path):
    repo, head = project
    data = one_run_of_history(tmp_path)
    paths = stages.Paths(tmp_path / "out")
    # a budget no loaded machine spends on two rounds: the rounds, not the clock, decide
    outcome = stages.compare(inputs("never", confirm_budget="3600"), pr_context(repo),
                             head_run(tmp_path, head), data, paths, "bench")
    found = json.loads(paths.verdicts.read_text())
    slow = next(v for v in found["verdicts"] if v["name"] == "slow")
    assert outcome.verdict == "regression" and slow["confirmed"] is None
    assert slow["note"].startswith("2 A/B rounds: +") or "A/B rounds: +" in slow["note"]
    assert found["confirmation"]["benchmarks"] == 1 and found["confirmation"]["rounds"] >= 2
    assert not (tmp_path / "out" / "confirm-base").exists()  # the worktree is removed


def test_each_round_gets_its_share_of_the_measuring_budget():
    assert ab_stage.round_budget([]) == ["--max-time", "1"]
    assert ab_stage.round_budget(["--max-time", "0.6"], rounds=3) == ["--max-time", "0.2"]
    assert ab_stage.round_budget(["--max-time=1.5"], rounds=3) == ["--max-time", "0.5"]


def test_a_base_worktree_left_locked_by_a_cancelled_job_is_replaced_then_removed(tmp_path):
    """A job cancelled while `git worktree add` ran leaves the worktree locked
    ("initializing"); the next job on that runner must still check the base out there."""
    repo = tmp_path / "project"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty",
        "-m", "base")
    base = git(repo, "rev-parse", "HEAD").strip()
    where = tmp_path / "base-worktree"
    git(repo, "worktree", "add", "-q", "--detach", str(where), base)
    git(repo, "worktree", "lock", "--reason", "initializing", str(where))
    with ab_stage.base_worktree(str(repo), base, where) as checked_out:
        assert (checked_out / ".git").is_file()
    listed = git(repo, "worktree", "list", "--porcelain")
    assert [line for line in listed.splitlines() if line.startswith("worktree ")] == [
        f"worktree {repo}"]
