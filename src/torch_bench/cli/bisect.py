"""`torch-bench bisect`: find the commit that made the benchmarks slower."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from torch_bench.analyze.bisect import Bisection, bisect
from torch_bench.analyze.bisect_range import regression_range
from torch_bench.analyze.bisect_runs import (
    RoundsClassifier,
    commit_info,
    commit_range,
    worktrees,
)
from torch_bench.boundary import limited, repository_name
from torch_bench.cli.attach import add_attach_arguments, attach, attach_target
from torch_bench.cli.compare import add_rule_arguments, at_least, policy_from
from torch_bench.cli.run_guards import Stopped, stop_on_signals
from torch_bench.errors import UserError
from torch_bench.fileio import (
    output_path_problem,
    refuse_shared_outputs,
    write_json_atomic,
    write_text_atomic,
)
from torch_bench.report import bisect_report
from torch_bench.report.github import GitHubError, client_from_env, upsert_comment
from torch_bench.report.workflow import write_job_summary
from torch_bench.results.run_notes import bisect_note
from torch_bench.store.reader import RunFilter, load_history
from torch_bench.store.scratch import scratch_folder

DEFAULT_MAX_STEPS = 10  # enough for 512 commits when no step is ambiguous
COMMENT_NAME = "bisect"  # one bisect comment per issue, updated in place


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "bisect",
        help="find the commit between a good and a bad one that made benchmarks slower",
        description="Binary search over the first-parent commits from --good to --bad: each "
                    "step checks a commit out into its own git worktree and measures it "
                    "(`torch-bench run RUN_ARGS`) interleaved with the current good and bad "
                    "commits over --rounds A/B rounds, then calls it good, bad or ambiguous. "
                    "Ends with the first bad commit, 'ambiguous' when noise made the search "
                    "undecidable, 'no single commit found' when the endpoints do not differ, "
                    "or where it got to when --max-steps ran out.",
        epilog="example: torch-bench bisect --good v1.2 --bad main --max-steps 6 -- "
               "--suite rnns --filter lstm --max-time 1",
    )
    parser.add_argument("--good", metavar="SHA", help="a commit measured fast")
    parser.add_argument("--bad", metavar="SHA", help="a later commit measured slower")
    parser.add_argument("--from-history", metavar="DATA",
                        help="take --good and --bad from the stored history in this data "
                             "folder: the newest change point that made --benchmark worse")
    parser.add_argument("--benchmark", metavar="NAME",
                        help="with --from-history: suite/name or benchmark id")
    parser.add_argument("--branch", metavar="NAME",
                        help="with --from-history: only this branch's runs")
    parser.add_argument("--repo", default=".", metavar="DIR",
                        help="the git checkout holding the commits (default: .)")
    parser.add_argument("--max-steps", type=limited("max-steps"), default=DEFAULT_MAX_STEPS,
                        metavar="N",
                        help=f"measure at most N steps (default {DEFAULT_MAX_STEPS})")
    parser.add_argument("--rounds", type=int, default=3,
                        help="A/B rounds per step, each runs every side once (default 3)")
    parser.add_argument("--out-dir", metavar="DIR",
                        help="keep every round's run document here, and the worktrees while "
                             "they are measured (default: a temporary folder)")
    parser.add_argument("--json", metavar="FILE", help="write the result as JSON here")
    parser.add_argument("--markdown", metavar="FILE", help="write the Markdown report here")
    parser.add_argument("--issue", type=int, metavar="N",
                        help="also post the report as a comment on issue (or PR) N of "
                             "--repository, updated in place by a later bisection (token in "
                             "GITHUB_TOKEN)")
    parser.add_argument("--repository", metavar="OWNER/NAME", type=repository_name,
                        help="with --issue (default: GITHUB_REPOSITORY)")
    parser.add_argument("--no-github", action="store_true",
                        help="write no job summary even when GITHUB_STEP_SUMMARY is set")
    add_attach_arguments(parser, "first bad commit")
    add_rule_arguments(parser)
    parser.set_defaults(pr=None)
    parser.add_argument("run_args", nargs=argparse.REMAINDER, metavar="-- RUN_ARGS",
                        help="arguments for `torch-bench run` (the same for every commit)")
    parser.set_defaults(handler=handle)


def say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def endpoints(args: argparse.Namespace) -> tuple[str, str]:
    if args.from_history:
        if args.good or args.bad:
            raise UserError("--from-history: give it instead of --good and --bad")
        if not args.benchmark:
            raise UserError("--from-history: needs --benchmark NAME")
        runs = load_history(args.from_history, RunFilter(branch=args.branch)).runs
        found = regression_range(runs, args.benchmark)
        say(f"history: {args.benchmark} changed {(found.ratio - 1) * 100:+.1f}% between "
            f"{found.good[:10]} and {found.bad[:10]}")
        return found.good, found.bad
    if not (args.good and args.bad):
        raise UserError("give --good and --bad, or --from-history DATA --benchmark NAME")
    return args.good, args.bad


def check(args: argparse.Namespace) -> None:
    at_least("--rounds", args.rounds, 2)  # rounds judge their own noise from two on
    at_least("--max-steps", args.max_steps, 1)
    if args.issue is not None:
        at_least("--issue", args.issue, 1)
        args.repository = args.repository or os.environ.get("GITHUB_REPOSITORY")
        try:
            repository_name(args.repository or "")
        except argparse.ArgumentTypeError:
            raise UserError("--issue: needs --repository OWNER/NAME (or GITHUB_REPOSITORY)"
                            ) from None
    if not Path(args.repo).is_dir():
        raise UserError(f"--repo: {args.repo}: no such folder")
    outputs = {"--json": args.json, "--markdown": args.markdown}
    for flag, path in outputs.items():  # before an hour of measuring, not after
        problem = output_path_problem(path) if path else None
        if problem:
            raise UserError(f"{flag}: {path}: {problem}")
    refuse_shared_outputs(outputs)


def handle(args: argparse.Namespace) -> int:
    check(args)
    attached = attach_target(args)
    policy = policy_from(args)
    run_args = args.run_args[1:] if args.run_args[:1] == ["--"] else args.run_args
    repo = Path(args.repo).resolve()
    commits = commit_range(repo, *endpoints(args))
    say(f"bisecting {len(commits)} commits from {commits[0][:10]} (good) to "
        f"{commits[-1][:10]} (bad), at most {args.max_steps} step(s) of {args.rounds} rounds")
    try:
        # a scratch folder of a bisection killed outright is removed by the next one
        with scratch_folder("torch-bench-bisect-") as scratch, stop_on_signals():
            out_dir = Path(args.out_dir or scratch).resolve()
            out_dir.mkdir(parents=True, exist_ok=True)
            with worktrees(repo, out_dir / "worktrees") as pool:
                classify = RoundsClassifier(pool, run_args, args.rounds, out_dir, policy,
                                            dict(os.environ), say)
                result = bisect(commits, classify, args.max_steps, time.monotonic,
                                on_step=lambda step: say(bisect_report.step_line(step)),
                                before_step=announce)
    except Stopped as stop:
        say(f"torch-bench: bisect stopped by {stop}; worktrees removed")
        return stop.exit_status
    report(result, repo, args, attached)
    return 0


def announce(number: int, candidate: str | None, left: int) -> None:
    what = candidate[:10] if candidate else "the endpoints"
    say(f"step {number}: measuring {what} ({left} commit(s) between the bounds)")


def report(result: Bisection, repo: Path, args: argparse.Namespace,
           attached: tuple | None = None) -> None:
    shas = {result.good, result.bad, *(s.candidate for s in result.steps if s.candidate)}
    commits = {sha: commit_info(repo, sha) for sha in shas}
    for line in bisect_report.text_lines(result, commits):
        print(line)
    markdown = bisect_report.markdown(result, commits)
    if args.markdown:
        write_text_atomic(args.markdown, markdown)
    document = bisect_report.document(result, commits)
    if args.json:
        write_json_atomic(args.json, document)
    attach(attached, lambda run_id: bisect_note(run_id, document))
    if not args.no_github:
        write_job_summary(markdown)
    if args.issue is not None:
        post(markdown, args.repository, args.issue)


def post(markdown: str, repository: str, issue: int) -> None:
    """The report as the issue's bisect comment; a failure is a warning, not an error: the
    result is already printed and written."""
    try:
        action, posted = upsert_comment(client_from_env(), repository, issue, markdown,
                                        COMMENT_NAME)
    except GitHubError as exc:
        say(f"warning: could not comment on issue {issue}: {exc}")
        return
    say(f"{action} the comment on issue {issue}: {(posted or {}).get('html_url', '')}")
