"""`torch-bench import`: results another tool wrote, as a run document."""

from __future__ import annotations

import argparse

from rich.console import Console

from torch_bench.errors import UserError
from torch_bench.fileio import read_text
from torch_bench.formats import IMPORTERS, importer
from torch_bench.formats.github_action_benchmark import HISTORY_IMPORTERS
from torch_bench.formats.safety import guarded
from torch_bench.measure.environment import collect_environment
from torch_bench.metrics import MEMORY_TO_MB, TIME_TO_MS, get_metric
from torch_bench.provenance import ci_info, git_info
from torch_bench.results.document import save_run
from torch_bench.results.schema import new_run
from torch_bench.store.folder import store_in_folder


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "import",
        help="turn other tools' output (OSS, AI-PEP, pytest-benchmark, asv, "
             "github-action-benchmark) into runs",
        description="Read results another tool wrote and save them as a run document. The "
                    "environment of this machine is recorded (the usual case: the tool ran here "
                    "moments ago); pass --no-env when it did not.",
        epilog="examples (fastrnns on CPU prints seconds labelled ms): "
               "torch-bench import fastrnns.txt --format aipep --unit s --out results.json  |  "
               "(a whole github-action-benchmark history, one run per suite entry, into a data "
               "folder) torch-bench import data.js --format github-action-benchmark --out data",
    )
    parser.add_argument("source", metavar="FILE", help="file to read")
    parser.add_argument("--format", required=True,
                        choices=sorted([*IMPORTERS, *HISTORY_IMPORTERS]))
    parser.add_argument("--unit", choices=[*TIME_TO_MS, *MEMORY_TO_MB],
                        help="what the values really are, overriding what the file says")
    parser.add_argument("--metric", help="metric the values measure (default: time, or "
                                         "peak_memory for memory units)")
    parser.add_argument("--suite", help="suite name to file them under (default: the tool's "
                                        "name, or 'imported' for OSS and AI-PEP)")
    parser.add_argument("--no-env", action="store_true", help="do not record this machine")
    parser.add_argument("--out", metavar="PATH",
                        help="run document to write (default results.json); for a history "
                             "format, the data folder to add the runs to (default data)")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    if args.format in HISTORY_IMPORTERS:
        return handle_history(args)
    if args.metric:
        get_metric(args.metric)
    text = read_text(args.source)
    named = {"suite": args.suite} if args.suite else {}
    results = importer(args.format)(text, source=args.source, unit=args.unit, **named,
                                    metric=args.metric)
    env = {} if args.no_env else collect_environment()
    run = new_run(results, git=git_info(), ci=ci_info(), env=env,
                  config={"imported_from": {"format": args.format, "file": args.source,
                                            "unit": args.unit}})
    out = args.out or "results.json"
    Console(stderr=True).print(f"imported {len(results)} results; wrote {save_run(run, out)}")
    return 0


def handle_history(args: argparse.Namespace) -> int:
    """A history format gives many runs, each with its own commit and date: they go into a
    data folder (the layout the data branch uses), ready for `torch-bench store`."""
    for flag, value in (("--unit", args.unit), ("--metric", args.metric)):
        if value:
            raise UserError(f"{flag}: not used with --format {args.format} (the file says "
                            f"what each value is)")
    read_history = guarded(HISTORY_IMPORTERS[args.format], args.format)
    runs = read_history(read_text(args.source), source=args.source)
    out = args.out or "data"
    report = store_in_folder(runs, out)
    results = sum(len(run.results) for run in runs)
    Console(stderr=True).print(
        f"imported {len(runs)} runs ({results} results) into {out}: {len(report.added)} new, "
        f"{len(report.present)} already there")
    return 0

