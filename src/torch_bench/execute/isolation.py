"""Run one case in a fresh child process, with a timeout and an optional memory cap.

Whatever happens to the child (an exception, running out of memory, a segfault or abort, a
hang, invalid numbers) comes back as results with a status and a message; the parent carries
on. The child is a fresh interpreter (`case_start="spawn"`) or a fork of a server that
imported torch and the suite once (`"fork"`, see `forkserver`; a server that fails falls
back to a fresh interpreter). It starts without the tokens of the parent's environment; a
fresh interpreter's tree is tied to the run (processes.py) and stopped whole when the case
ends (a forked case's, by the server); its output is read through a
bounded reader; every text it reports is scrubbed of secrets, cut to a bounded length and
checked against the run document's schema before it is stored or printed, so a bad result
is that case's error and never the run's.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from torch_bench.execute import forkserver
from torch_bench.measure.case import CaseContext, CaseSpec
from torch_bench.measure.case_folders import make_case_folder
from torch_bench.measure.case_results import failed_results
from torch_bench.measure.processes import (
    CASE_MARKER,
    PARENT_VARIABLE,
    BoundedCapture,
    become_subreaper,
    children_now,
    stop_process_tree,
)
from torch_bench.measure.sanity import with_invalid_values_as_errors
from torch_bench.redact import scrub_secrets, token_free_environment
from torch_bench.results.schema import Result, Status, new_run
from torch_bench.results.validate import problems

STDERR_TAIL_LINES = 6
CASE_STARTS = ("spawn", "fork")
LOG_TAIL_BYTES = 16_384
MAX_ERROR_CHARS = 4_000
MAX_RESULTS_BYTES = 64 * 1024 * 1024
POLL_S = 0.5
RESULT_GRACE_S = 2.0  # a worker that wrote its results and does not exit: stopped after this


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


def storable_results(case: CaseSpec, results: list[Result]) -> list[Result]:
    """`results`, or when one of them could not be stored, the case's error: the run keeps
    every other case."""
    found = documented_problems(results)
    if found:
        return failed_results(case, Status.ERROR.value,
                              f"the case returned a result that cannot be stored: "
                              f"{_short(found[0])}")
    return results


def run_isolated(
    case: CaseSpec, ctx: CaseContext, isolation: IsolationPolicy, suite_ref: str | None = None
) -> list[Result]:
    """Run `case` in a child; `suite_ref` is how the child finds the suite (default: its name)."""
    folder = make_case_folder()
    try:
        results = _run_in(folder, case, ctx, isolation, suite_ref)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return storable_results(case, with_invalid_values_as_errors(
        scrubbed(results, isolation.secret_env)))


def scrubbed(results: list[Result], secret_env: tuple[str, ...] = ()) -> list[Result]:
    """`results` with secrets masked in every text a case chose: names, parameters, error
    texts and `extra` (a hostile case can read its parent's environment)."""
    def clean(value):
        if isinstance(value, str):
            return scrub_secrets(value, extra_names=secret_env)
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [clean(v) for v in value]
        return value

    return [replace(r, name=clean(r.name), group=clean(r.group), params=clean(dict(r.params)),
                    error=clean(r.error), extra=clean(dict(r.extra))) for r in results]


def _run_in(folder: Path, case: CaseSpec, ctx: CaseContext, isolation: IsolationPolicy,
            suite_ref: str | None) -> list[Result]:
    request, output = folder / "request.json", folder / "results.json"
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
            return _forked_outcome(case, request, output, folder / "case.log", isolation,
                                   suite_ref or case.suite)
        except forkserver.ForkServerError:
            pass  # no server: a fresh interpreter, which diagnoses what failed
    command = [sys.executable, "-m", "torch_bench.execute.case_entry", str(request), str(output)]
    env = {**token_free_environment(os.environ, isolation.secret_env),
           CASE_MARKER: str(folder), PARENT_VARIABLE: str(os.getpid())}
    become_subreaper()
    known = children_now()
    oom_before = oom_kills()
    proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True, env=env)
    printed = BoundedCapture(proc.stdout)
    try:
        finished = _wait_for(proc, output, isolation.timeout_s)
    finally:  # also on a timeout or an interrupt: nothing the case started outlives it
        stop_process_tree(proc, folder, known)
        text = printed.text()  # the tree is gone: the pipe is at its end
    if not finished:
        return failed_results(
            case, Status.TIMEOUT.value, f"no result within {isolation.timeout_s:g} s"
        )
    if output.exists():
        return read_results(case, output)
    return failed_results(case, *_diagnose_exit(proc.returncode, text,
                                                oom_kills() > oom_before))


def case_torch_facts(suite_ref: str, isolation: IsolationPolicy) -> dict:
    """torch's version, default threads and devices as the cases will see them. With forked
    cases they are read from the fork server the first case will come from, so that this
    process does not import torch (2-3 s of every run, most of a small A/B round); else,
    and if that server fails, here."""
    if isolation.case_start == "fork" and hasattr(os, "fork"):
        environ = token_free_environment(os.environ, isolation.secret_env)
        folder = make_case_folder()
        try:
            return forkserver.server_for(suite_ref, environ).torch_facts(
                str(folder / "torch.json"), str(folder / "torch.log"))
        except forkserver.ForkServerError:
            forkserver.drop(suite_ref, environ)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    from torch_bench.measure.environment import torch_environment

    return torch_environment()


