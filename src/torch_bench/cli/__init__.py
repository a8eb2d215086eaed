"""`torch-bench`: the command line. Each subcommand lives in its own module with
`register(subparsers)` and a handler; bad input is one line on stderr and exit status 2."""

from __future__ import annotations

import argparse
import sys
from importlib import import_module

from torch_bench import __version__
from torch_bench.errors import UserError

COMMAND_MODULES = (
    "torch_bench.cli.run",
    "torch_bench.cli.export",
    "torch_bench.cli.import_",
    "torch_bench.cli.env",
    "torch_bench.cli.preflight",
    "torch_bench.cli.compare",
    "torch_bench.cli.comment",
    "torch_bench.cli.ab",
    "torch_bench.cli.site",
    "torch_bench.cli.store",
    "torch_bench.cli.data",
)

EXIT_USAGE = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="torch-bench",
        description="Continuous benchmarking for PyTorch: run suites, keep results, compare.",
    )
    parser.add_argument("--version", action="version", version=f"torch-bench {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in COMMAND_MODULES:
        import_module(module).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except UserError as exc:
        print(f"torch-bench: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("torch-bench: interrupted", file=sys.stderr)
        return 130
