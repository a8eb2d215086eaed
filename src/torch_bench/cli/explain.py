"""`torch-bench explain`: profile cases on base and head and show which operators changed."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from torch_bench.boundary import limited, number
from torch_bench.cli.attach import add_attach_arguments, attach, attach_target
from torch_bench.cli.run_guards import Stopped, stop_on_signals
from torch_bench.errors import UserError

DEFAULT_BUDGET_S = 600.0


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "explain",
        help="profile cases on base and head and diff their operators",
        description="Profile each selected case (or each regression and improvement of a "
                    "`torch-bench compare --json` file) on the BASE and HEAD checkouts with "
                    "torch.profiler, each side in its own process, and show which operators "
                    "grew, shrank, appeared or vanished; for compiled cases, graph breaks and "
                    "recompilations.",
        epilog="example: torch-bench explain --base ../main --head . --verdicts "
               "verdicts.json --markdown explain.md --trace-dir traces -- --suite rnns",
    )
    parser.add_argument("--base", required=True, metavar="DIR", help="base checkout")
    parser.add_argument("--head", required=True, metavar="DIR", help="head checkout")
    parser.add_argument("--verdicts", metavar="FILE",
                        help="a `torch-bench compare --json` file: explain only its "
                             "regressions and improvements")
    parser.add_argument("--warmup", type=int, default=3, metavar="N",
                        help="untimed calls before profiling (default 3)")
    parser.add_argument("--steps", type=int, default=7, metavar="N",
                        help="profiled calls per side; each operator's median over them is "
                             "compared (default 7)")
    parser.add_argument("--threads", type=number(1, 4_096, integer=True, unit="threads"),
                        default=1, metavar="N",
                        help="torch intra-op threads while profiling (default 1: threads "
                             "waiting for each other blur the operators' times)")
    parser.add_argument("--budget", type=limited("budget"), default=DEFAULT_BUDGET_S,
                        metavar="SECONDS",
                        help="start no case past this much time (default 600)")
    parser.add_argument("--timeout", type=number(0.01, 7 * 86_400, unit="s"), default=600.0,
                        metavar="SECONDS",
                        help="one side of one case, at most (default 600)")
    parser.add_argument("--markdown", metavar="FILE", help="write the full Markdown diff here")
    parser.add_argument("--comment-markdown", metavar="FILE",
                        help="write the short, collapsed Markdown diff (for a PR comment) here")
    parser.add_argument("--json", metavar="FILE", help="write the diff as JSON here")
    parser.add_argument("--trace-dir", metavar="DIR",
                        help="write each side's Chrome trace JSON here (open in Perfetto)")
    parser.add_argument("--device", metavar="DEVICE",
                        help="cpu, cuda or cuda:N (default: the RUN_ARGS' --device, else cpu)")
    add_attach_arguments(parser, "operator diff")
    parser.add_argument("run_args", nargs=argparse.REMAINDER, metavar="-- RUN_ARGS",
                        help="the `torch-bench run` arguments that select the cases (--suite, "
                             "--config, --filter, suite options); timing flags are ignored")
    parser.set_defaults(handler=handle)


@contextmanager
def importable_from(checkout: Path) -> Iterator[None]:
    """A checkout's own suite modules importable while its cases are planned."""
    added = [str(p) for p in (checkout / "src", checkout) if p.is_dir()]
    sys.path[:0] = added
    try:
        yield
    finally:
        for path in added:
            sys.path.remove(path)


def _check_numbers(args: argparse.Namespace) -> None:
    for flag, value, lowest in (("--warmup", args.warmup, 0), ("--steps", args.steps, 1)):
        if value < lowest:
            raise UserError(f"{flag}: {value} must be at least {lowest}")
    for flag, value in (("--budget", args.budget), ("--timeout", args.timeout)):
        if not value > 0:
            raise UserError(f"{flag}: {value} must be a positive number of seconds")


def trace_name(target, side: str, index: int) -> str:
    """A file name for a trace: safe characters only (the case's name is the user's)."""
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{target.case.suite}-{target.case.name}")[:80]
    return f"{index + 1:02d}-{stem}-{side}.json"


def handle(args: argparse.Namespace) -> int:
    from torch_bench.cli.outputs import check_outputs

    check_outputs({"--markdown": args.markdown, "--comment-markdown": args.comment_markdown,
                   "--json": args.json})
    _check_numbers(args)
    attached = attach_target(args)
    base, head = Path(args.base).resolve(), Path(args.head).resolve()
    for flag, folder in (("--base", base), ("--head", head)):
        if not folder.is_dir():
            raise UserError(f"{flag}: {folder}: no such folder")
    targets, device = _targets(args, head)
    try:
        explanation = _explain(targets, args, base, head, device)
    except Stopped as stop:
        print(f"torch-bench: explain stopped by {stop}", file=sys.stderr)
        return stop.exit_status
    _emit(explanation, args)
    _attach(explanation, attached)
    return 0


