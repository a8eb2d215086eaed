"""`python -m torch_bench.action`: the Action's main step, the pipeline in order.

    history  = the data branch's data folder, read-only
    results  = run the suites (reusing the calls per sample recorded in history), or ingest
               a results file
    outcome  = compare with the baseline from that history (report, summary, annotations)
    explain  = on a PR, profile the regressions and improvements on the merge-base and the
               head and add their operator diff to the report (input `explain`); on a push,
               on the previous measured commit, kept as a note of the run to store
    store    = append the results to the data branch (pushes to the default branch), then
               prune it to `keep-runs` runs per benchmark and fold run files older than
               `compact-after` months into monthly archives, when asked
    bisect   = on a push that regressed, when asked: the first bad commit since the previous
               stored run (job summary, and a note of the stored run for the dashboard)
    publish  = rebuild the dashboard on the data branch, or as the one commit of
               `site-branch` (when results were stored)
    comment  = one PR comment, updated in place (fork PRs: a report file instead)
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from torch_bench.action import bisect_stage, measuring, pr_budget, shallow, stages
from torch_bench.action.context import read_context
from torch_bench.action.inputs import (
    BISECT_INPUTS,
    SITE_INPUTS,
    ActionInputs,
    read_inputs,
)
from torch_bench.report import workflow
from torch_bench.report.actions import failure_annotation


def config_name(inputs: ActionInputs, environ: Mapping[str, str]) -> str:
    """One PR comment per job, configuration and shard."""
    shard = f"-{inputs['partition-id']}of{inputs['total-partitions']}" \
        if inputs["total-partitions"] > 1 else ""
    return f"{environ.get('GITHUB_JOB', 'bench')}-{inputs['suites']}-{inputs['device']}{shard}"


def run_pipeline(environ: Mapping[str, str] = os.environ) -> int:
    inputs, ctx = read_inputs(environ), read_context(environ)
    paths = stages.Paths(Path(inputs["output-dir"]).resolve())
    name = config_name(inputs, environ)
    target = stages.data_target(inputs, environ)
    creds = stages.credentials(target, environ)

    history = stages.read_history(target, creds, paths)
    measuring.export_suite_path(inputs["suite-path"], os.environ)
    own_suites = measuring.child_cli(ctx.workspace, inputs["suite-path"]) \
        if inputs["suite-path"] else None
    started = time.monotonic()
    results = stages.produce_results(inputs, paths, history, own_suites)
    budget = pr_budget.make_budget(inputs, time.monotonic() - started) \
        if ctx.is_pr and not inputs["results-file"] else None
    outcome = stages.compare(inputs, ctx, results, history, paths, name, budget) \
        if results.is_file() else stages.Outcome("no-baseline", 0, 0, None)
    notes = stages.explain(inputs, ctx, results, paths, outcome, history, budget)
    if budget is not None:
        print(budget.summary(), file=sys.stderr)
        workflow.append_summary_note(f"\n{budget.summary()}\n", environ)
    pushed = ctx.should_push(inputs["push"])
    if not pushed and not ctx.is_pr:
        print(f"not stored: {ctx.not_stored_reason(inputs['push'])}", file=sys.stderr)
    if pushed:
        stages.store(results, target, creds, notes)
        if inputs["keep-runs"]:
            stages.retain(target, creds, inputs["keep-runs"])
        if inputs["compact-after"]:
            stages.compact(target, creds, inputs["compact-after"])
    if results.is_file() and bisect_stage.run_stage(
            inputs, ctx, outcome.verdict, results, history, paths.verdicts, paths.root,
            stages.cli) and pushed:
        stages.store_notes(results, target, creds,
                           bisect_stage.found_note(results, paths.verdicts, paths.root))
    if inputs["build-site"] == "true" or (inputs["build-site"] == "auto" and pushed):
        stages.publish(target, creds, paths, inputs["site-folder"],
                       stages.site_cache(environ), inputs["site-branch"])
    comment_url = stages.comment(inputs, ctx, outcome, name, environ)

    workflow.write_outputs({
        "results-path": results, "report-path": outcome.report, "verdict": outcome.verdict,
        "regressions": outcome.regressions, "improvements": outcome.improvements,
        "dashboard-url": ctx.dashboard_url(inputs["site-folder"],
                                           stages.data_repository_of(inputs)),
        "comment-url": comment_url,
    }, environ)
    if inputs["fail-on-regression"] and outcome.verdict == "regression":
        print(failure_annotation(outcome.failing), flush=True)
        return 1
    return 0


def run_site(environ: Mapping[str, str] = os.environ) -> int:
    """`dashboard/action.yml`: rebuild the dashboard once, e.g. after all shards of a matrix."""
    inputs = read_inputs(environ, SITE_INPUTS)
    target = stages.data_target(inputs, environ)
    stages.publish(target, stages.credentials(target, environ),
                   stages.Paths(Path(inputs["output-dir"]).resolve()), inputs["site-folder"],
                   stages.site_cache(environ), inputs["site-branch"])
    url = read_context(environ).dashboard_url(inputs["site-folder"],
                                              stages.data_repository_of(inputs))
    workflow.write_outputs({"dashboard-url": url}, environ)
    return 0


def run_bisect(environ: Mapping[str, str] = os.environ) -> int:
    """`bisect/action.yml`: bisect the commits between `good` and `bad` given by hand."""
    inputs = read_inputs(environ, BISECT_INPUTS)
    out = Path(inputs["output-dir"]).resolve()
    ctx = read_context(environ)
    arguments = bisect_stage.dispatch_arguments(inputs, ctx, out)
    shallow.ensure_commits(ctx.workspace, [inputs["good"], inputs["bad"]], environ=environ)
    stages.cli(*arguments)
    return 0


