"""Worktrees this tool adds to a user's repository, and the removal of those a killed
process left there.

Bisection, and the Action's A/B, confirmation and explain stages, check commits out into
worktrees of the user's repository and remove them when done, failure or interrupt included.
A process killed with SIGKILL cannot: its worktrees stay in `git worktree list`, each with a
whole checkout. So every worktree is registered before git adds it, as a file in the
repository's git folder (`torch-bench-worktrees/`) named after its owner process (pid and
start time: a pid alone can be reused) and holding the worktree's path; the file goes when
the worktree is removed. Whoever adds a worktree to that repository next first removes, with
git, every registered worktree whose owner is gone. A worktree the user made is never
registered, so never touched; nor is one of a live process.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path

import psutil

from torch_bench.analyze.git import remove_worktree
from torch_bench.measure.case_folders import is_running, owner_tag

REGISTRY = "torch-bench-worktrees"
STAGED = ".new"  # a registration being written: never read, removed with its owner
_ENTRY = re.compile(r"(\d+)\.(\d+)-[0-9a-f]{16}(?:" + re.escape(STAGED) + ")?")


def entry_name(owner: str, where: Path) -> str:
    """The registration's file name: the owner's tag, then a digest of the path (so one
    owner can register several)."""
    return f"{owner}-{hashlib.sha256(os.fsencode(where)).hexdigest()[:16]}"


def owner_of(name: str) -> tuple[int, int] | None:
    """The (pid, start time) a registration's file name (or one being written) records;
    None for any other name."""
    match = _ENTRY.fullmatch(name)
    return (int(match.group(1)), int(match.group(2))) if match else None


def registry(repo: str | Path) -> Path | None:
    """The registrations' folder in `repo`'s common git folder (shared by its worktrees);
    None when `repo` is not a git repository."""
    done = subprocess.run(["git", "-C", str(repo), "rev-parse", "--git-common-dir"],
                          capture_output=True, text=True, check=False)
    found = done.stdout.strip()
    return Path(repo) / found / REGISTRY if done.returncode == 0 and found else None


def _entry(repo: str | Path, where: Path) -> Path | None:
    folder = registry(repo)
    if folder is None:
        return None
    me = psutil.Process()
    return folder / entry_name(owner_tag(me.pid, me.create_time()), where)


def add(repo: str | Path, where: Path, commit: str) -> str | None:
    """Register `where`, then check `commit` out there (detached) as a worktree of `repo`.
    None when done; else git's last line, with nothing left behind."""
    remove_worktree(repo, where)  # a leftover of an earlier attempt at the same place
    entry = _entry(repo, where)
    if entry is not None:
        entry.parent.mkdir(exist_ok=True)
        staged = entry.with_name(entry.name + STAGED)
        staged.write_bytes(os.fsencode(where))
        os.replace(staged, entry)
    done = subprocess.run(["git", "-C", str(repo), "worktree", "add", "--detach", str(where),
                           commit], capture_output=True, text=True, check=False)
    if done.returncode == 0:
        return None
    remove(repo, where)
    return (done.stderr.strip().splitlines() or ["git worktree add failed"])[-1]


def remove(repo: str | Path, where: Path) -> None:
    """Remove the worktree at `where` (and what a stopped `git worktree add` left of it),
    then its registration."""
    remove_worktree(repo, where)
    shutil.rmtree(where, ignore_errors=True)
    entry = _entry(repo, where)
    if entry is not None:
        entry.unlink(missing_ok=True)


def sweep_stale(repo: str | Path) -> list[Path]:
    """Remove the registered worktrees of `repo` whose owner process is gone, and their
    registrations; return their paths. Only git removes them: a path that is no longer a
    worktree of `repo` is left as it is."""
    folder = registry(repo)
    removed = []
    for entry in sorted(folder.iterdir()) if folder is not None and folder.is_dir() else ():
        owner = owner_of(entry.name)
        if owner is None or is_running(*owner):
            continue
        if entry.name.endswith(STAGED):  # its worktree was never added
            entry.unlink(missing_ok=True)
            continue
        try:
            where = Path(os.fsdecode(entry.read_bytes()))
        except OSError:
            continue
        remove_worktree(repo, where)
        entry.unlink(missing_ok=True)
        removed.append(where)
    return removed
