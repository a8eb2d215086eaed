"""Profiling one case on one side (a checkout) in its own worker process.

The worker runs this tool's own code (its package first on PYTHONPATH) with the checkout as
its working directory and next on the path (its `src/` folder too, when it has one), so the
suite and model code under test are the checkout's, as in A/B (`analyze.ab`). It starts
without the tokens of the parent's environment, and is tied to this process as a spawned
case is (`tied_child`): stopped whole when this process stops, killed with it. Whatever
goes wrong (an exception in the case, a crash, a timeout, an unreadable answer) comes back as
a one-line reason.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import torch_bench
from torch_bench.measure.case import CaseSpec
from torch_bench.measure.case_folders import make_case_folder
from torch_bench.measure.tied_child import run_tied
from torch_bench.redact import scrub_secrets, token_free_environment
from torch_bench.results.op_profile import OpProfile, profile_from_dict
from torch_bench.suite_path import checkout_paths

MAX_ANSWER_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class ProfileSettings:
    device: str = "cpu"
    warmup: int = 3  # untimed calls first (compilation, caches)
    steps: int = 7  # profiled calls
    threads: int | None = 1
    timeout_s: float = 600.0


@dataclass(frozen=True)
class SideOutcome:
    profile: OpProfile | None
    error: str | None = None


def tool_path() -> str:
    """The folder this tool's package is imported from."""
    return str(Path(torch_bench.__file__).resolve().parent.parent)


def side_environment(checkout: Path) -> dict[str, str]:
    paths = [tool_path(), *checkout_paths(checkout)] + [
        str(p) for p in (checkout / "src", checkout) if p.is_dir()]
    environ = token_free_environment(os.environ)
    existing = environ.get("PYTHONPATH")
    return {**environ, "PYTHONPATH": os.pathsep.join(paths + ([existing] if existing else []))}


def profile_side(checkout: Path, suite_ref: str, case: CaseSpec, settings: ProfileSettings,
                 metric: str | None = None, runtime: str | None = None,
                 trace: Path | None = None) -> SideOutcome:
    folder = make_case_folder()  # named after this process: swept if it is killed outright
    try:
        request, output = folder / "request.json", folder / "profile.json"
        request.write_text(json.dumps({
            "suite_ref": suite_ref, "case": case.to_dict(), "device": settings.device,
            "threads": settings.threads, "warmup": settings.warmup, "steps": settings.steps,
            "metric": metric, "runtime": runtime,
            "trace": str(trace.resolve()) if trace else None}))
        command = [sys.executable, "-m", "torch_bench.execute.profile_worker", str(request),
                   str(output)]
        returncode, printed = run_tied(command, folder, cwd=checkout,
                                       env=side_environment(checkout),
                                       timeout_s=settings.timeout_s)
        if returncode is None:
            return SideOutcome(None, f"no profile within {settings.timeout_s:g} s")
        if not output.is_file():
            tail = printed.strip().splitlines()[-1:] or ["no output"]
            return SideOutcome(None, scrub_secrets(
                f"the profiling process exited {returncode}: {tail[0][:300]}"))
        return read_answer(output)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def read_answer(output: Path) -> SideOutcome:
    try:
        if output.stat().st_size > MAX_ANSWER_BYTES:
            raise ValueError("the profile is too large")
        data = json.loads(output.read_bytes())
        if isinstance(data, dict) and "error" in data:
            return SideOutcome(None, scrub_secrets(str(data["error"]))[:2000])
        return SideOutcome(profile_from_dict(data))
    except (OSError, ValueError, RecursionError) as exc:
        return SideOutcome(None, f"unreadable profile: {str(exc)[:300]}")
