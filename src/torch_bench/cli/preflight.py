"""`torch-bench preflight`: is this machine fit to measure on right now?"""

from __future__ import annotations

import argparse
import json

from torch_bench.measure.preflight import run_preflight


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
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    report = run_preflight()
    if args.json:
        print(json.dumps(report.to_dict(), indent=1))
    else:
        for finding in report.findings:
            print(f"{finding.severity:4}  {finding.check:14} {finding.message}")
        print("trusted" if report.trusted else "UNTRUSTED: results would not be alerted on")
    return 1 if args.fail and not report.trusted else 0
