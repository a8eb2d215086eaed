"""Run one case in a fresh child process, with a timeout and an optional memory cap.

Whatever happens to the child (an exception, running out of memory, a segfault or abort, a
hang, invalid numbers) comes back as results with a status and a message; the parent carries
on. The child starts without the tokens of the parent's environment, its output goes to a
file (a descendant that escapes cannot hold a pipe open), and every text it reports is
scrubbed of secrets before it is stored or printed.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from torch_bench.measure.case_folders import make_case_folder
from torch_bench.measure.processes import read_tail, stop_process_tree
from torch_bench.measure.sanity import with_invalid_values_as_errors
from torch_bench.redact import scrub_secrets, token_free_environment
from torch_bench.results.schema import Result, Status, failed
from torch_bench.suites.base import CaseContext, CaseSpec

STDERR_TAIL_LINES = 6


@dataclass(frozen=True)
class IsolationPolicy:
    timeout_s: float = 900.0
    memory_limit_mb: float | None = None  # address space allowed above the child's start
    # variables holding secrets besides the usual token names (e.g. from --token-env)
    secret_env: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not (math.isfinite(self.timeout_s) and self.timeout_s > 0):
            raise ValueError(f"timeout_s must be a positive number of seconds, "
                             f"got {self.timeout_s!r}")
        limit = self.memory_limit_mb
        if limit is not None and not (math.isfinite(limit) and limit > 0):
            raise ValueError(f"memory_limit_mb must be a positive number, got {limit!r}")


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
    folder = make_case_folder()
    try:
        results = _run_in(folder, case, ctx, isolation, suite_ref)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return with_invalid_values_as_errors(scrubbed(results, isolation.secret_env))


def scrubbed(results: list[Result], secret_env: tuple[str, ...] = ()) -> list[Result]:
    """`results` with secrets masked in their error texts and in the text of `extra`."""
    def clean(value):
        if isinstance(value, str):
            return scrub_secrets(value, extra_names=secret_env)
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [clean(v) for v in value]
        return value

    return [replace(r, error=clean(r.error), extra=clean(dict(r.extra))) for r in results]


def _run_in(folder: Path, case: CaseSpec, ctx: CaseContext, isolation: IsolationPolicy,
            suite_ref: str | None) -> list[Result]:
    request, output, log = folder / "request.json", folder / "results.json", folder / "case.log"
    request.write_text(json.dumps({
        "suite_ref": suite_ref or case.suite,
        "case": case.to_dict(),
        "device": ctx.device,
        "threads": ctx.threads,
        "policy": asdict(ctx.policy),
        "memory_limit_mb": isolation.memory_limit_mb,
    }))
    command = [sys.executable, "-m", "torch_bench.measure.worker", str(request), str(output)]
    with open(log, "wb") as log_file:
        proc = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=log_file, stderr=subprocess.STDOUT,
            start_new_session=True, env=token_free_environment(os.environ, isolation.secret_env),
        )
    try:
        proc.wait(timeout=isolation.timeout_s)
    except subprocess.TimeoutExpired:
        return failed_results(
            case, Status.TIMEOUT.value, f"no result within {isolation.timeout_s:g} s"
        )
    finally:  # also on a timeout or an interrupt: nothing the case started outlives it
        stop_process_tree(proc)
    if output.exists():
        return [Result.from_dict(r) for r in json.loads(output.read_text())]
    return failed_results(case, *_diagnose_exit(proc.returncode, read_tail(log)))


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
