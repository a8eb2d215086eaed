"""`torch-bench ab`: measure base and head in the same job, interleaved, and compare."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from torch_bench.analyze.ab import run_ab
from torch_bench.analyze.baseline import UntrustedBaseline, explicit
from torch_bench.analyze.verdicts import Kind, compare_runs, confirm_regressions
from torch_bench.cli.compare import (
    add_report_arguments,
    add_rule_arguments,
    at_least,
    emit,
    flagged_filter,
    policy_from,
)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "ab",
        help="run base and head interleaved in one job and compare them",
        description="A/B mode: run `torch-bench run RUN_ARGS` in the BASE and HEAD checkouts "
                    "alternately (base-head, head-base, ...) for --rounds rounds, pool the "
                    "samples per side and report verdicts with R = rounds. Flagged "
                    "regressions are re-run (only them, --confirm-rounds rounds) to confirm.",
        epilog="example: torch-bench ab --base ../main --head . --rounds 5 -- --suite rnns "
               "--seq-length 20",
    )
    parser.add_argument("--base", required=True, metavar="DIR", help="base checkout")
    parser.add_argument("--head", required=True, metavar="DIR", help="head checkout")
    parser.add_argument("--rounds", type=int, default=5,
                        help="rounds; each runs both sides once (default 5)")
    parser.add_argument("--confirm-rounds", type=int, default=None, metavar="N",
                        help="rounds of the confirming re-run of flagged benchmarks "
                             "(default: --rounds; 0 disables)")
    parser.add_argument("--out-dir", metavar="DIR",
                        help="keep every round's run document here, and the calibration "
                             "(calibration.json) every run of both sides reuses (default: a "
                             "temporary folder)")
    parser.add_argument("--base-branch", metavar="NAME",
                        help="the branch the base side's run documents name when its checkout "
                             "is detached (default: the checkout's branch, else "
                             "GITHUB_BASE_REF)")
    add_rule_arguments(parser)
    add_report_arguments(parser)
    parser.add_argument("run_args", nargs=argparse.REMAINDER, metavar="-- RUN_ARGS",
                        help="arguments for `torch-bench run`")
    parser.set_defaults(handler=handle)


def progress(step, total) -> None:
    print(f"[{step.round + 1}] {step.side}", file=sys.stderr, flush=True)


def ab_note(base: list, source: str) -> str:
    """How the base was measured; untrusted base runs are not an error here: the comparison
    then alerts on nothing (see `verdicts.compare_runs`)."""
    try:
        return explicit(base, source).how
    except UntrustedBaseline:
        return f"{len(base)} run(s) from {source}"


def handle(args: argparse.Namespace) -> int:
    at_least("--rounds", args.rounds, 1)
    if args.confirm_rounds is not None:
        at_least("--confirm-rounds", args.confirm_rounds, 0)
    policy = policy_from(args)
    run_args = args.run_args[1:] if args.run_args[:1] == ["--"] else args.run_args
    base_dir, head_dir = Path(args.base).resolve(), Path(args.head).resolve()
    with tempfile.TemporaryDirectory(prefix="torch-bench-ab-") as scratch:
        out_dir = Path(args.out_dir or scratch).resolve()
        out_dir.mkdir(parents=True, exist_ok=True)
        runs = run_ab(base_dir, head_dir, args.rounds, run_args, out_dir, progress,
                      base_branch=args.base_branch)
        comparison = compare_runs(
            runs["base"], runs["head"], policy=policy,
            ignore_environment=args.ignore_environment,
            baseline_note=ab_note(runs["base"], f"{base_dir.name}, interleaved with the head "
                                                f"over {args.rounds} rounds"),
            side_by_side=True)
        confirm = args.rounds if args.confirm_rounds is None else args.confirm_rounds
        if confirm > 0 and comparison.of_kind(Kind.REGRESSION):
            print(f"confirming {len(comparison.of_kind(Kind.REGRESSION))} regression(s)",
                  file=sys.stderr)
            again = run_ab(base_dir, head_dir, confirm,
                           [*run_args, "--filter", flagged_filter(comparison)], out_dir,
                           progress, tag="-confirm", base_branch=args.base_branch)
            comparison = confirm_regressions(comparison, again["head"], policy, again["base"])
        return emit(comparison, args, runs["head"])
