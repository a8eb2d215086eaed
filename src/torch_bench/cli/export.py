"""`torch-bench export`: a run document in another format."""

from __future__ import annotations

import argparse

from rich.console import Console

from torch_bench.cli.outputs import (
    EXPORT_FLAGS,
    STDOUT,
    add_export_arguments,
    check_outputs,
    render_exports,
    write_exports,
)
from torch_bench.errors import UserError
from torch_bench.formats import EXPORTERS, ExportOptions
from torch_bench.metrics import TIME_TO_MS
from torch_bench.results.document import load_run


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "export",
        help="convert a run document to OSS, AI-PEP or CSV",
        description="Convert a run document. oss: {group: {name: mean}} as fastrnns prints it; "
                    "aipep: one 'Caffe2Observer {...}' line per sample; csv: the Hugging Face "
                    "benchmark layout (model, batch_size, sequence_length, result, mode, dtype, "
                    "runtime, ...). OSS and AI-PEP carry time results only unless "
                    "--export-all-metrics.",
        epilog="examples: torch-bench export results.json --format aipep --out aipep.txt  |  "
               "torch-bench export results.json --oss - --aipep aipep.txt --unit s",
    )
    parser.add_argument("results", metavar="RESULTS", help="run document (JSON)")
    parser.add_argument("--format", choices=sorted(EXPORTERS),
                        help="the one format to write to --out (or standard output)")
    parser.add_argument("--out", metavar="FILE", help="with --format: write here instead of "
                                                      "standard output")
    parser.add_argument("--unit", choices=list(TIME_TO_MS), default="ms",
                        help="unit of the time values written (default ms; fastrnns on CPU "
                             "writes s)")
    add_export_arguments(parser.add_argument_group("several formats at once"))
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    flagged = any(getattr(args, f"export_{name}") for name in EXPORT_FLAGS)
    if args.format and flagged:
        raise UserError("--format: use either --format (with --out) or --oss/--aipep/--csv")
    if not args.format and not flagged:
        raise UserError("--format: say what to write: --format NAME, or --oss/--aipep/--csv FILE")
    if args.format:
        setattr(args, f"export_{args.format}", args.out or STDOUT)
    check_outputs({flag: getattr(args, f"export_{name}") for name, flag in EXPORT_FLAGS.items()})
    options = ExportOptions(unit=args.unit, all_metrics=args.export_all_metrics)
    rendered = render_exports(load_run(args.results), args, options)
    write_exports(rendered, Console(stderr=True))
    return 0
