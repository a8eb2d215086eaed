"""The Action's bisection stage (input `bisect`): on a push to the default branch whose
verdicts found a regression against its history, search the commits between the previous
stored run's and this one for the first bad commit (`torch-bench bisect`), measuring only the
regressed benchmarks, within `bisect-max-steps` steps. Its first step measures the two
endpoints again, interleaved: a regression that does not replicate ends the search there.

The result goes to the job summary; the rounds and the report stay in the output folder. A
first bad commit found is also kept as a note of this job's run (results/run_notes.py), stored
on the data branch for the dashboard's change-point marker.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from torch_bench.action import ab_stage, shallow
from torch_bench.action.context import PUBLISHING_EVENTS, RunContext
from torch_bench.action.inputs import ActionInputs
from torch_bench.analyze.bisect_range import previous_commit
from torch_bench.errors import UserError
from torch_bench.report.workflow import warning
from torch_bench.results.document import load_run
from torch_bench.results.run_notes import bisect_note
from torch_bench.results.schema import Run
from torch_bench.store.reader import RunFilter
from torch_bench.store.run_index import index_history

ROUNDS = 2  # per step; each round measures three commits


@dataclass(frozen=True)
class BisectPlan:
    good: str
    bad: str
    benchmarks: tuple[str, ...]  # suite/name of the regressed benchmarks

    @property
    def filter(self) -> str:
        return "^(" + "|".join(re.escape(name) for name in self.benchmarks) + ")$"


def regressed(verdicts: dict) -> tuple[str, ...]:
    """suite/name of the regressions in a `compare --json` document."""
    return tuple(sorted({f"{v['suite']}/{v['name']}" for v in verdicts.get("verdicts", [])
                         if v.get("verdict") == "regression"}))


def plan(inputs: ActionInputs, ctx: RunContext, verdict: str, head: Run, history: Path,
         verdicts: dict) -> BisectPlan | str:
    """What to bisect, or why not (a line for the log)."""
    if not inputs["bisect"]:
        return "bisect: off"
    if ctx.event not in PUBLISHING_EVENTS or not ctx.on_default_branch or ctx.is_pr:
        return "bisect: only on pushes to the default branch"
    if verdict != "regression" or inputs["results-file"]:
        return "bisect: no regression measured in this job"
    benchmarks = regressed(verdicts)
    bad = head.git.get("sha")
    if not benchmarks or not bad:
        return "bisect: no regressed benchmark with a commit to search"
    runs = index_history(history, RunFilter(branch=ctx.branch,
                                            fingerprint=head.fingerprint)).runs \
        if history.is_dir() else ()
    good = previous_commit(runs, bad)
    if good is None:
        return "bisect: no earlier run of this branch and environment in the history"
    return BisectPlan(good, bad, benchmarks)


def arguments(found: BisectPlan, inputs: ActionInputs, ctx: RunContext,
              out: Path) -> list[str]:
    """`torch-bench bisect` arguments: the job's run arguments for the regressed benchmarks,
    each round's share of the run's time budget, the job's rule."""
    run_args: Sequence[str] = ab_stage.run_arguments(inputs, rounds=ROUNDS)
    return ["bisect", "--good", found.good, "--bad", found.bad, "--repo", ctx.workspace,
            "--max-steps", str(inputs["bisect-max-steps"]), "--rounds", str(ROUNDS),
            "--out-dir", str(out / "bisect"), "--markdown", str(out / "bisect.md"),
            "--json", str(out / "bisect.json"),
            "--min-effect", f"{inputs['min-effect']:g}",
            "--false-alarm-rate", f"{inputs['false-alarm-rate']:g}",
            "--per-pr-level", f"{inputs['per-pr-level']:g}",
            "--", *run_args, "--filter", found.filter]


def dispatch_arguments(inputs: ActionInputs, ctx: RunContext, out: Path) -> list[str]:
    """`torch-bench bisect` arguments for the bisect sub-action: the commits given by hand,
    the suites and device as given, else the config file's, else `rnns` on `cuda`."""
    if not (inputs["good"] and inputs["bad"]):
        raise UserError("the bisect action needs both inputs 'good' and 'bad'")
    config = ["--config", inputs["config"]] if inputs["config"] else []
    extra = shlex.split(inputs["run-args"])
    chosen = [(flag, inputs[name] or (None if config else fallback))
              for flag, name, fallback in (("--suite", "suites", "rnns"),
                                           ("--device", "device", "cuda"))]
    run_args = [*(arg for flag, value in chosen if value for arg in (flag, value)), *config,
                *extra, *ab_stage.round_budget(extra, ROUNDS)]
    return ["bisect", "--good", inputs["good"], "--bad", inputs["bad"], "--repo",
            ctx.workspace, "--max-steps", str(inputs["max-steps"]), "--rounds", str(ROUNDS),
            "--out-dir", str(out / "bisect"), "--markdown", str(out / "bisect.md"),
            "--json", str(out / "bisect.json"), "--", *run_args]


def run_stage(inputs: ActionInputs, ctx: RunContext, verdict: str, head: Path,
              history: Path, verdicts: Path, out: Path, cli) -> Path | None:
    """Run the bisection when the plan says so; the Markdown report, or None. A bisection
    that cannot run (a shallow clone, a commit that fails to run) is a warning: the job's
    verdict stands without it."""
    if not inputs["bisect"]:
        return None
    found = json.loads(verdicts.read_text()) if verdicts.is_file() else {}
    decided = plan(inputs, ctx, verdict, load_run(head), history, found)
    if isinstance(decided, str):
        print(decided, file=sys.stderr)
        return None
    print(f"bisect: {', '.join(decided.benchmarks)} between {decided.good[:10]} and "
          f"{decided.bad[:10]}", file=sys.stderr)
    if not shallow.ensure_commits(ctx.workspace, [decided.good, decided.bad]):
        print(warning(f"bisect: {decided.good[:10]} is not in the checkout ({shallow.FIX}); "
                      "no bisection"), file=sys.stderr)
        return None
    try:
        cli(*arguments(decided, inputs, ctx, out))
    except UserError as exc:
        print(warning(f"bisect: {exc}"), file=sys.stderr)
        return None
    return out / "bisect.md"


def found_note(head: Path, verdicts: Path, out: Path) -> dict[str, Any] | None:
    """The run note of the bisection `run_stage` ran (its `bisect.json`), naming the
    regressed benchmarks; None without a first bad commit."""
    result = out / "bisect.json"
    if not result.is_file():
        return None
    found = json.loads(verdicts.read_text()) if verdicts.is_file() else {}
    return bisect_note(load_run(head).run_id, json.loads(result.read_text()), regressed(found))
