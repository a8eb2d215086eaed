"""Output flags shared by the commands that produce a run document."""

from __future__ import annotations

import argparse

from rich.console import Console

from torch_bench.fileio import write_text_atomic
from torch_bench.formats import exporter
from torch_bench.results.document import save_run
from torch_bench.results.schema import Run

EXPORT_FLAGS = {"oss": "--oss", "aipep": "--aipep", "csv": "--csv"}


def add_output_arguments(parser: argparse.ArgumentParser, default_out: str) -> None:
    group = parser.add_argument_group("outputs")
    group.add_argument("--out", default=default_out, metavar="FILE",
                       help=f"run document to write (default {default_out})")
    for name, flag in EXPORT_FLAGS.items():
        group.add_argument(flag, metavar="FILE", dest=f"export_{name}",
                           help=f"also write the {name.upper()} export here")


def write_outputs(run: Run, args: argparse.Namespace, console: Console) -> None:
    """Write the run document, then each export asked for; every file is written whole."""
    exports = {name: getattr(args, f"export_{name}") for name in EXPORT_FLAGS}
    rendered = {name: exporter(name)(run) for name, path in exports.items() if path}
    saved = save_run(run, args.out)
    console.print(f"wrote {saved}")
    for name, text in rendered.items():
        console.print(f"wrote {write_text_atomic(exports[name], text)}")
