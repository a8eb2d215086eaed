"""`torch-bench`: the command line. Each subcommand lives in its own module with
`register(subparsers)` and a handler; bad input is one line on stderr and exit status 2.

Only the module of the command being run is imported: `--version`, `--help` and the commands
that measure nothing stay free of torch (seconds of import time, and not installed at all by
the dashboard and comment sub-actions); those that judge nothing (`comment`, `store`, `data`)
stay free of scipy too."""

from __future__ import annotations

import argparse
import sys
from importlib import import_module
from typing import NamedTuple

from torch_bench import __version__
from torch_bench.errors import UserError
from torch_bench.fileio import os_error_line
from torch_bench.redact import scrubbed_standard_streams


class Command(NamedTuple):
    name: str
    module: str
    summary: str  # the module's own `help=`, repeated so that `--help` imports nothing


COMMANDS = (
    Command("run", "torch_bench.cli.run", "run benchmark suites"),
    Command("export", "torch_bench.cli.export",
            "convert a run document to OSS, AI-PEP, CSV or PyTorch's v3 records"),
    Command("import", "torch_bench.cli.import_",
            "turn other tools' output (OSS, AI-PEP, pytest-benchmark, asv, "
            "github-action-benchmark, PyTorch's v3 records) into runs"),
    Command("env", "torch_bench.cli.env", "show the environment and its fingerprint"),
    Command("preflight", "torch_bench.cli.preflight", "check GPU and CPU state before measuring"),
    Command("compare", "torch_bench.cli.compare",
            "compare results with a baseline and report verdicts"),
    Command("comment", "torch_bench.cli.comment", "post or update the PR comment with a report"),
    Command("ab", "torch_bench.cli.ab",
            "run base and head interleaved in one job and compare them"),
    Command("site", "torch_bench.cli.site",
            "build the static dashboard (HTML, CSS, JS and JSON data) from a data folder"),
    Command("store", "torch_bench.cli.store", "append runs to the data branch (or a folder)"),
    Command("data", "torch_bench.cli.data",
            "list, prune, rename, compact, verify or export the stored history"),
    Command("bisect", "torch_bench.cli.bisect",
            "find the commit between a good and a bad one that made benchmarks slower"),
    Command("explain", "torch_bench.cli.explain",
            "profile cases on base and head and diff their operators"),
)
COMMAND_MODULES = tuple(command.module for command in COMMANDS)

EXIT_USAGE = 2


def chosen_command(argv: list[str]) -> str | None:
    """The subcommand named on the command line (the first word that is not an option:
    the top-level parser has no option taking a value)."""
    return next((arg for arg in argv if not arg.startswith("-")), None)


class OneLineParser(argparse.ArgumentParser):
    """A usage error is one line naming the flag and the value (argparse would print the
    whole usage block first), and exit status 2."""

    def error(self, message: str):
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser with the chosen command registered in full and the others as a one-line
    entry each (all in full when `argv` is None)."""
    parser = OneLineParser(
        prog="torch-bench",
        description="Continuous benchmarking for PyTorch: run suites, keep results, compare.",
    )
    parser.add_argument("--version", action="version", version=f"torch-bench {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    chosen = None if argv is None else chosen_command(argv)
    for command in COMMANDS:
        if argv is None or command.name == chosen:
            import_module(command.module).register(subparsers)
        else:
            subparsers.add_parser(command.name, help=command.summary)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; everything it prints passes the secret scrubber on its way out."""
    with scrubbed_standard_streams():
        return _run(argv)


def _run(argv: list[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser(argv).parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except UserError as exc:
        print(f"torch-bench: error: {exc}", file=sys.stderr)
        return getattr(exc, "exit_status", EXIT_USAGE)  # 1 for a full or read-only disk
    except OSError as exc:  # the last line of defence: a file no command checked for
        line, status = os_error_line(exc)
        print(f"torch-bench: error: {line}", file=sys.stderr)
        return status
    except KeyboardInterrupt:
        print("torch-bench: interrupted", file=sys.stderr)
        return 130
