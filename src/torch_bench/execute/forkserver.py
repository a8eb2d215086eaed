"""Case processes forked from a server that has imported torch and the suite once.

A fresh worker costs an interpreter and `import torch`, about 2 s, which is most of a small
case and most of an A/B round. With `--case-start fork` (POSIX), a server process imports
torch, the worker and the suite, then forks one process per case: each case still runs in a
process of its own, in a session of its own, under the timeout and memory cap of
`isolation`, with its output going to its own log; only the imports are shared. The server
runs no torch work (a process that has run OpenMP work cannot safely fork), so the suite
module must not compute at import time, as `Suite` already asks of `plan`.

One line each way over the server's stdin and stdout:
  parent -> server: {"request": PATH, "output": PATH, "log": PATH}  (JSON), or
                    {"torch_facts": PATH, "log": PATH}: torch's version, threads and devices
                    as the cases see them, written to PATH, so that the parent need not
                    import torch itself
  server -> parent: "<pid>" once the case process runs, then "<status>" when it ended (its
                    exit code, or -N for signal N, as `subprocess` reports a return code).
The server ends when its stdin closes (the parent ended, whatever the way), also while a case
runs: it then kills the case's tree and every process it or the case started.

Every process of a server carries the marker of a case folder the run owns
(`processes.CASE_MARKER`): exec'd or forked, in a session of its own or not, what a case
leaves is killed when the case ends, and what a killed run leaves (the server, a case, their
escaped children) is found by the next run's sweep of stale case folders.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import shutil
import subprocess
import sys
import time
import traceback
from collections.abc import Mapping
from pathlib import Path

from torch_bench.measure.case_folders import make_case_folder
from torch_bench.measure.processes import (
    CASE_MARKER,
    PARENT_VARIABLE,
    die_with_parent,
    kill_all,
    kill_leftovers_of,
    marked_processes,
    stop_pid_tree,
)

START_TIMEOUT_S = 120.0  # for the server's imports and a fork
PARENT_CHECK_S = 0.5  # how often a server waiting on a case looks for its parent


class ForkServerError(RuntimeError):
    """The server is gone or did not answer; the caller starts the case afresh instead."""


class ForkServer:
    def __init__(self, suite_ref: str, environ: Mapping[str, str]) -> None:
        self.folder = make_case_folder()  # named after this run: the marker of the server's tree
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "torch_bench.execute.forkserver", suite_ref],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            start_new_session=True, bufsize=0,
            env={**environ, CASE_MARKER: str(self.folder), PARENT_VARIABLE: str(os.getpid())})
        self._pending = b""

    def run(self, request: str, output: str, log: str, timeout_s: float) -> int | None:
        """Run one case; its exit status, or None when it outlived `timeout_s` (it is
        stopped, with every process it started)."""
        return self._fork({"request": request, "output": output, "log": log}, timeout_s)

    def torch_facts(self, output: str, log: str, timeout_s: float = START_TIMEOUT_S) -> dict:
        """`environment.torch_environment()` as a forked case process sees it, read in a
        child of its own: the server itself must not touch CUDA before it forks cases."""
        status = self._fork({"torch_facts": output, "log": log}, timeout_s)
        try:
            facts = json.loads(Path(output).read_text()) if status == 0 else None
        except (OSError, ValueError):
            facts = None
        if not isinstance(facts, dict):
            raise ForkServerError(f"fork server: reading torch's facts ended with {status}")
        return facts

    def _fork(self, job: dict, timeout_s: float) -> int | None:
        try:
            self.proc.stdin.write((json.dumps(job) + "\n").encode())
            self.proc.stdin.flush()
        except OSError as exc:
            raise ForkServerError(f"fork server gone: {exc}") from None
        try:
            pid = int(self._line(time.monotonic() + START_TIMEOUT_S))
        except (TimeoutError, ValueError):
            self.close()
            raise ForkServerError("fork server did not start the case") from None
        finished = False
        try:
            status = self._line(time.monotonic() + timeout_s, pid)
            finished = True
        except TimeoutError:
            status = None
        finally:
            stop_pid_tree(pid)  # also on an interrupt: nothing the case started outlives it
            self._kill_leftovers()  # nor what escaped its tree (a new session, an orphan)
            if not finished:
                self._forget(pid)
        return None if status is None else int(status)

    def _kill_leftovers(self) -> None:
        """Every process of the server's tree but the server: between cases, none is left."""
        kill_all(pid for pid in marked_processes(self.folder) if pid != self.proc.pid)

    def _forget(self, pid: int) -> None:
        """After a stopped case, read the status the server reports for it."""
        try:
            self._line(time.monotonic() + 30.0)
        except (TimeoutError, ForkServerError):
            self.close()

    def _line(self, deadline: float, pid: int | None = None) -> str:
        while b"\n" not in self._pending:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(pid)
            ready, _, _ = select.select([self.proc.stdout], [], [], min(left, 1.0))
            if ready:
                chunk = os.read(self.proc.stdout.fileno(), 4096)
                if not chunk:
                    raise ForkServerError("fork server ended")
                self._pending += chunk
        line, self._pending = self._pending.split(b"\n", 1)
        return line.decode()

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        self._kill_leftovers()
        shutil.rmtree(self.folder, ignore_errors=True)


