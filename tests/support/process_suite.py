"""A suite that shows how a case's samples were spread over worker processes: each sample is
the calls-per-sample count the process timed with (its own pid when it had to calibrate), and
a case can crash in its second process."""

from __future__ import annotations

import os
from pathlib import Path

from torch_bench.results.schema import measured
from torch_bench.suites.base import CaseSpec, Option, Output, Suite, parse_name_list


def plan(options, device):
    return [
        CaseSpec(suite="processes", name=name, params={"device": device},
                 outputs=(Output("latency", "processes"),), options={"marker": options["marker"]})
        for name in options["cases"]
    ]


def run_case(case, ctx):
    if case.name == "crash_second":
        marker = Path(case.options["marker"])
        if marker.exists():
            os.abort()
        marker.write_text("first process ran")
    loops = ctx.policy.loops_for("latency") or os.getpid()
    count = ctx.policy.nloops or ctx.policy.min_repeats
    return [measured(case.suite, case.name, "latency", [float(loops)] * count,
                     params=case.params, group="processes", extra={"loops": loops})]


SUITE = Suite(
    name="processes",
    description="cases that report how they were spread over processes",
    options=(Option("cases", parse_name_list, ("steady",), "cases to run"),
             Option("marker", str, "", "file the crash_second case leaves behind")),
    plan=plan,
    run_case=run_case,
)
