"""`torch-bench export`: a run document in another format."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from torch_bench.cli.outputs import (
    EXPORT_FLAGS,
    STDOUT,
    add_export_arguments,
    check_outputs,
    export_dest,
    export_path,
    render_exports,
    write_exports,
)
from torch_bench.errors import UserError
from torch_bench.fileio import write_text_atomic
from torch_bench.formats import EXPORTERS, ExportOptions
from torch_bench.formats.emptiness import empty_reason
from torch_bench.formats.hf_csv_files import SUITE as HF_SUITE
from torch_bench.formats.hf_csv_files import hf_csv_files
from torch_bench.metrics import TIME_TO_MS
from torch_bench.results.document import load_run


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "export",
        help="convert a run document to OSS, AI-PEP, CSV or PyTorch's v3 records",
        description="Convert a run document. oss: {group: {name: mean}} as fastrnns prints it; "
                    "aipep: one 'Caffe2Observer {...}' line per sample; csv: the Hugging Face "
                    "benchmark layout (model, batch_size, sequence_length, result, mode, dtype, "
                    "runtime, ...); dynamo-csv: the compile suite's results per model as "
                    "PyTorch dynamo's runner writes them (dev, name, batch_size, speedup, "
                    "abs_latency, compilation_latency, compression_ratio); pytorch-v3: one "
                    "JSON record per result in the schema of PyTorch's benchmark database "
                    "(oss_ci_benchmark_v3). OSS and AI-PEP carry time results only unless "
                    "--export-all-metrics. A file name ending in .gz is written "
                    "gzip-compressed.",
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
    hf = parser.add_argument_group("Hugging Face's CSV files")
    hf.add_argument("--hf-csv", metavar="DIR",
                    help="write the transformers suite's results as the Hugging Face benchmark "
                         "utilities do: inference_time.csv, train_time.csv (seconds), "
                         "inference_memory.csv, train_memory.csv (MB), env.csv, into DIR")
    hf.add_argument("--statistic", choices=("min", "median", "mean"),
                    help="with --hf-csv: the time statistic (default: the one the run was asked "
                         "for with --statistic, else median; Hugging Face's is min)")
    parser.set_defaults(handler=handle)


def write_hf_csv(run, folder: str, statistic: str | None, console: Console) -> None:
    target = Path(folder)
    if target.exists() and not target.is_dir():
        raise UserError(f"--hf-csv: {folder} is a file, not a folder")
    files = hf_csv_files(run, statistic)
    if set(files) == {"env.csv"}:
        raise UserError(f"--hf-csv: nothing to write: no {HF_SUITE}-suite result (Hugging Face's "
                        "CSV files have one row per model, batch size and sequence length)")
    target.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        console.print(f"wrote {escape(str(write_text_atomic(target / name, text)))}")


def handle(args: argparse.Namespace) -> int:
    if args.statistic and not args.hf_csv:
        raise UserError("--statistic: goes with --hf-csv DIR")
    if args.hf_csv:
        write_hf_csv(load_run(args.results), args.hf_csv, args.statistic, Console(stderr=True))
        if not args.format and not any(export_path(args, n) for n in EXPORT_FLAGS):
            return 0
    flagged = any(export_path(args, name) for name in EXPORT_FLAGS)
    if args.format and flagged:
        raise UserError(f"--format: use either --format (with --out) or {FLAG_LIST}")
    if not args.format and not flagged:
        raise UserError(f"--format: say what to write: --format NAME, or {FLAG_LIST} FILE")
    if args.format:
        setattr(args, export_dest(args.format), args.out or STDOUT)
    check_outputs({flag: export_path(args, name) for name, flag in EXPORT_FLAGS.items()})
    options = ExportOptions(unit=args.unit, all_metrics=args.export_all_metrics)
    run = load_run(args.results)
    rendered = render_exports(run, args, options)
    _refuse_empty(rendered, args, args.results)
    write_exports(rendered, Console(stderr=True))
    return 0


FLAG_LIST = "/".join(EXPORT_FLAGS.values())


def _refuse_empty(rendered: dict[str, str], args: argparse.Namespace, source: str) -> None:
    """Exit 2 before writing anything when an export asked for would hold no value."""
    for name, flag in EXPORT_FLAGS.items():
        path = export_path(args, name)
        reason = empty_reason(name, rendered[path]) if path in rendered else None
        if reason:
            shown = f"--format {name}" if args.format == name else flag
            raise UserError(f"{shown}: nothing to write from {source}: {reason}")
