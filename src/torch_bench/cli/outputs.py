"""Output flags shared by the commands that produce a run document."""

from __future__ import annotations

import argparse
import gzip
import os
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from torch_bench.errors import UserError
from torch_bench.fileio import (
    output_path_problem,
    refuse_shared_outputs,
    write_bytes_atomic,
    write_text_atomic,
)
from torch_bench.formats import ExportOptions, exporter
from torch_bench.redact import scrub
from torch_bench.results.document import save_run
from torch_bench.results.schema import Run

# Every exporter of `formats.EXPORTERS`, by its `--format` name, and its flag.
EXPORT_FLAGS = {"oss": "--oss", "aipep": "--aipep", "csv": "--csv", "dynamo-csv": "--dynamo-csv",
                "pytorch-v3": "--pytorch-v3"}
EXPORT_HELP = {"dynamo-csv": "the compile suite's results as PyTorch dynamo's runner writes its "
                             "--output CSV",
               "pytorch-v3": "PyTorch's v3 benchmark records (JSON lines, one per result) as "
                             "test-infra's upload-benchmark-results action takes them"}
GZIP_SUFFIX = ".gz"  # an export file with this name is written gzip-compressed
EXIT_NOT_WRITTEN = 1
STDOUT = "-"


def add_export_arguments(group) -> None:
    """The export flags (`--oss FILE`, ..., `-` for standard output) and their options."""
    for name, flag in EXPORT_FLAGS.items():
        what = EXPORT_HELP.get(name, f"the {name.upper()} export")
        group.add_argument(flag, metavar="FILE", dest=export_dest(name),
                           help=f"write {what} here ('-': standard output, as fastrnns' "
                                "--print-json does; a name ending in .gz: gzip-compressed)")
    group.add_argument("--export-all-metrics", action="store_true",
                       help="OSS and AI-PEP: also write non-time metrics (memory, ratios); "
                            "their consumers read every value as a time")


def export_dest(name: str) -> str:
    """The argparse destination of an export's flag."""
    return "export_" + name.replace("-", "_")


def export_path(args: argparse.Namespace, name: str) -> str | None:
    return getattr(args, export_dest(name), None)


def add_output_arguments(parser: argparse.ArgumentParser, default_out: str) -> None:
    group = parser.add_argument_group("outputs")
    group.add_argument("--out", default=default_out, metavar="FILE",
                       help=f"run document to write (default {default_out})")
    add_export_arguments(group)


def exports_to_stdout(args: argparse.Namespace) -> bool:
    """Whether an export goes to standard output (then tables and reports go to stderr)."""
    return any(export_path(args, name) == STDOUT for name in EXPORT_FLAGS)


def render_exports(run: Run, args: argparse.Namespace,
                   options: ExportOptions | None = None) -> dict[str, str]:
    """{destination: text} for each export asked for."""
    options = options or ExportOptions(all_metrics=args.export_all_metrics)
    exports = {name: export_path(args, name) for name in EXPORT_FLAGS}
    return {path: exporter(name)(run, options) for name, path in exports.items() if path}


def write_exports(rendered: dict[str, str], console: Console) -> None:
    for path, text in rendered.items():
        if path == STDOUT:
            sys.stdout.write(text)
            sys.stdout.flush()
        else:
            console.print(f"wrote {escape(str(_write_export(path, text)))}")


def _write_export(path: str, text: str) -> Path:
    if not path.endswith(GZIP_SUFFIX):
        return write_text_atomic(path, text)
    # mtime 0: the same export gives the same bytes
    return write_bytes_atomic(path, gzip.compress(scrub(text).encode("utf-8"), mtime=0))


def check_outputs(paths: dict[str, str | None]) -> None:
    """Fail before any work when an output flag ({flag: path}) names a place no file can be
    written, or when two of them name one file."""
    for flag, path in paths.items():
        problem = path and path != STDOUT and output_path_problem(path)
        if problem:
            raise UserError(f"{flag}: {path}: {problem}")
    refuse_shared_outputs(paths, stdout=STDOUT)


def check_output_paths(args: argparse.Namespace) -> None:
    """`check_outputs` for --out and the export flags."""
    exports = {flag: export_path(args, name) for name, flag in EXPORT_FLAGS.items()}
    check_outputs({"--out": getattr(args, "out", None), **exports})


def write_outputs(run: Run, args: argparse.Namespace, console: Console,
                  fallback_dir: str | os.PathLike | None = None) -> int:
    """Write the run document, then each export asked for; every file is written whole.
    When the document cannot be written (a full disk), try a copy in `fallback_dir` (default:
    the temporary folder) and say where it went. Returns the exit status: 0, or 1 when a
    file could not be written."""
    rendered = render_exports(run, args)
    try:
        saved = save_run(run, args.out)
    except OSError as exc:
        _report_unsaved(run, args.out, exc, console, fallback_dir)
        return EXIT_NOT_WRITTEN
    console.print(f"wrote {escape(str(saved))}")
    try:
        write_exports(rendered, console)
    except OSError as exc:
        _print_error(console, f"cannot write {exc.filename or 'an export'}: {_reason(exc)} "
                              f"(the run document {saved} is complete)")
        return EXIT_NOT_WRITTEN
    return 0


def _report_unsaved(run: Run, path, exc: OSError, console: Console, fallback_dir) -> None:
    folder = Path(fallback_dir or tempfile.gettempdir())
    fallback = folder / f"torch-bench-run-{run.run_id}.json"
    try:
        save_run(run, fallback)
    except OSError as again:
        _print_error(console, f"cannot write {path}: {_reason(exc)}; a copy in {folder} failed "
                              f"too ({_reason(again)}): the measured results are lost")
        return
    _print_error(console, f"cannot write {path}: {_reason(exc)}; the run document was saved "
                          f"to {fallback} instead")


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _print_error(console: Console, message: str) -> None:
    console.print(f"torch-bench: error: {message}", markup=False, highlight=False,
                  soft_wrap=True)
