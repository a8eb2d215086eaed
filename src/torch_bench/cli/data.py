"""`torch-bench data`: look after the history in a data folder (a checkout of the data branch
or a plain folder): list, prune, rename, compact, verify, export. Edits print their plan;
`--dry-run` stops there. Commit and push the folder afterwards as you would any change."""

from __future__ import annotations

import argparse
import re
import sys
from datetime import date, datetime, timedelta, timezone
from pathlib import Path, PurePosixPath

from torch_bench.cli.pipes import print_lines
from torch_bench.errors import UserError
from torch_bench.store.edits import (
    benchmark_exists,
    keep_newest,
    param_value_exists,
    prune_before,
    rename_benchmark,
    rename_param,
)
from torch_bench.store.export import export_parquet
from torch_bench.store.layout import DATA_FOLDER, OLD_DATA_FOLDER
from torch_bench.store.listing import format_benchmarks, format_runs
from torch_bench.store.notes import notes_of_removed, notes_problems
from torch_bench.store.plan import Plan, apply_plan, plan_compact, plan_edit
from torch_bench.store.reader import load_history
from torch_bench.store.scan import scan_folder
from torch_bench.store.verify import find_problems

EXIT_PROBLEMS = 1


def data_folder(text: str) -> str:
    """`--data`; a missing default folder beside one named as the old default is explained."""
    if text == DATA_FOLDER and not Path(text).exists() and Path(OLD_DATA_FOLDER).is_dir():
        raise argparse.ArgumentTypeError(
            f"no folder {DATA_FOLDER!r} (the default data folder after 1.0.0, as on the data "
            f"branch), but {OLD_DATA_FOLDER!r} exists (the default before): pass "
            f"--data {OLD_DATA_FOLDER}")
    return text


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "data", help="list, prune, rename, compact, verify or export the stored history",
        description=__doc__.split("\n\n")[0].replace("`", ""))
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)

    def action(name: str, help: str, handler) -> argparse.ArgumentParser:
        sub = actions.add_parser(name, help=help, description=help)
        sub.add_argument("--data", default=DATA_FOLDER, type=data_folder, metavar="DIR",
                         help=f"the data folder (default: {DATA_FOLDER}, as on the data "
                              "branch)")
        sub.set_defaults(handler=handler)
        return sub

    listing = action("list", "list the stored runs (or benchmarks)", handle_list)
    listing.add_argument("--benchmarks", action="store_true",
                         help="list benchmarks with their number of results instead")

    prune = action("prune", "remove old runs, or all but the newest results of each benchmark",
                   handle_prune)
    prune.add_argument("--before", type=parse_date, metavar="DATE",
                       help="remove runs created before DATE (YYYY-MM-DD or ISO-8601, UTC)")
    prune.add_argument("--keep", type=parse_count, metavar="N",
                       help="keep only the newest N results of every benchmark")
    prune.add_argument("--dry-run", action="store_true", help="print the plan only")

    rename = action("rename", "rename a benchmark or a parameter value", handle_rename)
    which = rename.add_mutually_exclusive_group(required=True)
    which.add_argument("--benchmark", nargs=2, metavar=("OLD", "NEW"),
                       help="rename benchmark OLD to NEW")
    which.add_argument("--param", nargs=3, metavar=("KEY", "OLD", "NEW"),
                       help="change parameter KEY from OLD to NEW")
    rename.add_argument("--suite", help="with --benchmark: only in this suite")
    rename.add_argument("--merge", action="store_true",
                        help="allow renaming onto a benchmark (or parameter value) that "
                             "already exists, merging the two series")
    rename.add_argument("--dry-run", action="store_true", help="print the plan only")

    compact = action("compact", "fold old run files into one Parquet archive per month",
                     handle_compact)
    compact.add_argument("--before", type=parse_month, metavar="YYYY-MM",
                         help="compact months before this one (default: before last month)")
    compact.add_argument("--keep-samples", action="store_true",
                         help="keep raw samples (default: keep summary statistics only)")
    compact.add_argument("--dry-run", action="store_true", help="print the plan only")

    action("verify", "validate every file; exit status 1 when there are problems",
           handle_verify)

    export = action("export", "write the whole history as one Parquet dataset", handle_export)
    export.add_argument("--parquet", required=True, type=_named_path, metavar="FILE_OR_DIR",
                        help="a .parquet file, or else a folder of one file per month")


def parse_date(text: str) -> str:
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            return date.fromisoformat(text).isoformat()
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date (YYYY-MM-DD)") from None
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc).replace(tzinfo=None)
    return moment.isoformat() + "Z"


