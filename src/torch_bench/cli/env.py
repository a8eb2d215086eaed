"""`torch-bench env`: the environment as a run would record it."""

from __future__ import annotations

import argparse
import json

from rich.console import Console
from rich.table import Table
from rich.text import Text

from torch_bench.measure.environment import FINGERPRINT_FIELDS, collect_environment


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "env",
        help="show the environment and its fingerprint",
        description="Show what a run records about this machine: versions, CPU, RAM, GPUs "
                    "(through NVML), and the fingerprint that decides which results compare.",
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    env = collect_environment()
    if args.json:
        print(json.dumps(env, indent=1))
        return 0
    table = Table(title="environment", title_justify="left")
    table.add_column("field")
    table.add_column("value", overflow="fold")
    for key, value in env.items():
        marker = " *" if key in FINGERPRINT_FIELDS else ""
        shown = json.dumps(value) if isinstance(value, list) else str(value)
        table.add_row(Text(key + marker), Text(shown))  # Text: never read as Rich markup
    Console().print(table)
    print("* part of the fingerprint")
    return 0
