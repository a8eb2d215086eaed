"""Run one case in a fresh child process, with a timeout and an optional memory cap.

Whatever happens to the child (an exception, running out of memory, a segfault or abort, a
hang, invalid numbers) comes back as results with a status and a message; the parent carries
on. The child starts without the tokens of the parent's environment, its output goes to a
file (a descendant that escapes cannot hold a pipe open), and every text it reports is
scrubbed of secrets before it is stored or printed. The child is a fresh interpreter
(`case_start="spawn"`) or a fork of a server that imported torch and the suite once
(`"fork"`, see `forkserver`); a server that fails falls back to a fresh interpreter.
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

from torch_bench.measure import forkserver
from torch_bench.measure.case_folders import make_case_folder
from torch_bench.measure.processes import read_tail, stop_process_tree
from torch_bench.measure.sanity import with_invalid_values_as_errors
from torch_bench.redact import scrub_secrets, token_free_environment
from torch_bench.results.schema import Result, Status, failed
from torch_bench.suites.base import CaseContext, CaseSpec

STDERR_TAIL_LINES = 6
CASE_STARTS = ("spawn", "fork")


@dataclass(frozen=True)
class IsolationPolicy:
    timeout_s: float = 900.0
    memory_limit_mb: float | None = None  # address space allowed above the child's start
    # variables holding secrets besides the usual token names (e.g. from --token-env)
    secret_env: tuple[str, ...] = ()
    case_start: str = "spawn"  # a fresh interpreter per case, or "fork" from a fork server

    def __post_init__(self) -> None:
        if not (math.isfinite(self.timeout_s) and self.timeout_s > 0):
            raise ValueError(f"timeout_s must be a positive number of seconds, "
                             f"got {self.timeout_s!r}")
        limit = self.memory_limit_mb
        if limit is not None and not (math.isfinite(limit) and limit > 0):
            raise ValueError(f"memory_limit_mb must be a positive number, got {limit!r}")
        if self.case_start not in CASE_STARTS:
            raise ValueError(f"case_start must be one of {', '.join(CASE_STARTS)}, "
                             f"got {self.case_start!r}")


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
    if isolation.case_start == "fork" and hasattr(os, "fork"):
        try:
            returncode = _run_forked(request, output, log, isolation, suite_ref or case.suite)
            return _outcome(case, output, log, isolation, returncode)
        except forkserver.ForkServerError:
            pass  # no server: a fresh interpreter, which diagnoses what failed
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
    return _outcome(case, output, log, isolation, proc.returncode)


def _outcome(case: CaseSpec, output: Path, log: Path, isolation: IsolationPolicy,
             returncode: int | None) -> list[Result]:
    if returncode is None:
        return failed_results(
            case, Status.TIMEOUT.value, f"no result within {isolation.timeout_s:g} s"
        )
    if output.exists():
        return [Result.from_dict(r) for r in json.loads(output.read_text())]
    return failed_results(case, *_diagnose_exit(returncode, read_tail(log)))


def _run_forked(request: Path, output: Path, log: Path, isolation: IsolationPolicy,
                suite_ref: str) -> int | None:
    """The case in a process forked from the suite's fork server: its exit status, or None
    after a timeout; ForkServerError when the server failed before the case ran."""
    environ = token_free_environment(os.environ, isolation.secret_env)
    try:
        return forkserver.server_for(suite_ref, environ).run(
            str(request), str(output), str(log), isolation.timeout_s)
    except forkserver.ForkServerError:
        forkserver.drop(suite_ref, environ)
        raise
    except BaseException:  # an interrupt: the case was stopped; the server is not reusable
        forkserver.drop(suite_ref, environ)
        raise


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
