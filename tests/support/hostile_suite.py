"""A suite whose cases attack the run path: invalid numbers, Rich markup, leaked tokens,
escaped child processes. Each case's behaviour is the part of its name before any `~`."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace

from torch_bench.results.schema import measured
from torch_bench.suites.base import CaseSpec, Option, Output, Suite, parse_name_list

FAKE_TOKEN = "ghp_" + "A1b2C3d4" * 5  # the shape of a GitHub token, not a real one
# The grandchild leaves the case's session, so killing the case's process group misses it,
# and it keeps the case's stdout and stderr open for ten minutes.
ESCAPE = "import os, time; os.setsid(); time.sleep(600)"
# A child that stays in the case's process group and outlives the case if nothing stops it.
LINGER = "import time; time.sleep(600)  # torch-bench lingering child"


def plan(options, device):
    return [
        CaseSpec(suite="hostile", name=name, params={"device": device},
                 outputs=(Output("latency", "hostile"),))
        for name in options["cases"]
    ]


def _samples(name: str) -> list[float]:
    return {"nan": [1.0, float("nan"), 2.0], "inf": [float("inf")], "negative": [2.0, -1.0]}\
        .get(name, [1.0, 2.0, 3.0])


def _escape() -> None:
    # HOSTILE_TAG, when a test sets it, names the test run on the grandchild's command line:
    # a forked case's processes carry no case-folder marker to tell them from another run's
    subprocess.Popen([sys.executable, "-c", ESCAPE, os.environ.get("HOSTILE_TAG", "")])


def run_case(case, ctx):
    behaviour = case.name.split("~")[0]
    if behaviour == "markup":
        raise ValueError("cannot open [/some/file] [/] [bold red]")
    if behaviour == "leak":  # what a case can see of the parent's secrets, and a token it found
        seen = {name: os.environ.get(name) for name in ("GITHUB_TOKEN", "MY_PAT",
                                                        "ACTIONS_RUNTIME_TOKEN", "INPUT_TOKEN")}
        echo = os.environ.get("HOSTILE_ECHO", "")
        print(f"stderr tail: {echo} {FAKE_TOKEN}", file=sys.stderr, flush=True)
        if case.name.endswith("~exit"):
            os._exit(3)
        raise RuntimeError(f"saw {seen} echo={echo} found={FAKE_TOKEN}")
    if behaviour == "escape":
        _escape()
        if case.name.endswith("~hang"):
            time.sleep(3600)
    if behaviour == "linger":
        subprocess.Popen([sys.executable, "-c", LINGER])
    if behaviour == "thread":  # a non-daemon thread keeps the process alive after the case
        threading.Thread(target=time.sleep, args=(600,)).start()
    if behaviour == "exit":  # sys.exit(0): neither results nor an exception
        sys.exit(0)
    if behaviour == "newline":  # a name no run document can hold
        return [measured(case.suite, "a\nb", "latency", [1.0, 2.0], params=case.params,
                         group="hostile")]
    if behaviour == "sigkill":
        os.kill(os.getpid(), signal.SIGKILL)
    if behaviour == "flood":  # far more output than anyone should keep, then a crash
        for _ in range(64):
            sys.stdout.write("x" * (1 << 20) + "\n")
        sys.stdout.flush()
        os._exit(3)
    if behaviour == "huge":
        raise RuntimeError("y" * 20_000_000)
    if behaviour == "empty":
        return []
    result = measured(case.suite, case.name, "latency", _samples(behaviour), params=case.params,
                      group="hostile")
    if behaviour == "sideways":
        result = replace(result, direction="sideways")
    if behaviour == "slash":
        result = replace(result, suite="a/b")
    return [result]


SUITE = Suite(
    name="hostile",
    description="cases that report invalid numbers, print markup, leak tokens and escape",
    options=(Option("cases", parse_name_list, ("ok",), "cases to run"),),
    plan=plan,
    run_case=run_case,
)