_SERVERS: dict[tuple, ForkServer] = {}  # one per suite and environment, for this process


def server_for(suite_ref: str, environ: Mapping[str, str]) -> ForkServer:
    """The running server for `suite_ref` in `environ`, started on first use and closed when
    this process exits."""
    key = (suite_ref, tuple(sorted(environ.items())))
    server = _SERVERS.get(key)
    if server is None or not server.alive:
        server = _SERVERS[key] = ForkServer(suite_ref, environ)
    return server


def drop(suite_ref: str, environ: Mapping[str, str]) -> None:
    server = _SERVERS.pop((suite_ref, tuple(sorted(environ.items()))), None)
    if server is not None:
        server.close()


@atexit.register
def close_all() -> None:
    while _SERVERS:
        _SERVERS.popitem()[1].close()


def _run_child(job: dict, server: int) -> None:  # pragma: no cover - in the fork
    code = 1
    try:
        os.setsid()
        die_with_parent(server)  # the case ends with its server, which ends with the run
        log = os.open(job["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        if "torch_facts" in job:
            from torch_bench.measure.environment import torch_environment

            Path(job["torch_facts"]).write_text(json.dumps(torch_environment()))
            code = 0
        else:
            from torch_bench.execute import worker

            code = worker.main([job["request"], job["output"]])
    except BaseException:  # the case's outcome is its exit status and its log
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


class _Lines:
    """Lines from a file descriptor, read as they arrive."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.pending = b""
        self.closed = False

    def wait(self, timeout_s: float | None, also: tuple[int, ...] = ()) -> None:
        """Read what arrives, returning after `timeout_s` (None: no limit) or as soon as a
        line is whole, the input closed or one of the descriptors `also` is readable."""
        listening = () if self.closed or b"\n" in self.pending else (self.fd,)
        if not listening and not also:
            return
        ready, _, _ = select.select([*listening, *also], [], [], timeout_s)
        if self.fd in ready:
            chunk = os.read(self.fd, 65_536)
            self.pending += chunk
            self.closed = not chunk

    def next(self) -> bytes | None:
        """The next whole line, or None when there is none yet."""
        if b"\n" not in self.pending:
            return None
        line, self.pending = self.pending.split(b"\n", 1)
        return line


def _parent_gone(lines: _Lines, parent: int) -> bool:
    return lines.closed or os.getppid() != parent


def _end_everything() -> None:
    """The run is gone: every process of this server's tree ends, then the server."""
    marker = os.environ.get(CASE_MARKER)
    if marker:
        kill_leftovers_of(marker)
    os._exit(0)


def _exit_watch(pid: int) -> int | None:
    """A descriptor that turns readable when `pid` exits (Linux's pidfd), if there is one."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _wait_for_case(pid: int, lines: _Lines, parent: int) -> int:
    """The case's exit status; while it runs, the server watches its parent (the input
    closing), so that a run killed mid-case takes the case and all it started along."""
    watch = _exit_watch(pid)
    try:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return os.waitstatus_to_exitcode(status)
            if _parent_gone(lines, parent):
                stop_pid_tree(pid)
                _end_everything()
            # without a pidfd, a short poll: a case's end is seen within 20 ms
            lines.wait(PARENT_CHECK_S if watch is not None else 0.02,
                       also=() if watch is None else (watch,))
    finally:
        if watch is not None:
            os.close(watch)


def serve(suite_ref: str) -> int:  # pragma: no cover - runs in the server process
    # Not the kernel's parent-death signal: it follows the thread that started the server.
    # The input closing says the run is gone, however it ended; it is read between cases and
    # while one runs.
    parent = int(os.environ.get(PARENT_VARIABLE) or os.getppid())
    import torch  # noqa: F401  (the import every case shares)

    from torch_bench.execute import worker  # noqa: F401
    from torch_bench.suites import get_suite

    get_suite(suite_ref)
    out = sys.stdout.buffer
    lines = _Lines(sys.stdin.fileno())
    server = os.getpid()
    while True:
        line = lines.next()
        if line is None:
            if _parent_gone(lines, parent):
                _end_everything()
            lines.wait(None)
            continue
        pid = os.fork()
        if pid == 0:
            _run_child(json.loads(line), server)
        out.write(f"{pid}\n".encode())
        out.flush()
        status = _wait_for_case(pid, lines, parent)
        out.write(f"{status}\n".encode())
        out.flush()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(serve(sys.argv[1]))
