"""`torch-bench preflight`: is this machine fit to measure on right now?"""

from __future__ import annotations

import argparse
import json

from torch_bench.boundary import number
from torch_bench.errors import UserError
from torch_bench.measure.preflight import Thresholds, run_preflight


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "preflight",
        help="check GPU and CPU state before measuring",
        description="Check for other processes on the GPU, temperature near slowdown, a capped "
                    "power limit, throttling, and other processes loading the CPU. `run` does "
                    "this itself and records the outcome; a failure marks the run untrusted.",
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--fail", action="store_true", help="exit 1 when a check fails")
    add_cpu_busy_limit(parser)
    parser.set_defaults(handler=handle)


def add_cpu_busy_limit(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--cpu-busy-limit", type=number(0, 1e6, unit="%"), metavar="PERCENT",
        help="CPU other processes may use during the check, in percent of one core, before "
             "the run is untrusted (default 10; 100 = one whole core)")


def handle(args: argparse.Namespace) -> int:
    limit = args.cpu_busy_limit
    if limit is not None and limit < 0:
        raise UserError(f"--cpu-busy-limit: expected a percentage >= 0, got {limit:g}")
    report = run_preflight(Thresholds() if limit is None else Thresholds(cpu_busy_limit=limit))
    if args.json:
        print(json.dumps(report.to_dict(), indent=1))
    else:
        for finding in report.findings:
            print(f"{finding.severity:4}  {finding.check:14} {finding.message}")
        print("trusted" if report.trusted else "UNTRUSTED: results would not be alerted on")
    return 1 if args.fail and not report.trusted else 0
