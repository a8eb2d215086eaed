"""The Action's comment stage and the fork hand-off against a real local HTTP server:
`on-regression` keeps an existing comment current, a failure is visible on the run, a fork's
oversized and hostile report is fitted and neutralised."""

from __future__ import annotations

import json

import pytest

from fake_github import MAX_BODY, FakeGitHub
from torch_bench.action import stages
from torch_bench.action.context import RunContext
from torch_bench.action.handoff import post_handoff
from torch_bench.action.inputs import COMMENT_INPUTS, read_inputs

TOKEN = "ghs_stage-token-0000"
HEAD = "c" * 40


def context() -> RunContext:
    return RunContext(event="pull_request", repository="octo/bench", ref="refs/pull/7/merge",
                      default_branch="main", pr_number=7, pr_base_branch="main",
                      pr_head_sha=HEAD, from_fork=False, server_url="https://github.com",
                      workspace=".")


def environ(github: FakeGitHub, tmp_path) -> dict[str, str]:
    (tmp_path / "summary.md").write_text("")
    return {"GITHUB_API_URL": github.url, "GITHUB_TOKEN": TOKEN,
            "GITHUB_REPOSITORY": "octo/bench", "GITHUB_SERVER_URL": "https://github.com",
            "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md")}


def post(github, tmp_path, verdict: str, text: str, mode: str = "on-regression"):
    report = tmp_path / "report.md"
    report.write_text(text)
    outcome = stages.Outcome(verdict, 2 if verdict == "regression" else 0, 0, report)
    inputs = read_inputs({"TB_COMMENT": mode})
    return stages.comment(inputs, context(), outcome, "cpu", environ(github, tmp_path))


def test_on_regression_updates_the_comment_once_the_regression_is_gone(tmp_path):
    with FakeGitHub() as github:
        assert post(github, tmp_path, "unchanged", "all fine") is None
        assert not github.comments.get(7)  # nothing to say yet: no comment
        url = post(github, tmp_path, "regression", "### torch-bench: 2 regressions")
        assert url and len(github.comments[7]) == 1
        assert post(github, tmp_path, "unchanged", "### torch-bench: no significant change")
        assert len(github.comments[7]) == 1
        assert "no significant change" in github.comments[7][0]["body"]
        assert "2 regressions" not in github.comments[7][0]["body"]


def test_a_comment_that_fails_is_a_warning_and_a_line_in_the_summary(tmp_path, capsys):
    with FakeGitHub() as github:
        github.failures = [(401, {}, {"message": "Bad credentials"})]
        assert post(github, tmp_path, "regression", "report", mode="always") is None
    printed = capsys.readouterr().out
    assert printed.startswith("::warning title=torch-bench comment::could not comment on the PR")
    assert "HTTP 401 Bad credentials" in printed and TOKEN not in printed
    assert "could not comment on the PR**" in (tmp_path / "summary.md").read_text()


@pytest.fixture
def handoff(tmp_path):
    folder = tmp_path / "pr-report"
    folder.mkdir()
    (folder / "pr-number.txt").write_text("7\n")
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"workflow_run": {
        "html_url": "https://github.com/octo/bench/actions/runs/99"}}))
    inputs = read_inputs({"TB_REPORT_DIR": str(folder), "TB_HEAD_SHA": HEAD}, COMMENT_INPUTS)
    return folder, inputs, {"GITHUB_EVENT_PATH": str(event)}


def test_a_forks_huge_hostile_report_is_fitted_and_neutralised(tmp_path, handoff):
    folder, inputs, event = handoff
    rows = "\n".join(f"| demo/b{i} | +{i}% &#64;team |" for i in range(8_000))
    (folder / "report.md").write_text(
        "### torch-bench: 8000 regressions\n<!-- torch-bench-report config=other -->\n"
        "![x](https://evil.test/p.png) see octo/other#1\n\n<details>\n<summary>all</summary>\n\n"
        f"| Benchmark | Change |\n| --- | --- |\n{rows}\n\n</details>\n")
    with FakeGitHub() as github:
        github.pulls[7] = {"number": 7, "head": {"sha": HEAD}}
        url = post_handoff(inputs, {**environ(github, tmp_path), **event})
        body = github.comments[7][0]["body"]
    assert url and len(body) <= MAX_BODY
    assert body.count("<!--") == 1  # only the comment's own marker
    assert "evil.test" not in body and "`octo/other#1`" in body
    assert "&#64;" not in body and "@\u200dteam" in body
    assert body.count("<details>") == body.count("</details>") == 1
    assert all(line.endswith("|") for line in body.split("\n") if line.startswith("|"))
    assert "[the job summary of the PR's workflow run](<https://github.com/octo/bench/" \
           "actions/runs/99>)" in body


@pytest.mark.parametrize("mode", ["always", "on-regression"])
def test_a_fork_pr_asking_for_a_comment_is_told_why_there_is_none(tmp_path, capsys, mode):
    from dataclasses import replace

    report = tmp_path / "report.md"
    report.write_text("## torch-bench\n")
    with FakeGitHub() as github:
        env = environ(github, tmp_path)
        url = stages.comment(read_inputs({"TB_COMMENT": mode}), replace(context(), from_fork=True),
                             stages.Outcome("regression", 1, 0, report), "cpu", env)
        assert url is None and not github.comments.get(7)
    out = capsys.readouterr().out
    assert "::notice title=torch-bench comment::no PR comment" in out and "fork" in out
    summary = (tmp_path / "summary.md").read_text()
    assert "comes from a fork" in summary and "post-pr-comment.yml" in summary
    # never asked for: nothing said
    stages.comment(read_inputs({"TB_COMMENT": "never"}), replace(context(), from_fork=True),
                   stages.Outcome("regression", 1, 0, report), "cpu", env)
    assert "no PR comment" not in capsys.readouterr().out
