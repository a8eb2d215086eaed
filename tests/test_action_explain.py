"""The Action's explain stage: a PR whose head plants a larger matmul, a verdicts file that
calls it a regression, the merge-base profiled from a second worktree, the short diff added
to the PR comment's report and the full one to the job summary, traces kept as files."""

from __future__ import annotations

import json

import pytest

from support.runs import make_run, ok
from test_explain_cli import checkouts, git, verdicts_file
from torch_bench.action import stages
from torch_bench.action.context import RunContext
from torch_bench.action.inputs import read_inputs
from torch_bench.results.document import save_run


def pr_context(repo):
    return RunContext(event="pull_request", repository="octo/bench", ref="refs/pull/7/merge",
                      default_branch="main", pr_number=7, pr_base_branch="main",
                      pr_head_sha=None, from_fork=False, server_url="https://example.com",
                      workspace=str(repo))


def inputs(explain="auto", budget="600"):
    return read_inputs({"TB_SUITES": "explainwork.suite", "TB_DEVICE": "cpu",
                        "TB_RUN_ARGS": "--filter mlp", "TB_EXPLAIN": explain,
                        "TB_EXPLAIN_BUDGET": budget})


@pytest.fixture
def pr(tmp_path, monkeypatch):
    """A PR (head checked out in `repo`) with its results, verdicts and report written."""
    base, repo = checkouts(tmp_path, {}, {"width": 1024})
    git(repo, "worktree", "remove", "--force", str(base))  # the stage makes its own
    paths = stages.Paths(tmp_path / "out")
    paths.root.mkdir()
    sha = git(repo, "rev-parse", "HEAD")
    save_run(make_run([ok("mlp", 1.4, suite="planted")], sha=sha, branch="feature",
                      base_branch="main", pr=7), paths.results)
    verdicts = verdicts_file(tmp_path, {"mlp": "regression"})
    paths.verdicts.write_text(verdicts.read_text())
    paths.report.write_text("### torch-bench: 1 regression\n")
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    return repo, paths, summary


def outcome(paths, regressions=1):
    return stages.Outcome("regression" if regressions else "unchanged", regressions, 0,
                          paths.report)


@pytest.mark.slow
def test_a_regression_gets_its_operator_diff_in_the_comment_and_the_summary(pr):
    repo, paths, summary = pr
    stages.explain(inputs(), pr_context(repo), paths.results, paths, outcome(paths))
    report = paths.report.read_text()
    assert report.startswith("### torch-bench: 1 regression\n")
    assert "<details><summary>Operators of regression: planted/mlp" in report
    assert "aten&#58;&#58;addmm +" in report
    assert "### Operator-level diff (base → head)" in summary.read_text()
    # the fork hand-off carries the same report
    assert (paths.fork_report / "report.md").read_text() == report
    traces = sorted(p.name for p in (paths.root / "traces").iterdir())
    assert traces == ["01-planted-mlp-base.json", "01-planted-mlp-head.json"]
    found = json.loads((paths.root / "explain.json").read_text())
    assert found["explained"][0]["diff"]["changes"][0]["name"] == "aten::addmm"
    assert not (paths.root / "explain-base").exists()
    assert git(repo, "worktree", "list").count("\n") == 0


def test_never_and_nothing_flagged_profile_nothing(pr):
    repo, paths, summary = pr
    stages.explain(inputs(explain="never"), pr_context(repo), paths.results, paths,
                   outcome(paths))
    stages.explain(inputs(), pr_context(repo), paths.results, paths, outcome(paths, 0))
    stages.explain(inputs(budget="0"), pr_context(repo), paths.results, paths, outcome(paths))
    assert paths.report.read_text() == "### torch-bench: 1 regression\n"
    assert not (paths.root / "traces").exists() and not summary.exists()


def test_a_clone_without_the_merge_base_is_a_warning(pr, capsys):
    repo, paths, summary = pr
    git(repo, "branch", "-D", "main")  # as in a shallow clone: the base is unknown
    stages.explain(inputs(), pr_context(repo), paths.results, paths, outcome(paths))
    err = capsys.readouterr().err
    assert "::warning title=torch-bench::explain: " in err
    assert "the verdicts stand without an operator diff" in err
    assert paths.report.read_text() == "### torch-bench: 1 regression\n"