def parse_month(text: str) -> str:
    if not re.fullmatch(r"\d{4}-(0[1-9]|1[0-2])", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a month (YYYY-MM)")
    return text.replace("-", "/")


def parse_count(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return int(text)


def last_month(today: date) -> str:
    return (today.replace(day=1) - timedelta(days=1)).strftime("%Y/%m")


def handle_list(args: argparse.Namespace) -> int:
    scan = scan_folder(Path(args.data))
    lines = format_benchmarks(scan.stored) if args.benchmarks else format_runs(scan.stored)
    _warn(scan.problems)
    return print_lines(lines)


def handle_prune(args: argparse.Namespace) -> int:
    if args.before is None and args.keep is None:
        raise UserError("data prune: say what to remove with --before DATE and/or --keep N")
    scan = scan_folder(Path(args.data))
    runs = [stored.run for stored in scan.stored]
    if args.before is not None:
        runs = prune_before(runs, args.before)
    if args.keep is not None:
        runs = keep_newest(runs, args.keep)
    plan = plan_edit(scan, runs)
    removed = notes_of_removed(Path(args.data), (stored.run for stored in scan.stored), runs)
    return _carry_out(args, Plan(plan.writes, plan.deletes | removed), scan.problems)


def handle_rename(args: argparse.Namespace) -> int:
    _check_rename_names(args)
    scan = scan_folder(Path(args.data))
    runs = [stored.run for stored in scan.stored]
    _refuse_missing(args, runs)
    if not args.merge:
        _refuse_merge(args, runs)
    if args.benchmark:
        runs = rename_benchmark(runs, *args.benchmark, suite=args.suite)
    else:
        runs = rename_param(runs, *args.param)
    return _carry_out(args, plan_edit(scan, runs), scan.problems)


def _check_rename_names(args: argparse.Namespace) -> None:
    if args.benchmark and not all(name.strip() for name in args.benchmark):
        raise UserError(f"--benchmark: names must not be empty, got {args.benchmark}")
    if args.param and not args.param[0].strip():
        raise UserError("--param: the parameter KEY must not be empty")


def _refuse_missing(args: argparse.Namespace, runs) -> None:
    """Renaming what is not there is a typo, not a change of nothing."""
    if args.benchmark and not benchmark_exists(runs, args.benchmark[0], args.suite):
        where = f" in suite {args.suite!r}" if args.suite else ""
        raise UserError(f"data rename: no benchmark {args.benchmark[0]!r}{where} in "
                        f"{args.data} (see torch-bench data list --benchmarks)")
    if args.param and not param_value_exists(runs, args.param[0], args.param[1]):
        raise UserError(f"data rename: no result has the parameter "
                        f"{args.param[0]}={args.param[1]} in {args.data}")


def _refuse_merge(args: argparse.Namespace, runs) -> None:
    if args.benchmark:
        old, new = args.benchmark
        if old != new and benchmark_exists(runs, new, args.suite):
            raise UserError(f"data rename: benchmark {new!r} already exists; renaming {old!r} "
                            f"to it would merge the two series (pass --merge to do that)")
    else:
        key, old, new = args.param
        if old != new and param_value_exists(runs, key, new):
            raise UserError(f"data rename: parameter {key}={new} already exists; changing "
                            f"{key}={old} to it would merge series (pass --merge to do that)")


def _named_path(text: str) -> Path:
    """A path that names something: an empty one would be the current folder."""
    if not text.strip():
        raise argparse.ArgumentTypeError("must not be empty")
    return Path(text)


def handle_compact(args: argparse.Namespace) -> int:
    scan = scan_folder(Path(args.data))
    before = args.before or last_month(datetime.now(timezone.utc).date())
    return _carry_out(args, plan_compact(scan, before, summarise=not args.keep_samples),
                      scan.problems)


def handle_verify(args: argparse.Namespace) -> int:
    root = Path(args.data)
    scan = scan_folder(root, trust_archives=False)
    present = [PurePosixPath(p.relative_to(root).as_posix())
               for p in root.rglob("*") if p.is_file()]
    found = find_problems(scan, present) + notes_problems(root)
    for line in found:
        print(line)
    runs = len({stored.run.run_id for stored in scan.stored})
    print(f"{runs} runs checked, {len(found)} problem{'s' if len(found) != 1 else ''}",
          file=sys.stderr)
    return EXIT_PROBLEMS if found else 0


def handle_export(args: argparse.Namespace) -> int:
    history = load_history(Path(args.data))
    _warn(history.problems)
    if not history.runs:
        raise UserError(f"{args.data}: no runs to export")
    target = args.parquet
    if target.suffix != ".parquet" and target.exists() and not target.is_dir():
        raise UserError(f"{target}: is a file; name a .parquet file or a folder")
    written = export_parquet(history.runs, target)
    results = sum(len(run.results) for run in history.runs)
    print(f"{len(history.runs)} runs ({results} results) written to {target}"
          f"{f' ({len(written)} files)' if len(written) > 1 else ''}", file=sys.stderr)
    return 0


def _carry_out(args: argparse.Namespace, plan: Plan, problems) -> int:
    _warn(problems)
    for line in plan.left:
        print(line, file=sys.stderr)
    if plan.empty:
        print("nothing to change", file=sys.stderr)
        return 0
    print("\n".join(plan.lines()))
    if args.dry_run:
        print("dry run: nothing changed", file=sys.stderr)
        return 0
    apply_plan(Path(args.data), plan)
    print(f"{len(plan.writes)} files written, {len(plan.deletes)} deleted", file=sys.stderr)
    return 0


def _warn(problems) -> None:
    for line in problems:
        print(f"skipped: {line}", file=sys.stderr)
