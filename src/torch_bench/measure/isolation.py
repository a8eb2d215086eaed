"""Run one case in a fresh child process, with a timeout and an optional memory cap.

Whatever happens to the child (an exception, running out of memory, a segfault or abort, a
hang) comes back as results with a status and a message; the parent carries on.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from torch_bench.results.schema import Result, Status, failed
from torch_bench.suites.base import CaseContext, CaseSpec

STDERR_TAIL_LINES = 6


@dataclass(frozen=True)
class IsolationPolicy:
    timeout_s: float = 900.0
    memory_limit_mb: float | None = None  # address space allowed above the child's start


def failed_results(case: CaseSpec, status: str, message: str) -> list[Result]:
    """One result per promised output, all carrying the case's failure."""
    return [
        failed(case.suite, case.name, out.metric, status, message, params=case.params,
               group=out.group)
        for out in case.outputs
    ]


def run_isolated(
    case: CaseSpec, ctx: CaseContext, isolation: IsolationPolicy, suite_ref: str | None = None
) -> list[Result]:
    """Run `case` in a child; `suite_ref` is how the child finds the suite (default: its name)."""
    with tempfile.TemporaryDirectory(prefix="torch-bench-case-") as tmp:
        request = Path(tmp) / "request.json"
        output = Path(tmp) / "results.json"
        request.write_text(json.dumps({
            "suite_ref": suite_ref or case.suite,
            "case": case.to_dict(),
            "device": ctx.device,
            "threads": ctx.threads,
            "policy": asdict(ctx.policy),
            "memory_limit_mb": isolation.memory_limit_mb,
        }))
        command = [sys.executable, "-m", "torch_bench.measure.worker", str(request), str(output)]
        proc = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            errors="replace", start_new_session=True,
        )
        try:
            _, stderr = proc.communicate(timeout=isolation.timeout_s)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            return failed_results(
                case, Status.TIMEOUT.value, f"no result within {isolation.timeout_s:g} s"
            )
        if output.exists():
            return [Result.from_dict(r) for r in json.loads(output.read_text())]
        return failed_results(case, *_diagnose_exit(proc.returncode, stderr))


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.communicate()


def _diagnose_exit(returncode: int, stderr: str) -> tuple[str, str]:
    tail = " | ".join(line.strip() for line in stderr.strip().splitlines()[-STDERR_TAIL_LINES:])
    if returncode < 0:
        name = signal.Signals(-returncode).name
        if name == "SIGKILL":
            return (Status.OOM.value,
                    f"killed by SIGKILL, most likely the kernel's out-of-memory killer. {tail}")
        return Status.CRASH.value, f"the case's process died of {name}. {tail}".strip()
    return Status.CRASH.value, f"the case's process exited with status {returncode} " \
                               f"without results. {tail}".strip()
