"""GitHub Actions outputs: annotations, step outputs, job summary, fork-PR hand-off."""

from __future__ import annotations

from support.runs import bad, history, make_run, ok
from torch_bench.analyze.verdicts import compare_runs
from torch_bench.report import actions, workflow


def comparison():
    base = make_run([ok("slow,er: 100%\nnext", 10, seed=2), ok("breaks", 5, seed=5)])
    head = make_run([ok("slow,er: 100%\nnext", 11.5, seed=12), bad("breaks", "oom")],
                    sha="b" * 40)
    return compare_runs([base], [head], history(20, {"slow,er: 100%\nnext": 10}))


def test_one_warning_per_regression_with_escaped_data():
    lines = actions.warning_annotations(comparison())
    assert len(lines) == 2
    regression = next(line for line in lines if "regression" in line)
    assert regression.startswith("::warning title=torch-bench regression::demo/slow,er: 100%25")
    assert "%0Anext" in regression and "\n" not in regression
    assert "+14.6%25" in regression  # against the level of 21 runs
    failing = next(line for line in lines if "newly failing" in line)
    assert failing.endswith("demo/breaks latency: ok -> oom")


def test_step_outputs_and_job_summary_append_to_the_files_github_names(tmp_path):
    summary, outputs = tmp_path / "summary.md", tmp_path / "outputs.txt"
    summary.write_text("earlier step\n")
    env = {"GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(outputs)}
    assert workflow.write_job_summary("### report", env)
    assert actions.write_step_outputs(comparison(), env)
    assert summary.read_text() == "earlier step\n### report\n"
    written = dict(line.split("=", 1) for line in outputs.read_text().splitlines())
    assert written["regression"] == "1" and written["newly-failing"] == "1"
    assert written["has-regression"] == "true" and written["total"] == "2"
    assert not workflow.write_job_summary("x", {})


def test_fork_handoff_writes_the_report_and_the_pr_number(tmp_path):
    workflow.write_fork_handoff(tmp_path / "handoff", "# report\n", 42)
    assert (tmp_path / "handoff" / "report.md").read_text() == "# report\n"
    assert (tmp_path / "handoff" / "pr-number.txt").read_text() == "42\n"
