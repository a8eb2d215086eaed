"""A worker process tied to this one the way a spawned case is (see processes.py), for the
workers that are not cases (explain's profiling worker).

The worker leads a session of its own, carries the marker of its scratch folder (made by
`case_folders.make_case_folder`) and is told which process it must die with; it calls
`die_with_starter` first thing. It is stopped whole (descendants, escaped orphans and marked
processes included) when it ends, times out, or this process is interrupted; if this process
is killed outright, the kernel kills the worker, and the next run's sweep of case folders
(`case_folders.sweep_stale_case_folders`) kills what it had started and removes its folder.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from torch_bench.measure.processes import (
    CASE_MARKER,
    PARENT_VARIABLE,
    BoundedCapture,
    become_subreaper,
    children_now,
    die_with_parent,
    stop_process_tree,
)


def run_tied(command: Sequence[str], folder: Path, *, cwd: Path, env: Mapping[str, str],
             timeout_s: float) -> tuple[int | None, str]:
    """Run `command` until it exits or `timeout_s` passes: its exit status (None on the
    timeout) and what it printed on stderr (its start and end when long)."""
    become_subreaper()
    known = children_now()
    proc = subprocess.Popen(
        list(command), cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, start_new_session=True,
        env={**env, CASE_MARKER: str(folder), PARENT_VARIABLE: str(os.getpid())})
    printed = BoundedCapture(proc.stderr)
    try:
        try:
            returncode: int | None = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            returncode = None
    finally:  # also on an interrupt: nothing the worker started outlives it
        stop_process_tree(proc, folder, known)
        text = printed.text()
    return returncode, text


def die_with_starter() -> None:
    """In a worker started by `run_tied`: be killed when the process that started it dies."""
    parent = os.environ.get(PARENT_VARIABLE, "")
    if parent.isdigit():
        die_with_parent(int(parent))
