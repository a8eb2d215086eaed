"""`torch-bench compare BASE HEAD`: verdicts on every benchmark, as a report in the terminal
and, when asked, as Markdown, JSON, a job summary, annotations, step outputs, fork-PR files
and an exit status."""

from __future__ import annotations

import argparse
import math
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

from torch_bench.analyze import git
from torch_bench.analyze.ab import Checkouts, run_round
from torch_bench.analyze.baseline import (
    Baseline,
    NoBaseline,
    UntrustedBaseline,
    choose_baseline,
    explicit,
    noise_history,
)
from torch_bench.analyze.confirm import (
    DEFAULT_BUDGET_S,
    MAX_ROUNDS,
    MIN_ROUNDS,
    MOST_ROUNDS,
    confirm,
    name_filter,
    with_documents,
)
from torch_bench.analyze.evidence import HISTORY_WINDOW
from torch_bench.analyze.headline import comparison_document, overall
from torch_bench.analyze.rule import RulePolicy
from torch_bench.analyze.verdicts import Comparison, Kind, compare_runs, confirm_regressions
from torch_bench.boundary import http_url, limited, number, shell_words
from torch_bench.cli.outputs import check_outputs
from torch_bench.errors import UserError
from torch_bench.fileio import write_json_atomic, write_text_atomic
from torch_bench.report import actions, workflow
from torch_bench.report.markdown import ReportContext, format_report
from torch_bench.results.document import load_run
from torch_bench.results.schema import Run
from torch_bench.store.reader import RunFilter, load_history
from torch_bench.store.run_index import IndexedRun, IndexMismatch, index_history, read_in_full

EXIT_REGRESSION = 1


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "compare",
        help="compare results with a baseline and report verdicts",
        description="Compare HEAD results with BASE results benchmark by benchmark and print "
                    "a report. BASE and HEAD are run documents or folders of them (several "
                    "runs a side are pooled); BASE may be 'auto' to pick the baseline from "
                    "--history: the base branch's runs at the merge-base or its nearest "
                    "ancestor with results, else the latest base-branch runs, always on the "
                    "head's environment fingerprint.",
        epilog="example: torch-bench compare auto results.json --history data "
               "--markdown report.md --fail-on-regression",
    )
    parser.add_argument("base", metavar="BASE", help="run file, folder of run files, or 'auto'")
    parser.add_argument("head", metavar="HEAD", help="run file or folder of run files")
    add_rule_arguments(parser)
    parser.add_argument("--history", metavar="DATA_FOLDER",
                        help="data folder: base-branch runs teach the run-to-run noise")
    parser.add_argument("--base-branch", metavar="NAME",
                        help="branch the baseline and history come from (default: the head "
                             "run's PR base branch, else main)")
    parser.add_argument("--repo-dir", default=".", metavar="DIR",
                        help="git checkout for finding the merge-base (default .)")
    parser.add_argument("--latest", action="store_true",
                        help="with BASE 'auto': skip the merge-base and compare with the latest "
                             "runs of the base branch")
    parser.add_argument("--rerun-command", metavar="CMD",
                        help="command that re-runs only the flagged benchmarks to confirm them: "
                             "it gets TORCH_BENCH_RERUN_FILTER (a --filter regex) and "
                             "TORCH_BENCH_RERUN_OUT (where to write the run document)")
    confirm = parser.add_argument_group(
        "targeted confirmation",
        "re-measure only the flagged, undecided and leaning benchmarks, base and head "
        "interleaved in A/B rounds, until each is settled or no longer worth measuring, or "
        "the budget is spent")
    confirm.add_argument("--confirm-base", metavar="DIR",
                         help="checkout of the base (e.g. a worktree of the merge-base); "
                              "turns confirmation on")
    confirm.add_argument("--confirm-head", metavar="DIR", default=".",
                         help="checkout of the head (default .)")
    confirm.add_argument("--confirm-budget", type=limited("budget"), default=DEFAULT_BUDGET_S,
                         metavar="SECONDS",
                         help=f"time the rounds may take (default {DEFAULT_BUDGET_S:g})")
    confirm.add_argument("--confirm-max-rounds", default=MAX_ROUNDS, metavar="N",
                         type=number(MIN_ROUNDS, MOST_ROUNDS, integer=True, unit="rounds"),
                         help=f"most rounds (default {MAX_ROUNDS}, at most {MOST_ROUNDS})")
    confirm.add_argument("--confirm-run-args", default="", metavar="ARGS", type=shell_words,
                         help="`torch-bench run` arguments of the head's run, as one string "
                              "(each round adds --filter for the benchmarks it measures and "
                              "reuses the head's calls per sample)")
    confirm.add_argument("--confirm-out-dir", metavar="DIR",
                         help="keep every confirmation round's run document here (default: "
                              "kept only when a target was not settled, in "
                              "confirmation-rounds-TIME/ beside the --json or --markdown "
                              "report, else in the current folder)")
    add_report_arguments(parser)
    parser.set_defaults(handler=handle)


