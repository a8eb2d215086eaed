"""Where a bisection starts, read from the stored history of a branch.

`regression_range(runs, benchmark)`: the newest change point in the benchmark's history
(`changepoints.py`) that made it worse, as (last good commit, first bad commit): the commits
of the last run of the old level and the first run of the new one. `previous_commit(runs,
sha)`: the commit of the newest stored run before a push's own, for the Action (a push whose
verdicts confirm a regression is bisected between the two).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from torch_bench.analyze.changepoints import commit_range, find_change_points
from torch_bench.errors import UserError
from torch_bench.metrics import Direction
from torch_bench.results.schema import Result, Run


@dataclass(frozen=True)
class HistoryRange:
    good: str
    bad: str
    ratio: float  # new level / old level of the benchmark's median
    benchmark: str


def matches(result: Result, benchmark: str) -> bool:
    return benchmark in (result.benchmark_id, f"{result.suite}/{result.name}")


def series(runs: Sequence[Run], benchmark: str) -> tuple[list[float], list[str], str]:
    """(medians, commits, direction) of the runs that measured `benchmark` with a commit."""
    values, commits, direction = [], [], Direction.LOWER.value
    for run in runs:
        sha = run.git.get("sha")
        found = [r for r in run.results if matches(r, benchmark) and r.ok]
        if not sha or not found or found[0].summary.median <= 0:
            continue
        values.append(found[0].summary.median)
        commits.append(sha)
        direction = found[0].direction
    return values, commits, direction


def regression_range(runs: Sequence[Run], benchmark: str) -> HistoryRange:
    """The newest worsening change point of `benchmark` in `runs` (oldest first)."""
    values, commits, direction = series(runs, benchmark)
    if not values:
        raise UserError(f"--benchmark {benchmark!r}: no stored run measured it "
                        "(give suite/name or the benchmark id)")
    worse = [p for p in find_change_points(values)
             if (p.ratio > 1) == (direction == Direction.LOWER.value)]
    if not worse:
        raise UserError(f"--benchmark {benchmark!r}: its history ({len(values)} runs) shows "
                        "no change point that made it worse")
    good, bad = commit_range(worse[-1], commits)
    if good == bad:
        raise UserError(f"--benchmark {benchmark!r}: the change is between two runs of the "
                        f"same commit {good[:10]} (not a code change)")
    return HistoryRange(good, bad, worse[-1].ratio, benchmark)


def previous_commit(runs: Sequence[Run], sha: str) -> str | None:
    """The commit of the newest run (oldest first) before `sha`'s own, other than `sha`."""
    before = [run.git.get("sha") for run in runs if run.git.get("sha")]
    if sha in before:
        before = before[:before.index(sha)]
    others = [c for c in before if c != sha]
    return others[-1] if others else None