def _targets(args: argparse.Namespace, head: Path):
    from torch_bench.analyze.explain import targets_from_plan, targets_from_verdicts
    from torch_bench.fileio import parse_json, read_text
    from torch_bench.runner import plan_cases

    run_args = args.run_args[1:] if args.run_args[:1] == ["--"] else args.run_args
    with importable_from(head):
        config = selection(run_args, args.device)
        planned = [(p.suite_ref, p.case) for p in plan_cases(config)]
    if not planned:  # a typo in --filter: nothing would be explained, silently
        raise UserError(f"-- RUN_ARGS: {' '.join(run_args) or '(none)'}: select no case")
    if args.verdicts is None:
        return targets_from_plan(planned), config.device
    report = parse_json(read_text(args.verdicts), args.verdicts)
    verdicts = report.get("verdicts") if isinstance(report, dict) else None
    if not isinstance(verdicts, list) or not all(isinstance(v, dict) for v in verdicts):
        raise UserError(f"--verdicts: {args.verdicts}: not a `torch-bench compare --json` "
                        "file (no list of verdicts)")
    return targets_from_verdicts(planned, verdicts), config.device


def selection(run_args: list[str], device: str | None):
    """The run configuration `torch-bench run RUN_ARGS` would plan its cases from."""
    from torch_bench.cli import OneLineParser
    from torch_bench.cli import run as run_command
    from torch_bench.config import build_run_config, load_yaml_config

    parser = OneLineParser(prog="torch-bench explain -- RUN_ARGS")
    run_command.register(parser.add_subparsers())
    args = parser.parse_args(["run", *run_args])
    yaml_data = load_yaml_config(args.config) if args.config else None
    return build_run_config(
        yaml_data=yaml_data, yaml_source=args.config or "config",
        suites=[name.strip() for value in args.suite or () for name in value.split(",")
                if name.strip()] or None,
        device=device or args.device,
        filter=args.filter, exclude=args.exclude, exclude_exact=args.exclude_exact,
        total_partitions=args.total_partitions, partition_id=args.partition_id,
        cli_options={k[len("suite_opt_"):]: v for k, v in vars(args).items()
                     if k.startswith("suite_opt_") and v is not None})


def _explain(targets, args: argparse.Namespace, base: Path, head: Path, device: str):
    """The profiles of `targets` on both sides; SIGTERM and SIGHUP raise `Stopped` (SIGINT,
    KeyboardInterrupt) once the worker is stopped and its folder removed. What an earlier
    explain or run killed outright left is swept first."""
    from torch_bench.analyze.explain import explain
    from torch_bench.execute.profile_sides import ProfileSettings, profile_side
    from torch_bench.measure.case_folders import sweep_stale_case_folders

    settings = ProfileSettings(device=device, warmup=args.warmup,
                               steps=args.steps, threads=args.threads,
                               timeout_s=args.timeout)
    trace_dir = Path(args.trace_dir).resolve() if args.trace_dir else None
    if trace_dir:
        trace_dir.mkdir(parents=True, exist_ok=True)
    index = {id(t): i for i, t in enumerate(targets)}

    def profile(target, side: str):
        trace = trace_dir / trace_name(target, side, index[id(target)]) if trace_dir else None
        outcome = profile_side(base if side == "base" else head, target.suite_ref,
                               target.case, settings, target.metric, target.runtime, trace)
        return outcome, str(trace) if trace and trace.is_file() else None

    if not targets:
        print("explain: no regression or improvement to explain" if args.verdicts
              else "explain: no case selected", file=sys.stderr)
    sweep_stale_case_folders()
    with stop_on_signals():
        return explain(targets, profile, args.budget,
                       log=lambda line: print(line, file=sys.stderr, flush=True))


def _emit(explanation, args: argparse.Namespace) -> None:
    from rich.console import Console

    from torch_bench.fileio import write_json_atomic, write_text_atomic
    from torch_bench.report.op_diff import (
        explanation_dict,
        markdown_full,
        markdown_short,
        terminal_tables,
    )

    console = Console(highlight=False)
    for shown in terminal_tables(explanation):
        console.print(shown)
    if args.markdown:
        write_text_atomic(args.markdown, markdown_full(explanation))
    if args.comment_markdown:
        write_text_atomic(args.comment_markdown, markdown_short(explanation))
    if args.json:
        write_json_atomic(args.json, explanation_dict(explanation))


def _attach(explanation, attached) -> None:
    from torch_bench.report.op_diff import explanation_dict
    from torch_bench.results.run_notes import op_diff_note

    attach(attached, lambda run_id: op_diff_note(run_id, explanation_dict(explanation)))