def add_rule_arguments(parser: argparse.ArgumentParser) -> None:
    rule = parser.add_argument_group("rule")
    rule.add_argument("--min-effect", type=float, default=0.02, metavar="FRACTION",
                      help="smallest change called a regression (default 0.02 = 2%%)")
    rule.add_argument("--min-effect-for", action="append", default=[], metavar="KEY=FRACTION",
                      help="minimum effect for a suite, metric or suite:metric (repeatable)")
    rule.add_argument("--false-alarm-rate", type=limited("false-alarm-rate"), default=0.01,
                      metavar="FRACTION",
                      help="per benchmark: the chance that an unchanged benchmark is called a "
                           "regression (default 0.01 = 1%%)")
    rule.add_argument("--per-pr-level", type=limited("per-pr-level"), default=0.05,
                      metavar="FRACTION",
                      help="per report: the chance that a report on an unchanged PR names "
                           "any regression, the whole run's included; the whole run's test "
                           "takes the false-alarm rate of it (at most half), the "
                           "Benjamini-Hochberg level over the benchmarks is the rest "
                           "(default 0.05 = 5%%; 1 turns the correction off)")
    rule.add_argument("--min-history", type=int, default=3, metavar="N",
                      help="base-branch runs needed to judge without A/B rounds (default 3)")
    rule.add_argument("--ignore-environment", action="store_true",
                      help="compare even when the environment fingerprints differ")


def add_report_arguments(parser: argparse.ArgumentParser) -> None:
    out = parser.add_argument_group("report")
    out.add_argument("--markdown", metavar="FILE", help="write the Markdown report here")
    out.add_argument("--json", metavar="FILE", help="write the verdicts as JSON here")
    out.add_argument("--config-name", default="default", metavar="NAME",
                     help="configuration this report is about (one PR comment per name)")
    out.add_argument("--title", default="torch-bench", help="report heading")
    out.add_argument("--dashboard-link", metavar="URL", type=http_url,
                     help="link template for a benchmark's dashboard page; {id} is replaced")
    out.add_argument("--fork-dir", metavar="DIR",
                     help="also write report.md and pr-number.txt here, for a workflow_run "
                          "workflow to post (fork PRs)")
    out.add_argument("--pr", type=int, metavar="N", help="PR number (default: from the run)")
    out.add_argument("--no-github", action="store_true",
                     help="write no job summary, annotations or step outputs")
    out.add_argument("--fail-on-regression", action="store_true",
                     help="exit with status 1 when a benchmark regressed or newly fails, or the "
                          "whole run is slower beyond its history")


def policy_from(args: argparse.Namespace) -> RulePolicy:
    overrides = {}
    for item in args.min_effect_for:
        key, sep, value = item.partition("=")
        try:
            overrides[key.strip()] = float(value)
        except ValueError:
            sep = ""
        if not sep or not key.strip():
            raise UserError(f"--min-effect-for: expected KEY=FRACTION, got {item!r}")
    for name, value in (("--min-effect", args.min_effect), *(
            (f"--min-effect-for {k}", v) for k, v in overrides.items())):
        if not 0 <= value < 10:
            raise UserError(f"{name}: {value} is not a fraction such as 0.02")
    at_least("--min-history", args.min_history, 2)
    if args.pr is not None:
        at_least("--pr", args.pr, 1)
    return RulePolicy(alpha=args.false_alarm_rate, fdr=args.per_pr_level,
                      min_effect=args.min_effect, min_effect_for=overrides,
                      min_history=args.min_history)


def at_least(name: str, value: int, lowest: int) -> None:
    if value < lowest:
        raise UserError(f"{name}: {value} must be at least {lowest}")