def _forked_outcome(case: CaseSpec, request: Path, output: Path, log: Path,
                    isolation: IsolationPolicy, suite_ref: str) -> list[Result]:
    """The case in a process forked from the suite's fork server (its output in `log`);
    ForkServerError when the server failed before the case ran."""
    environ = token_free_environment(os.environ, isolation.secret_env)
    oom_before = oom_kills()
    try:
        returncode = forkserver.server_for(suite_ref, environ).run(
            str(request), str(output), str(log), isolation.timeout_s)
    except BaseException:  # the server failed, or an interrupt: it is not reusable
        forkserver.drop(suite_ref, environ)
        raise
    if returncode is None:
        return failed_results(
            case, Status.TIMEOUT.value, f"no result within {isolation.timeout_s:g} s"
        )
    if output.exists():
        return read_results(case, output)
    return failed_results(case, *_diagnose_exit(returncode, _log_tail(log),
                                                oom_kills() > oom_before))


def _log_tail(path: Path) -> str:
    """The end of a forked case's log as text (undecodable bytes replaced)."""
    try:
        with open(path, "rb") as handle:
            handle.seek(max(0, handle.seek(0, os.SEEK_END) - LOG_TAIL_BYTES))
            return handle.read().decode("utf-8", errors="replace")
    except FileNotFoundError:
        return ""


def _wait_for(proc: subprocess.Popen, output: Path, timeout_s: float) -> bool:
    """Wait until the worker exits, or has written its results (a thread it left running
    may keep it alive: it gets a short grace, then is stopped); False on the timeout."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            proc.wait(timeout=max(0.0, min(POLL_S, deadline - time.monotonic())))
            return True
        except subprocess.TimeoutExpired:
            pass
        if output.exists():
            try:
                proc.wait(timeout=RESULT_GRACE_S)
            except subprocess.TimeoutExpired:
                pass
            return True
        if time.monotonic() >= deadline:
            return False


def read_results(case: CaseSpec, output: Path) -> list[Result]:
    """The case's results; anything wrong with them (too large, not JSON, an invalid field,
    none at all) is this case's error, never the run's."""
    try:
        if output.stat().st_size > MAX_RESULTS_BYTES:
            raise ValueError(f"{output.stat().st_size} bytes of results (at most "
                             f"{MAX_RESULTS_BYTES})")
        data = json.loads(output.read_bytes())
        if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
            raise ValueError("not a list of results")
        results = [_bounded(Result.from_dict(r)) for r in data]
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as exc:
        return failed_results(case, Status.ERROR.value,
                              f"the case returned invalid results: {_short(str(exc))}")
    if not results:
        return failed_results(case, Status.ERROR.value, "the case returned no results")
    return results


def _bounded(result: Result) -> Result:
    """`result` with its error text cut to MAX_ERROR_CHARS (a 20 MB message would stall
    every table and terminal it reaches)."""
    if isinstance(result.error, str) and len(result.error) > MAX_ERROR_CHARS:
        cut = len(result.error) - MAX_ERROR_CHARS
        return replace(result, error=result.error[:MAX_ERROR_CHARS // 2]
                       + f" [... {cut} characters left out ...] "
                       + result.error[-MAX_ERROR_CHARS // 2:])
    return result


def documented_problems(results: list[Result]) -> list[str]:
    """What would stop these results from being stored in a run document."""
    probe = new_run(results, created_at="2026-01-01T00:00:00Z")
    return problems(probe.to_dict())


def oom_kills() -> int:
    """How many processes the kernel's out-of-memory killer has killed, system-wide and in
    this cgroup (0 when neither can be read): evidence for labelling a SIGKILL `oom`."""
    total = 0
    for path, key in (("/proc/vmstat", "oom_kill"),
                      ("/sys/fs/cgroup/memory.events", "oom_kill")):
        try:
            for line in Path(path).read_text().splitlines():
                name, _, value = line.partition(" ")
                if name == key and value.strip().isdigit():
                    total += int(value)
        except OSError:
            continue
    return total


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


# A traceback's frames in torch-bench's own code and its ^^^^ markers say nothing about the
# case: the case's own frames and the exception are what a user reads.
_OWN_FRAME = re.compile(r'\s*File ".*[/\\]torch_bench[/\\]')
_MARKERS = re.compile(r"\s*[~^]+\s*")


def readable_tail(printed: str) -> list[str]:
    """The last lines the case printed, without torch-bench's own traceback frames."""
    kept, frame = [], False
    for line in printed.strip().splitlines():
        if frame:  # the source line of one of our frames
            frame = False
            continue
        frame = bool(_OWN_FRAME.match(line))
        if frame or _MARKERS.fullmatch(line) or line == "Traceback (most recent call last):":
            continue
        kept.append(line.strip())
    return kept[-STDERR_TAIL_LINES:]


def _diagnose_exit(returncode: int, printed: str, oom: bool = False) -> tuple[str, str]:
    tail = " | ".join(readable_tail(printed))
    tail = _short(tail, 2000)
    if returncode < 0:
        name = signal.Signals(-returncode).name
        if name == "SIGKILL" and oom:
            return (Status.OOM.value,
                    f"killed by SIGKILL while the kernel's out-of-memory killer acted. {tail}")
        if name == "SIGKILL":
            return (Status.CRASH.value,
                    f"killed by SIGKILL (no sign of the out-of-memory killer). {tail}".strip())
        return Status.CRASH.value, f"the case's process died of {name}. {tail}".strip()
    return Status.CRASH.value, f"the case's process exited with status {returncode} " \
                               f"without results. {tail}".strip()
