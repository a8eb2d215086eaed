"""Choosing what a PR is compared with.

In order of preference (always on the head's environment fingerprint):
1. the base branch's runs at the PR's merge-base, or at its nearest ancestor that has runs;
2. the latest runs of the base branch;
3. an explicit results file (chosen by the caller; see `explicit`).
All runs at the chosen commit are the baseline's runs (R_base). Pure: the caller asks git
for the ancestors (`analyze/git.py`) and the store for the history.

A run whose pre-flight check failed (`Run.trusted` is False) is never a baseline and never
teaches the noise; an explicit results file made only of such runs is refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from torch_bench.errors import UserError
from torch_bench.results.schema import Run


class NoBaseline(UserError):
    """The history holds nothing to compare with (a first run, or a new environment)."""


@dataclass(frozen=True)
class Baseline:
    runs: tuple[Run, ...]
    how: str  # one sentence for the report: how the baseline was chosen

    @property
    def sha(self) -> str | None:
        return self.runs[0].git.get("sha") if self.runs else None


def candidates(history: Sequence[Run], head: Sequence[Run], base_branch: str | None) -> list[Run]:
    """History runs a baseline may come from: same fingerprint as the head, on the base branch
    (any branch when it is unknown), trusted, not the head's own runs; oldest first."""
    if not head:
        return []
    fingerprint = head[0].fingerprint
    own = {run.run_id for run in head}
    return [run for run in history
            if run.fingerprint == fingerprint and run.run_id not in own and run.trusted
            and (base_branch is None or run.git.get("branch") == base_branch)]


def at_nearest_ancestor(ancestors: Sequence[str], runs: Sequence[Run]) -> tuple[int, list[Run]]:
    """(distance, runs) at the first commit of `ancestors` that has runs; (-1, []) if none."""
    by_sha: dict[str, list[Run]] = {}
    for run in runs:
        by_sha.setdefault(run.git.get("sha") or "", []).append(run)
    for distance, sha in enumerate(ancestors):
        if sha in by_sha:
            return distance, by_sha[sha]
    return -1, []


def latest(runs: Sequence[Run]) -> list[Run]:
    """The runs of the most recent commit among `runs` (oldest first)."""
    if not runs:
        return []
    sha = runs[-1].git.get("sha")
    return [run for run in runs if run.git.get("sha") == sha] if sha else [runs[-1]]


def choose_baseline(head: Sequence[Run], history: Sequence[Run], *, base_branch: str | None,
                    ancestors: Sequence[str] | None) -> Baseline | None:
    """The baseline for `head`, or None when the history has nothing comparable."""
    pool = candidates(history, head, base_branch)
    branch = base_branch or "any branch"
    if ancestors:
        distance, runs = at_nearest_ancestor(ancestors, pool)
        if runs:
            where = "the merge-base" if distance == 0 else f"an ancestor {distance} commits " \
                                                           "before the merge-base"
            return Baseline(tuple(runs), f"{len(runs)} run(s) of {branch} at {where}, "
                                         "same environment")
    runs = latest(pool)
    if runs:
        return Baseline(tuple(runs), f"the latest {len(runs)} run(s) of {branch}, "
                                     "same environment (no run at the merge-base)")
    return None


class UntrustedBaseline(ValueError):
    """Every run offered as the baseline failed its pre-flight check."""


def explicit(runs: Sequence[Run], source: str) -> Baseline:
    """The given runs as the baseline, without the untrusted ones; `UntrustedBaseline` when
    no trusted run is left."""
    good = [run for run in runs if run.trusted]
    if runs and not good:
        raise UntrustedBaseline(f"{source}: every run failed its pre-flight check (untrusted) "
                                "and cannot be a baseline")
    how = f"{len(good)} run(s) from {source}"
    if len(good) < len(runs):
        how += f" ({len(runs) - len(good)} untrusted run(s) left out)"
    return Baseline(tuple(good), how)


def noise_history(history: Sequence[Run], head: Sequence[Run], base_branch: str | None,
                  until: Baseline | None = None) -> list[Run]:
    """The base-branch runs, same fingerprint, that teach the run-to-run noise: up to and
    including the baseline's runs when there is one."""
    pool = candidates(history, head, base_branch)
    if until and until.runs:
        last = max(run.created_at for run in until.runs)
        pool = [run for run in pool if run.created_at <= last]
    return pool