def load_runs(path: str, what: str) -> list[Run]:
    target = Path(path)
    if target.is_dir():
        files = sorted(target.rglob("*.json"))
        if not files:
            raise UserError(f"{what}: {path}: no run documents (*.json) in this folder")
        runs = [load_run(f) for f in files]
    elif target.exists():
        runs = [load_run(target)]
    else:
        raise UserError(f"{what}: {path}: no such file or folder")
    return sorted(runs, key=lambda r: (r.created_at, r.run_id))


def handle(args: argparse.Namespace) -> int:
    check_outputs({"--markdown": args.markdown, "--json": args.json})
    policy = policy_from(args)
    head = load_runs(args.head, "HEAD")
    base_branch = args.base_branch or head[0].git.get("base_branch") or "main"
    where = RunFilter(fingerprint=head[0].fingerprint)
    skipped: tuple[str, ...] = ()
    try:
        index = index_history(args.history, where) if args.history else None
        skipped = index.problems if index else ()
        baseline, history = chosen_runs(args, head, base_branch, index.runs if index else ())
    except IndexMismatch:  # a file damaged where the index did not look: read it all
        whole = load_history(args.history, where)
        skipped = whole.problems
        baseline, history = chosen_runs(args, head, base_branch, whole.runs)
    for problem in skipped:
        print(f"torch-bench: warning: skipped {problem}", file=sys.stderr)
    comparison = compare_runs(baseline.runs, head, history, policy=policy,
                              ignore_environment=args.ignore_environment,
                              baseline_note=baseline.how)
    if args.confirm_base:
        comparison = confirm_targets(comparison, args, policy)
    if args.rerun_command and comparison.of_kind(Kind.REGRESSION):
        comparison = confirm_regressions(comparison, rerun_flagged(args.rerun_command,
                                                                   comparison), policy)
    return emit(comparison, args, head)


def chosen_runs(args, head: Sequence[Run], base_branch: str,
                stored: Sequence[Run | IndexedRun]) -> tuple[Baseline, list[Run]]:
    """The baseline and the history runs the rule uses (the newest HISTORY_WINDOW up to the
    baseline), read in full; `stored`: the history's runs, or their index entries (only the
    runs chosen are then read)."""
    baseline = resolve_baseline(args, head, stored, base_branch)
    history = noise_history(stored, head, base_branch, baseline)[-HISTORY_WINDOW:]
    runs = read_in_full([*baseline.runs, *history])
    return replace(baseline, runs=tuple(runs[:len(baseline.runs)])), runs[len(baseline.runs):]


def resolve_baseline(args, head: Sequence[Run], history: Sequence[Run | IndexedRun],
                     base_branch: str) -> Baseline:
    if args.base != "auto":
        try:
            return explicit(load_runs(args.base, "BASE"), args.base)
        except UntrustedBaseline as exc:
            raise UserError(f"BASE {exc}") from None
    if not args.history:
        raise UserError("BASE 'auto' needs --history DATA_FOLDER to choose a baseline from")
    sha = head[0].git.get("sha")
    ancestry: list[str] = []
    if sha and not args.latest:
        refs = [r for r in (head[0].git.get("base_sha"), f"origin/{base_branch}", base_branch)
                if r]
        found = git.merge_base(args.repo_dir, sha, refs)
        ancestry = git.ancestors(args.repo_dir, found) if found else []
    baseline = choose_baseline(head, history, base_branch=base_branch, ancestors=ancestry)
    if baseline is None:
        raise NoBaseline(f"--history {args.history}: no run of branch {base_branch!r} with the "
                        f"head's environment fingerprint {head[0].fingerprint}; pass a "
                        "BASE file instead")
    return baseline


