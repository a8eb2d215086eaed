"""`torch-bench import`: results another tool wrote, as a run document."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from torch_bench.errors import UserError
from torch_bench.formats import IMPORTERS, importer
from torch_bench.measure.environment import collect_environment
from torch_bench.metrics import MEMORY_TO_MB, TIME_TO_MS, get_metric
from torch_bench.provenance import ci_info, git_info
from torch_bench.results.document import save_run
from torch_bench.results.schema import new_run


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "import",
        help="turn OSS or AI-PEP output into a run document",
        description="Read results another tool wrote and save them as a run document. The "
                    "environment of this machine is recorded (the usual case: the tool ran here "
                    "moments ago); pass --no-env when it did not.",
        epilog="example (fastrnns on CPU prints seconds labelled ms): "
               "torch-bench import fastrnns.txt --format aipep --unit s --out results.json",
    )
    parser.add_argument("source", metavar="FILE", help="file to read")
    parser.add_argument("--format", required=True, choices=sorted(IMPORTERS))
    parser.add_argument("--unit", choices=[*TIME_TO_MS, *MEMORY_TO_MB],
                        help="what the values really are, overriding what the file says")
    parser.add_argument("--metric", help="metric the values measure (default: time, or "
                                         "peak_memory for memory units)")
    parser.add_argument("--suite", default="imported", help="suite name to file them under")
    parser.add_argument("--no-env", action="store_true", help="do not record this machine")
    parser.add_argument("--out", default="results.json", metavar="FILE",
                        help="run document to write (default results.json)")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    if args.metric:
        get_metric(args.metric)
    try:
        text = Path(args.source).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"{args.source}: no such file") from None
    results = importer(args.format)(text, source=args.source, unit=args.unit, suite=args.suite,
                                    metric=args.metric)
    env = {} if args.no_env else collect_environment()
    run = new_run(results, git=git_info(), ci=ci_info(), env=env,
                  config={"imported_from": {"format": args.format, "file": args.source,
                                            "unit": args.unit}})
    Console(stderr=True).print(f"imported {len(results)} results; wrote {save_run(run, args.out)}")
    return 0
