"""Process trees that cannot outlive their run, and bounded reading of what they print.

A case's tree is tied to the run four ways, because each alone has a gap:
- its worker leads a process group of its own, killed whole when the case ends;
- the run is a child subreaper (Linux `PR_SET_CHILD_SUBREAPER`): a descendant orphaned by the
  worker's exit, even one that started a new session, becomes the run's child instead of
  init's, and is killed with the case;
- the worker dies with the run (`PR_SET_PDEATHSIG`, set by `case_entry` before the case's
  code is imported), so a run killed with SIGKILL does not leave its worker measuring on;
- every process of the tree inherits a marker variable naming its case folder: what a killed
  run left behind is found by that marker and killed by the next run, before it removes the
  folder.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterable
from pathlib import Path

import psutil

CASE_MARKER = "TORCH_BENCH_CASE_FOLDER"  # environment variable naming a process's case folder
PARENT_VARIABLE = "TORCH_BENCH_RUN_PID"  # the run a worker must die with
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


def _prctl(option: int, value: int) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def become_subreaper() -> bool:
    """Make this process adopt the orphans among its descendants (Linux; False elsewhere)."""
    return _prctl(PR_SET_CHILD_SUBREAPER, 1)


def die_with_parent(parent_pid: int | None) -> None:
    """Ask the kernel for SIGKILL when the parent dies; exit now if it already has (the
    parent may die between our fork and this call)."""
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if parent_pid is not None and os.getppid() != parent_pid:
        os._exit(137)


def children_now() -> set[int]:
    """Process ids of this process's current children."""
    try:
        return {child.pid for child in psutil.Process().children()}
    except psutil.Error:
        return set()


def marked_processes(folder: str | os.PathLike) -> list[int]:
    """Process ids (of this user) whose environment carries the marker of `folder`."""
    needle = f"{CASE_MARKER}={os.fspath(folder)}".encode() + b"\0"
    found = []
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else ():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if (b"\0" + environ + b"\0").find(b"\0" + needle) >= 0:
            found.append(int(entry.name))
    return found


def kill_all(pids: Iterable[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def stop_process_tree(proc: subprocess.Popen, folder: str | os.PathLike | None = None,
                      known_children: set[int] | frozenset[int] = frozenset()) -> None:
    """Kill `proc`, its process group, every descendant (one that left the group too), the
    orphans of the tree this (subreaper) process adopted (its children other than
    `known_children`), and every process carrying the marker of `folder`; then reap `proc`
    and the adopted orphans. Safe to call on a process that already exited."""
    try:
        descendants = psutil.Process(proc.pid).children(recursive=True) \
            if proc.poll() is None else []
    except psutil.NoSuchProcess:
        descendants = []
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    kill_all(child.pid for child in descendants)
    if folder is not None:
        kill_all(marked_processes(folder))
    adopted = [pid for pid in children_now() - set(known_children) - {proc.pid}
               if _orphan_of(pid, folder)]
    kill_all(adopted)
    proc.wait()
    for pid in adopted:
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, 0)


def _orphan_of(pid: int, folder: str | os.PathLike | None) -> bool:
    """Whether our child `pid` is an orphan of the case at `folder`: not in our own session
    (the case ran in a session of its own) and not marked as another case's."""
    try:
        if os.getsid(pid) == os.getsid(0):
            return False
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return False
    marker = f"{CASE_MARKER}=".encode()
    for entry in environ.split(b"\0"):
        if entry.startswith(marker):
            return folder is not None and entry == marker + os.fsencode(os.fspath(folder))
    return True


def kill_leftovers_of(folder: str | os.PathLike) -> int:
    """Kill what a killed run left of a case (found by its folder's marker); how many."""
    pids = marked_processes(folder)
    kill_all(pids)
    return len(pids)


class BoundedCapture:
    """Reads a pipe to its end in a thread, keeping its first and last `keep` bytes and
    counting the rest: a case printing gigabytes costs neither memory nor disk."""

    def __init__(self, pipe, keep: int = 32_768) -> None:
        self.keep = keep
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self._pipe = pipe
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            while chunk := self._pipe.read1(65_536) if hasattr(self._pipe, "read1") \
                    else self._pipe.read(65_536):
                self.total += len(chunk)
                room = self.keep - len(self.head)
                if room > 0:
                    self.head += chunk[:room]
                    chunk = chunk[room:]
                if chunk:
                    self.tail = (self.tail + chunk)[-self.keep:]

    def text(self, timeout: float = 2.0) -> str:
        """What was read (head, a note of what was left out, tail), once the pipe closed or
        `timeout` passed."""
        self._thread.join(timeout)
        with contextlib.suppress(OSError):
            self._pipe.close()
        left_out = self.total - len(self.head) - len(self.tail)
        middle = f"\n[... {left_out} bytes left out ...]\n".encode() if left_out > 0 else b""
        return (bytes(self.head) + middle + bytes(self.tail)).decode("utf-8", errors="replace")


def stop_pid_tree(pid: int) -> None:
    """Kill the process group led by `pid` (a case process in a session of its own) and
    every descendant of `pid`, without reaping it (its parent does). Safe when it ended."""
    try:
        descendants = [child.pid for child in psutil.Process(pid).children(recursive=True)]
    except psutil.NoSuchProcess:
        descendants = []
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    kill_all(descendants)
