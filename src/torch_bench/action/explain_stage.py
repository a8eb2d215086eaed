"""The Action's explain stage (inputs `explain`, `explain-budget`): on a PR whose verdicts
name regressions or improvements, profile just those cases on the merge-base (a second
worktree, as A/B does) and on the head (`torch-bench explain`), then add the short operator
diff to the PR comment's report and the full one to the job summary.

On a push to the default branch whose verdicts against the history name regressions or
improvements, the same cases are profiled on the previous measured commit of that branch and
on this one; the full diff goes to the job summary and a small summary of it (the largest
operator changes per case: results/run_notes.py) is stored with the run on the data branch,
for the dashboard to show at the change point this run begins.

The Chrome traces are written to `<output-dir>/traces/` for an `actions/upload-artifact`
step; they never go to the data branch. Anything that stops the stage (no merge-base
in a shallow clone, a bad selection) is a warning: the verdicts stand without their
explanation.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from torch_bench.action import ab_stage
from torch_bench.action.context import PUBLISHING_EVENTS, RunContext
from torch_bench.action.inputs import ActionInputs
from torch_bench.analyze.bisect_range import previous_commit
from torch_bench.errors import UserError
from torch_bench.fileio import parse_json, read_text, write_text_atomic
from torch_bench.report import workflow
from torch_bench.results.document import load_run
from torch_bench.results.run_notes import op_diff_note
from torch_bench.store.reader import RunFilter
from torch_bench.store.run_index import index_history

FULL = "explain.md"  # in the output folder: the full diff (job summary)
SHORT = "explain-comment.md"  # the collapsed diff appended to the PR comment's report
JSON = "explain.json"
TRACES = "traces"


def wants_explain(inputs: ActionInputs, ctx: RunContext, regressions: int,
                  improvements: int) -> bool:
    """`explain: auto`: on a PR whose head was measured in this job, when the verdicts name
    a regression or an improvement; `never`: not at all."""
    return inputs["explain"] == "auto" and ctx.is_pr and not inputs["results-file"] \
        and inputs["explain-budget"] > 0 and (regressions + improvements) > 0


def wants_push_explain(inputs: ActionInputs, ctx: RunContext, regressions: int,
                       improvements: int) -> bool:
    """`explain: auto` on a push (or schedule) to the default branch measured in this job,
    when the verdicts against its history name a regression or an improvement."""
    return inputs["explain"] == "auto" and not ctx.is_pr and ctx.on_default_branch \
        and ctx.event in PUBLISHING_EVENTS and not inputs["results-file"] \
        and inputs["explain-budget"] > 0 and (regressions + improvements) > 0


def explain_arguments(inputs: ActionInputs, verdicts: Path, root: Path) -> list[str]:
    """The `torch-bench explain` arguments after `--base` and `--head`."""
    config = ["--config", inputs["config"]] if inputs["config"] else []
    return ["--verdicts", str(verdicts), "--budget", f"{inputs['explain-budget']:g}",
            "--device", inputs["device"], "--markdown", str(root / FULL),
            "--comment-markdown", str(root / SHORT), "--json", str(root / JSON),
            "--trace-dir", str(root / TRACES), "--",
            "--suite", inputs["suites"], *config, *shlex.split(inputs["run-args"])]


def explain_regressions(inputs: ActionInputs, ctx: RunContext, results: Path,
                        verdicts: Path, report: Path, root: Path,
                        cli: Callable[..., int], fork_report: Path | None = None) -> bool:
    """Profile the flagged cases and extend `report` (the PR comment's text) with the
    short diff and the job summary with the full one; False when nothing was explained."""
    branch = ctx.compare_branch() or "main"
    try:
        commit = ab_stage.merge_base(ctx.workspace, load_run(results), branch)
    except UserError as exc:
        return _not_explained(exc)
    if not _profile(inputs, ctx, commit, f"{commit[:10]} ({branch})", verdicts, root, cli):
        return False
    short = read_text(root / SHORT)
    if short.strip() and report.is_file():
        combined = read_text(report).rstrip("\n") + "\n\n" + short
        write_text_atomic(report, combined)
        if fork_report is not None and ctx.is_pr:
            workflow.write_fork_handoff(fork_report, combined, ctx.pr_number)
    workflow.write_job_summary(read_text(root / FULL))
    return True


def explain_push(inputs: ActionInputs, ctx: RunContext, results: Path, verdicts: Path,
                 history: Path, root: Path, cli: Callable[..., int]) -> dict[str, Any] | None:
    """Profile the flagged cases on the previous measured commit of this branch (same
    environment) and on this one; the full diff to the job summary. The run note to store
    with the run, or None (nothing explained, or nothing to compare with)."""
    head = load_run(results)
    sha = head.git.get("sha")
    runs = index_history(history, RunFilter(branch=ctx.branch, fingerprint=head.fingerprint)
                         ).runs if history.is_dir() else ()
    previous = previous_commit(runs, sha) if sha else None
    if previous is None:
        print("explain: no earlier measured commit of this branch and environment to "
              "profile against", file=sys.stderr)
        return None
    if not _profile(inputs, ctx, previous, f"{previous[:10]} (the previous measured commit)",
                    verdicts, root, cli):
        return None
    workflow.write_job_summary(read_text(root / FULL))
    return op_diff_note(head.run_id, parse_json(read_text(root / JSON), str(root / JSON)))


def _profile(inputs: ActionInputs, ctx: RunContext, commit: str, label: str, verdicts: Path,
             root: Path, cli: Callable[..., int]) -> bool:
    """`torch-bench explain` of `commit` (a second worktree) against the workspace."""
    try:
        with ab_stage.base_worktree(ctx.workspace, commit, root / "explain-base") as base:
            print(f"explain: profiling the flagged cases on {label} and the head",
                  file=sys.stderr)
            cli("explain", "--base", base, "--head", ctx.workspace,
                *explain_arguments(inputs, verdicts, root))
    except (UserError, SystemExit, OSError) as exc:  # SystemExit: a usage error in run-args
        return _not_explained(exc)
    return True


def _not_explained(exc: BaseException) -> bool:
    print(workflow.warning(f"explain: {exc}; the verdicts stand without an operator diff"),
          file=sys.stderr)
    return False
