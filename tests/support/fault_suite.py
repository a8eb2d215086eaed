"""A suite whose cases misbehave on purpose, to test isolation with real child processes."""

from __future__ import annotations

import os
import time

from torch_bench.results.schema import measured
from torch_bench.suites.base import CaseSpec, Option, Output, Suite, parse_name_list

BEHAVIOURS = ("ok", "raise", "abort", "hang", "hog", "exit")


def plan(options, device):
    return [
        CaseSpec(suite="faults", name=name, params={"device": device},
                 outputs=(Output("latency", "faults"),))
        for name in options["cases"]
    ]


def run_case(case, ctx):
    import torch

    if case.name == "raise":
        raise ValueError("this case fails on purpose")
    if case.name == "abort":
        os.abort()
    if case.name == "hang":
        time.sleep(3600)
    if case.name == "exit":
        os._exit(3)
    if case.name == "hog":
        torch.ones(4 * 2**30 // 4)  # 4 GiB
    return [measured(case.suite, case.name, "latency", [1.0, 2.0, 3.0], params=case.params,
                     group="faults")]


SUITE = Suite(
    name="faults",
    description="cases that raise, abort, hang and exhaust memory",
    options=(Option("cases", parse_name_list, BEHAVIOURS, "cases to run"),),
    plan=plan,
    run_case=run_case,
)
