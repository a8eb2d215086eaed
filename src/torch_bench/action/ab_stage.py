"""The Action's A/B stage (input `ab`): on a PR whose base has too little history, measure
the PR's merge-base and head interleaved in this job (`torch-bench ab`) and judge from those
rounds, so that a first PR on a new runner type still gets a verdict.

The merge-base is checked out into a second git worktree next to the outputs and removed
afterwards. The rounds share the measuring budget of one run (each round gets
1/`ROUNDS` of the `--max-time` per metric, on each side), so A/B adds about twice the
measuring time of one run to the job.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from torch_bench.action import shallow
from torch_bench.action.context import RunContext
from torch_bench.action.inputs import ActionInputs
from torch_bench.analyze import git, worktree_registry
from torch_bench.analyze.baseline import candidates
from torch_bench.analyze.rule import DEFAULT_POLICY
from torch_bench.errors import UserError
from torch_bench.results.schema import Run
from torch_bench.store.reader import RunFilter
from torch_bench.store.run_index import index_history

ROUNDS = 3
DEFAULT_MAX_TIME_S = 3.0  # `torch-bench run`'s default budget per metric


def history_runs(history: Path, head: Run, base_branch: str) -> int:
    """Trusted base-branch runs on the head's fingerprint: what teaches the noise."""
    runs = index_history(history, RunFilter(fingerprint=head.fingerprint)).runs \
        if history.is_dir() else ()
    return len(candidates(runs, [head], base_branch))  # type: ignore[arg-type]


def wants_ab(inputs: ActionInputs, ctx: RunContext, head: Run, history: Path) -> bool:
    """`ab`: never; always (on PRs); auto: on PRs whose base has fewer runs of history than
    a verdict needs. Only when this job measures (not for an ingested results file)."""
    if inputs["ab"] == "never" or not ctx.is_pr or inputs["results-file"]:
        return False
    if inputs["ab"] == "always":
        return True
    return history_runs(history, head, ctx.compare_branch() or "main") \
        < DEFAULT_POLICY.min_history


def round_budget(run_args: Sequence[str], rounds: int = ROUNDS) -> list[str]:
    """`--max-time` for each round: the run's budget shared by the rounds."""
    budget = DEFAULT_MAX_TIME_S
    for i, arg in enumerate(run_args):
        if arg == "--max-time" and i + 1 < len(run_args):
            budget = _seconds(run_args[i + 1])
        elif arg.startswith("--max-time="):
            budget = _seconds(arg.split("=", 1)[1])
    return ["--max-time", f"{budget / rounds:g}"]


def _seconds(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise UserError(f"Invalid value for 'run-args' input: --max-time {text!r}") from None


class NoMergeBase(UserError):
    """The checkout does not know the PR's merge-base (a shallow clone)."""


def merge_base(workspace: str, head: Run, base_branch: str) -> str:
    """The merge-base of the head with `base_branch`, fetching the history of a shallow
    checkout (shallow.py) when it is not there."""
    sha = head.git.get("sha") or "HEAD"
    refs = [r for r in (head.git.get("base_sha"), f"origin/{base_branch}", base_branch) if r]
    found = git.merge_base(workspace, sha, refs)
    if not found and shallow.complete_history(workspace, [base_branch]):
        found = git.merge_base(workspace, sha, refs)
    if not found:
        raise NoMergeBase(f"ab: cannot find the merge-base of {sha} with {base_branch} in "
                          f"{workspace} ({shallow.FIX})")
    return found


@contextmanager
def base_worktree(workspace: str, commit: str, where: Path) -> Iterator[Path]:
    """`commit` checked out (detached) into a second worktree of `workspace`, removed after;
    those of an earlier job killed outright are removed first (`worktree_registry`)."""
    worktree_registry.sweep_stale(workspace)
    if not shallow.ensure_commits(workspace, [commit]):
        raise UserError(f"{commit[:10]} is not in the checkout ({shallow.FIX})")
    failed = worktree_registry.add(workspace, where, commit)
    if failed:
        raise UserError(f"ab: cannot check out {commit} into {where}: {failed}")
    try:
        yield where
    finally:
        worktree_registry.remove(workspace, where)


def run_arguments(inputs: ActionInputs, rounds: int = ROUNDS) -> list[str]:
    """The `torch-bench run` arguments of this job, with each of `rounds` rounds' share of
    the budget."""
    shard = ["--total-partitions", str(inputs["total-partitions"]),
             "--partition-id", str(inputs["partition-id"])] \
        if inputs["total-partitions"] > 1 else []
    config = ["--config", inputs["config"]] if inputs["config"] else []
    extra = shlex.split(inputs["run-args"])
    return ["--suite", inputs["suites"], "--device", inputs["device"], *config, *shard, *extra,
            *round_budget(extra, rounds)]
