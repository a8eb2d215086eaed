"""Printing to pipes and files: a reader that stops early (`torch-bench data list | head`),
and tables that keep one row per line in a log."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping

from rich.console import Console

# What a shell reports for a writer ended by SIGPIPE (128 + 13), as for `yes | head`.
EXIT_BROKEN_PIPE = 141


def print_lines(lines: Iterable[str]) -> int:
    """Print `lines` to stdout; 0, or EXIT_BROKEN_PIPE when the reader closed the pipe.

    After a broken pipe stdout is pointed at the null device, so that the interpreter's
    final flush at exit finds nowhere to fail (the usual recipe of the Python docs)."""
    try:
        for line in lines:
            sys.stdout.write(line + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return EXIT_BROKEN_PIPE
    return 0


# Wide enough for any results table: rows are never folded in a log or a file.
UNWRAPPED_WIDTH = 10_000


def report_console(stderr: bool = False, environ: Mapping[str, str] = os.environ,
                   record: bool = False) -> Console:
    """A console for tables: the terminal's width on a terminal; elsewhere (a CI log, a file,
    a pipe) no width at all, rather than Rich's 80 columns, unless COLUMNS says one. With
    `record`, what it prints is kept for `export_text`."""
    console = Console(stderr=stderr, record=record)
    if console.is_terminal or environ.get("COLUMNS"):
        return console
    return Console(stderr=stderr, width=UNWRAPPED_WIDTH, record=record)
