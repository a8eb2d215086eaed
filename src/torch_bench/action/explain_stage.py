"""The Action's explain stage (inputs `explain`, `explain-budget`): on a PR whose verdicts
name regressions or improvements, profile just those cases on the merge-base (a second
worktree, as A/B does) and on the head (`torch-bench explain`), then add the short operator
diff to the PR comment's report and the full one to the job summary.

The Chrome traces are written to `<output-dir>/traces/` for an `actions/upload-artifact`
step; nothing of it goes to the data branch. Anything that stops the stage (no merge-base
in a shallow clone, a bad selection) is a warning: the verdicts stand without their
explanation.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from pathlib import Path

from torch_bench.action import ab_stage
from torch_bench.action.context import RunContext
from torch_bench.action.inputs import ActionInputs
from torch_bench.errors import UserError
from torch_bench.fileio import read_text, write_text_atomic
from torch_bench.report import actions
from torch_bench.results.document import load_run

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
        with ab_stage.base_worktree(ctx.workspace, commit, root / "explain-base") as base:
            print(f"explain: profiling the flagged cases on {commit[:10]} ({branch}) and the "
                  "head", file=sys.stderr)
            cli("explain", "--base", base, "--head", ctx.workspace,
                *explain_arguments(inputs, verdicts, root))
    except (UserError, SystemExit, OSError) as exc:  # SystemExit: a usage error in run-args
        print(actions.warning(f"explain: {exc}; the verdicts stand without an operator "
                              "diff"), file=sys.stderr)
        return False
    short = read_text(root / SHORT)
    if short.strip() and report.is_file():
        combined = read_text(report).rstrip("\n") + "\n\n" + short
        write_text_atomic(report, combined)
        if fork_report is not None and ctx.is_pr:
            actions.write_fork_handoff(fork_report, combined, ctx.pr_number)
    actions.write_job_summary(read_text(root / FULL))
    return True
