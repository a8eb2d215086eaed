"""The few git questions a baseline needs, asked of a local checkout; and the removal of the
worktrees A/B rounds and bisection check commits out into."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path


def _git(repo: str, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True,
                              timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def merge_base(repo: str, head: str, base_refs: Sequence[str]) -> str | None:
    """The merge-base of `head` with the first of `base_refs` git knows (e.g. origin/main,
    then main); None when there is none."""
    for ref in base_refs:
        found = _git(repo, "merge-base", head, ref)
        if found:
            return found
    return None


def ancestors(repo: str, commit: str, limit: int = 1000) -> list[str]:
    """`commit` and its ancestors, nearest first (first-parent order), at most `limit`."""
    found = _git(repo, "rev-list", "--first-parent", f"--max-count={limit}", commit)
    return found.split() if found else []


def remove_worktree(repo: str | Path, where: Path) -> None:
    """Remove the worktree at `where` and its registration in `repo`, if there is one.
    --force twice: a worktree whose `git worktree add` was stopped midway (a cancelled job,
    a bisection stopped by a signal) is still locked ("initializing"), and git removes a
    locked worktree only when told so twice (`prune` leaves it registered too)."""
    subprocess.run(["git", "-C", str(repo), "worktree", "remove", "--force", "--force",
                    str(where)], capture_output=True, check=False)
