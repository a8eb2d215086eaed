"""GitHub's limits as a workflow author meets them: a comment of at most 65,536 characters
(the local server refuses longer ones with a 422, as GitHub does), a 1 MiB job summary, 10
annotations per step, multi-line step outputs, escaped `::error` lines."""

from __future__ import annotations

import re

import pytest

from fake_github import MAX_BODY, FakeGitHub
from support.runs import make_run, ok
from torch_bench.analyze.verdicts import Kind, compare_runs
from torch_bench.report import actions, workflow
from torch_bench.report.fit import SUMMARY_LIMIT
from torch_bench.report.github import GitHubClient, GitHubError, comment_marker, upsert_comment
from torch_bench.report.markdown import ReportContext, format_report

TOKEN = "ghs_not-a-real-token-5678"
RUN_ENV = {"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "octo/bench",
           "GITHUB_RUN_ID": "4242", "GITHUB_RUN_ATTEMPT": "1"}


@pytest.fixture(scope="module")
def big():
    """700 benchmarks, 300 regressions (each 2% worse than the one before; fewer than half, so
    the run's shift stays with the unchanged ones): a report of nearly three comments."""
    names = [f"model_{i:03d}_batch_size_64_sequence_length_512" for i in range(700)]
    history = [make_run([ok(name, 10, seed=run * 1000 + i, n=20) for i, name in enumerate(names)],
                        run_id=f"h{run}") for run in range(6)]  # enough to know the noise
    base = make_run([ok(name, 10, seed=i, n=20) for i, name in enumerate(names)])
    head = make_run([ok(name, 10 * 1.2 * 1.02**i if i < 300 else 10, seed=1000 + i, n=20)
                     for i, name in enumerate(names)], sha="b" * 40)
    comparison = compare_runs([base], [head], history)
    report = format_report(comparison, ReportContext(
        dashboard_link="https://octo.github.io/bench/#/benchmark/{id}"))
    return comparison, report


def test_a_report_of_300_regressions_still_becomes_one_comment(big):
    comparison, report = big
    assert comparison.counts()[Kind.REGRESSION] == 300 and len(report) > 2.5 * MAX_BODY
    with FakeGitHub() as github:
        client = GitHubClient(TOKEN, github.url, sleep=lambda s: None)
        with pytest.raises(GitHubError, match="body is too long"):  # what happened before
            client.create_comment("octo/bench", 7, report)
        link = workflow.full_report_link(RUN_ENV)
        action, posted = upsert_comment(client, "octo/bench", 7, report, "cpu",
                                        full_report=link)
    body = posted["body"]
    assert action == "created" and len(body) <= MAX_BODY
    marker, headline = body.split("\n")[:2]
    assert marker == comment_marker("cpu")
    assert headline.startswith("### torch-bench: ") and "300 regressions" in headline
    assert "https://github.com/octo/bench/actions/runs/4242/attempts/1" in body
    shown = re.findall(r"^\| \[demo/model&#95;(\d{3})", body, re.M)
    assert 100 < len(shown) < 300
    assert shown == [f"{i:03d}" for i in range(299, 299 - len(shown), -1)]  # worst first
    assert f"{700 - len(shown)} of 702 table rows are not shown" in body
    assert all(line.endswith("|") for line in body.split("\n") if line.startswith("|"))
    assert body.count("<details>") == body.count("</details>")


def test_the_job_summary_stays_under_1_mib_after_what_earlier_steps_wrote(tmp_path):
    summary = tmp_path / "summary.md"
    summary.write_text("x" * (SUMMARY_LIMIT - 50_000) + "\n")
    rows = "\n".join(f"| demo/b{i} | +{i}% |" for i in range(20_000))
    report = ("### torch-bench: 20000 regressions\n\n| Benchmark | Change |\n| --- | --- |\n"
              f"{rows}\n")
    assert workflow.write_job_summary(report, {"GITHUB_STEP_SUMMARY": str(summary)})
    written = summary.read_bytes()
    assert len(written) <= SUMMARY_LIMIT
    tail = written.decode()[SUMMARY_LIMIT - 50_000 + 1:]
    assert tail.startswith("### torch-bench: 20000 regressions")
    assert "| demo/b0 | +0% |" in tail and "table rows are not shown" in tail
    assert "`report-path`" in tail


def test_a_failed_comment_after_a_full_summary_keeps_it_under_1_mib(tmp_path, capsys):
    # GitHub drops a step summary over 1 MiB entirely: the report, fitted first, must leave
    # room for the note that the comment could not be posted.
    summary = tmp_path / "summary.md"
    env = {"GITHUB_STEP_SUMMARY": str(summary)}
    rows = "\n".join(f"| demo/benchmark_{i:05d} | +{i}% |" for i in range(60_000))
    report = ("### torch-bench: 60000 regressions\n\n| Benchmark | Change |\n| --- | --- |\n"
              f"{rows}\n")
    assert workflow.write_job_summary(report, env)
    workflow.report_comment_failure("POST /repos/octo/bench/issues/7/comments: HTTP 403 "
                                   + "Resource not accessible by integration " * 20, env)
    written = summary.read_bytes()
    assert len(written) <= SUMMARY_LIMIT
    assert "could not comment on the PR" in written.decode()[-4000:]


def test_a_summary_note_never_pushes_the_summary_over_1_mib(tmp_path):
    summary = tmp_path / "summary.md"
    summary.write_text("x" * (SUMMARY_LIMIT - 100))
    workflow.report_comment_failure("a reason with <html> & (parentheses) " * 30,
                                   {"GITHUB_STEP_SUMMARY": str(summary)})
    written = summary.read_bytes()
    assert SUMMARY_LIMIT - 100 < len(written) <= SUMMARY_LIMIT
    assert written.decode().endswith("…\n")


def test_at_most_nine_annotations_worst_first_leaving_one_for_the_comment(big):
    comparison, _ = big
    lines = actions.warning_annotations(comparison)
    assert len(lines) == actions.ANNOTATION_LIMIT - actions.RESERVED_FOR_COMMENT
    assert "model_299" in lines[0] and "model_298" in lines[1]
    assert lines[-1].endswith("::292 more regressions or newly failing benchmarks in the job "
                              "summary")


def test_a_failed_comment_is_an_annotation_and_a_line_in_the_summary(tmp_path, capsys):
    summary = tmp_path / "summary.md"
    workflow.report_comment_failure("POST /x: HTTP 422 body is too long\n100%",
                                   {"GITHUB_STEP_SUMMARY": str(summary)})
    printed = capsys.readouterr().out.strip()
    assert printed.startswith("::warning title=torch-bench comment::could not comment")
    assert "%0A100%25" in printed and "\n" not in printed
    assert "could not comment on the PR**: POST /x" in summary.read_text()


def test_error_lines_are_escaped_like_warnings():
    assert workflow.error("50% done\r\nnext") == "::error title=torch-bench::50%25 done%0D%0Anext"


def test_a_multi_line_output_uses_the_delimiter_form():
    text = workflow.format_outputs({"verdict": "regression", "comment-url": "a\nb"})
    lines = text.split("\n")
    assert lines[0] == "verdict=regression"
    delimiter = lines[1].removeprefix("comment-url<<")
    assert lines[2:5] == ["a", "b", delimiter] and delimiter.startswith("ghadelimiter_")
    with pytest.raises(ValueError):
        workflow.format_outputs({"bad=name": "x"})
