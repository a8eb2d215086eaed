"""`torch-bench export`: a run document in another format."""

from __future__ import annotations

import argparse
import sys

from torch_bench.fileio import write_text_atomic
from torch_bench.formats import EXPORTERS, exporter
from torch_bench.results.document import load_run


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "export",
        help="convert a run document to OSS, AI-PEP or CSV",
        description="Convert a run document. oss: {group: {name: mean}} as fastrnns prints it; "
                    "aipep: one 'Caffe2Observer {...}' line per sample; csv: the Hugging Face "
                    "benchmark layout (model, batch_size, sequence_length, result, ...).",
        epilog="example: torch-bench export results.json --format aipep --out aipep.txt",
    )
    parser.add_argument("results", metavar="RESULTS", help="run document (JSON)")
    parser.add_argument("--format", required=True, choices=sorted(EXPORTERS))
    parser.add_argument("--out", metavar="FILE", help="write here instead of standard output")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    text = exporter(args.format)(load_run(args.results))
    if args.out:
        write_text_atomic(args.out, text)
    else:
        sys.stdout.write(text)
    return 0
