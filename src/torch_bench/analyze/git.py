"""The few git questions a baseline needs, asked of a local checkout."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence


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
