"""Scratch folders of case processes, named after the process that owns them.

A run killed before it could clean up leaves its folders behind; the next run removes those
whose owner is gone, and kills any process of that case still running (found by the marker
variable naming its folder); a folder of a run still going is never touched.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

import psutil

from torch_bench.measure.processes import kill_leftovers_of

PREFIX = "torch-bench-case-"
OWNED_NAME = re.compile(re.escape(PREFIX) + r"(\d+)\.(\d+)-")


def owner_tag(pid: int, started: float) -> str:
    """How a folder names its owner: the pid and start time (a pid alone can be reused)."""
    return f"{pid}.{int(started)}"


def owner_of(folder_name: str) -> tuple[int, int] | None:
    """The (pid, start time) a folder's name records, or None for a name without an owner."""
    match = OWNED_NAME.match(folder_name)
    return (int(match.group(1)), int(match.group(2))) if match else None


def make_case_folder(root: str | Path | None = None) -> Path:
    """A new scratch folder owned by this process."""
    me = psutil.Process()
    prefix = f"{PREFIX}{owner_tag(me.pid, me.create_time())}-"
    return Path(tempfile.mkdtemp(prefix=prefix, dir=root))


def is_running(pid: int, started: int) -> bool:
    try:
        return int(psutil.Process(pid).create_time()) == started
    except psutil.NoSuchProcess:
        return False
    except psutil.AccessDenied:  # someone else's live process: not ours to judge
        return True


def sweep_stale_case_folders(root: str | Path | None = None) -> list[Path]:
    """Remove the scratch folders whose owner process is gone; return them."""
    removed = []
    for path in Path(root or tempfile.gettempdir()).glob(PREFIX + "*"):
        owner = owner_of(path.name)
        if owner is not None and path.is_dir() and not is_running(*owner):
            kill_leftovers_of(path)  # a case tree whose run was killed: gone with its folder
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed
