"""Scratch folders for git work, and the sweeping of those a killed process left behind.

Each scratch folder records its owner (process id and that process's start time, so a reused
process id is not mistaken for the owner). A process killed with SIGKILL cannot clean up, and
a store's scratch repository can hold hundreds of MB; the next store or publish removes the
folders whose owner is gone. Folders of live processes are never touched.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

OWNER_FILE = ".torch-bench-owner"
# A folder without an owner file yet may be one being created right now: leave it this long.
UNCLAIMED_GRACE_SECONDS = 3600.0


def process_start(pid: int) -> str | None:
    """An identifier of when process `pid` started (field 22 of /proc/<pid>/stat), or None
    when there is no such process or no /proc to ask."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[-1].split()[19]


def owner_alive(pid: int, started: str | None) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's live process
    current = process_start(pid)
    return started is None or current is None or current == started


def is_stale(folder: Path, now: float) -> bool:
    try:
        pid_text, _, started = (folder / OWNER_FILE).read_text().partition(" ")
        pid = int(pid_text)
    except FileNotFoundError:
        try:
            return now - folder.stat().st_mtime > UNCLAIMED_GRACE_SECONDS
        except OSError:
            return False
    except (OSError, ValueError):
        return False
    return not owner_alive(pid, started.strip() or None)


def sweep_stale(prefix: str, parent: Path | None = None) -> list[Path]:
    """Remove scratch folders named `prefix*` whose owner process is gone; the removed."""
    parent = parent or Path(tempfile.gettempdir())
    removed = []
    now = time.time()
    for folder in parent.glob(f"{prefix}*"):
        if folder.is_dir() and not folder.is_symlink() and is_stale(folder, now):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


@contextlib.contextmanager
def scratch_folder(prefix: str) -> Iterator[Path]:
    """A temporary folder owned by this process, removed on exit; stale folders of the same
    kind are swept first."""
    sweep_stale(prefix)
    with tempfile.TemporaryDirectory(prefix=prefix) as name:
        folder = Path(name)
        (folder / OWNER_FILE).write_text(f"{os.getpid()} {process_start(os.getpid()) or ''}")
        yield folder