def confirm_targets(comparison: Comparison, args: argparse.Namespace,
                    policy: RulePolicy) -> Comparison:
    """Targeted confirmation (`analyze/confirm.py`) with A/B rounds of the two checkouts."""
    if not 0 < args.confirm_budget < math.inf:
        raise UserError(f"--confirm-budget: {args.confirm_budget} is not a number of seconds "
                        "> 0")
    checkouts = Checkouts(Path(args.confirm_base).resolve(), Path(args.confirm_head).resolve(),
                          args.base_branch)
    checkouts.check()
    run_args = [*shlex.split(args.confirm_run_args), "--calibration",
                str(Path(args.head).resolve())]
    with tempfile.TemporaryDirectory(prefix="torch-bench-confirm-") as scratch:
        folder = Path(args.confirm_out_dir or scratch).resolve()
        folder.mkdir(parents=True, exist_ok=True)

        def measure_round(index: int, only: str):
            runs = run_round(checkouts, index, [*run_args, "--filter", only], folder,
                             tag="-confirm")
            return runs["base"], runs["head"]

        confirmed = confirm(comparison, measure_round, args.confirm_budget, policy,
                            args.confirm_max_rounds,
                            log=lambda line: print(line, file=sys.stderr, flush=True))
        summary = confirmed.extra.get("confirmation")
        if not args.confirm_out_dir and summary is not None and summary.unsettled:
            # what the rounds read is the evidence of an unsettled verdict: keep it
            kept = unsettled_rounds_folder(args)
            shutil.copytree(folder, kept)
            folder = kept
        elif not args.confirm_out_dir:
            return confirmed
    print(f"confirmation: the rounds' run documents are in {folder}", file=sys.stderr)
    return with_documents(confirmed, str(folder))


def unsettled_rounds_folder(args: argparse.Namespace) -> Path:
    """A new folder for an unsettled confirmation's documents, beside the report."""
    report = args.json or args.markdown
    beside = Path(report).resolve().parent if report and report != "-" else Path.cwd()
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return beside / f"confirmation-rounds-{stamp}"


def flagged_filter(comparison: Comparison) -> str:
    return name_filter(comparison.of_kind(Kind.REGRESSION))


def rerun_flagged(command: str, comparison: Comparison) -> list[Run]:
    """Run the user's re-run command for the flagged benchmarks and load what it wrote."""
    with tempfile.TemporaryDirectory(prefix="torch-bench-rerun-") as folder:
        out = Path(folder) / "rerun.json"
        env = {**os.environ, "TORCH_BENCH_RERUN_FILTER": flagged_filter(comparison),
               "TORCH_BENCH_RERUN_OUT": str(out)}
        print(f"re-running {len(comparison.of_kind(Kind.REGRESSION))} flagged benchmark(s) to "
              "confirm", file=sys.stderr)
        done = subprocess.run(shlex.split(command) if os.name != "nt" else command,
                              env=env, check=False)
        if done.returncode != 0 or not out.exists():
            print(f"torch-bench: warning: --rerun-command exited {done.returncode} without "
                  "writing TORCH_BENCH_RERUN_OUT; verdicts are not confirmed", file=sys.stderr)
            return []
        return [load_run(out)]


def emit(comparison: Comparison, args: argparse.Namespace, head: Sequence[Run]) -> int:
    """Print and write everything the report flags ask for; the exit status."""
    context = ReportContext(title=args.title, config=args.config_name,
                            dashboard_link=args.dashboard_link)
    markdown = format_report(comparison, context)
    print_report(comparison, args.title)
    if args.markdown:
        write_text_atomic(args.markdown, markdown)
    if args.json:
        write_json_atomic(args.json, comparison_document(comparison))
    in_actions = not args.no_github and os.environ.get("GITHUB_ACTIONS") == "true"
    if not args.no_github:
        if in_actions:
            for line in actions.warning_annotations(comparison):
                print(line)
        workflow.write_job_summary(markdown)
        actions.write_step_outputs(comparison)
    if args.fork_dir:
        pr = args.pr or (head[0].git.get("pr_number") if head else None)
        if not pr:
            raise UserError("--fork-dir: no PR number in the head run; pass --pr N")
        workflow.write_fork_handoff(args.fork_dir, markdown, int(pr))
    if not (args.fail_on_regression and comparison.has_regression):
        return 0
    failing = ", ".join(overall(comparison).failing)
    if in_actions:
        print(actions.failure_annotation(failing), flush=True)
    else:
        print(f"torch-bench: failing (--fail-on-regression): {failing}", file=sys.stderr)
    return EXIT_REGRESSION


def print_report(comparison: Comparison, title: str) -> None:
    """The terminal report on standard output: wrapped to a terminal's width; into a file or
    a CI log, lines unwrapped and tables 120 columns wide (or $COLUMNS)."""
    from rich.console import Console

    from torch_bench.report.terminal import render_report

    terminal = sys.stdout.isatty()
    console = Console(width=None if terminal or os.environ.get("COLUMNS") else 120,
                      soft_wrap=not terminal)
    console.print(render_report(comparison, title))
