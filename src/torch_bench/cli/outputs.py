"""Output flags shared by the commands that produce a run document."""

from __future__ import annotations

import argparse
import sys

from rich.console import Console

from torch_bench.fileio import write_text_atomic
from torch_bench.formats import ExportOptions, exporter
from torch_bench.results.document import save_run
from torch_bench.results.schema import Run

EXPORT_FLAGS = {"oss": "--oss", "aipep": "--aipep", "csv": "--csv"}
STDOUT = "-"


def add_export_arguments(group) -> None:
    """The export flags (`--oss FILE`, ..., `-` for standard output) and their options."""
    for name, flag in EXPORT_FLAGS.items():
        group.add_argument(flag, metavar="FILE", dest=f"export_{name}",
                           help=f"write the {name.upper()} export here ('-': standard output, "
                                "as fastrnns' --print-json does)")
    group.add_argument("--export-all-metrics", action="store_true",
                       help="OSS and AI-PEP: also write non-time metrics (memory, ratios); "
                            "their consumers read every value as a time")


def add_output_arguments(parser: argparse.ArgumentParser, default_out: str) -> None:
    group = parser.add_argument_group("outputs")
    group.add_argument("--out", default=default_out, metavar="FILE",
                       help=f"run document to write (default {default_out})")
    add_export_arguments(group)


def exports_to_stdout(args: argparse.Namespace) -> bool:
    """Whether an export goes to standard output (then tables and reports go to stderr)."""
    return any(getattr(args, f"export_{name}") == STDOUT for name in EXPORT_FLAGS)


def render_exports(run: Run, args: argparse.Namespace,
                   options: ExportOptions | None = None) -> dict[str, str]:
    """{destination: text} for each export asked for."""
    options = options or ExportOptions(all_metrics=args.export_all_metrics)
    exports = {name: getattr(args, f"export_{name}") for name in EXPORT_FLAGS}
    return {path: exporter(name)(run, options) for name, path in exports.items() if path}


def write_exports(rendered: dict[str, str], console: Console) -> None:
    for path, text in rendered.items():
        if path == STDOUT:
            sys.stdout.write(text)
            sys.stdout.flush()
        else:
            console.print(f"wrote {write_text_atomic(path, text)}")


def write_outputs(run: Run, args: argparse.Namespace, console: Console) -> None:
    """Write the run document, then each export asked for; every file is written whole."""
    rendered = render_exports(run, args)
    saved = save_run(run, args.out)
    console.print(f"wrote {saved}")
    write_exports(rendered, console)
