"""Bisection's measurements: each commit in its own git worktree, measured in A/B rounds.

A step measures three checkouts interleaved, the good bound, the candidate and the bad bound,
in rounds structured as A/B's (`ab.py`): each round runs `torch-bench run` once per side in
the side's checkout, the candidate always in the middle and the bounds' order reversed every
round (good-candidate-bad, bad-candidate-good, ...), so drift cancels for both comparisons.
The first run of the whole bisection calibrates the calls per sample and every later run,
of every step, reuses it (`calibration.json` in the output folder): all commits time the same
loop. The rounds of a step are then judged side by side (`verdicts.compare_runs`), candidate
against each bound, and graded by `bisect.grade_step`.

Worktrees are added (detached) under the output folder when a step needs them and removed
when they are no longer a bound, and all of them on the way out, failure or interrupt
included; those of a bisection killed outright are removed by the next one
(`worktree_registry`).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from torch_bench.analyze import worktree_registry
from torch_bench.analyze.ab import (
    CALIBRATION,
    has_flag,
    labelled_as_base,
    round_arguments,
    run_side,
)
from torch_bench.analyze.bisect import Grade, Judgement, grade_endpoints, grade_step, targets
from torch_bench.analyze.rule import RulePolicy
from torch_bench.analyze.verdicts import Comparison, Verdict, compare_runs
from torch_bench.errors import UserError
from torch_bench.results.document import save_run
from torch_bench.results.schema import Run


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          check=False)


def resolve(repo: Path, ref: str) -> str:
    done = _git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    if done.returncode != 0:
        raise UserError(f"{ref!r}: not a commit in {repo}")
    return done.stdout.strip()


def commit_range(repo: Path, good: str, bad: str) -> list[str]:
    """The first-parent commits from `good` to `bad`, oldest first, both included."""
    good, bad = resolve(repo, good), resolve(repo, bad)
    if good == bad:
        raise UserError("--good and --bad are the same commit")
    if _git(repo, "merge-base", "--is-ancestor", good, bad).returncode != 0:
        raise UserError(f"--good {good[:10]} is not an ancestor of --bad {bad[:10]}")
    listed = _git(repo, "rev-list", "--first-parent", "--reverse", f"{good}..{bad}")
    after = listed.stdout.split()
    if not after or after[-1] != bad:
        raise UserError(f"{bad[:10]} is not on the first-parent line after {good[:10]}")
    return [good, *after]


@dataclass(frozen=True)
class CommitInfo:
    sha: str
    subject: str
    author: str

    @property
    def short(self) -> str:
        return self.sha[:10]


def commit_info(repo: Path, sha: str) -> CommitInfo:
    done = _git(repo, "log", "-1", "--format=%s%x00%an <%ae>", sha)
    subject, _, author = done.stdout.strip().partition("\0")
    return CommitInfo(sha, subject, author)


class Worktrees:
    """Commits checked out (detached) under `folder`, one worktree each, added on demand."""

    def __init__(self, repo: Path, folder: Path):
        self.repo, self.folder = repo, folder
        self.paths: dict[str, Path] = {}

    def path(self, commit: str) -> Path:
        if commit not in self.paths:
            where = self.folder / commit[:12]
            # Known before it is added: a bisection stopped (SIGTERM) while git adds it must
            # still remove the half-made worktree and its registration.
            self.paths[commit] = where
            failed = worktree_registry.add(self.repo, where, commit)
            if failed:
                self.paths.pop(commit)
                raise UserError(f"bisect: cannot check out {commit[:10]}: {failed}")
        return self.paths[commit]

    def keep_only(self, commits: Sequence[str]) -> None:
        for commit in [c for c in self.paths if c not in commits]:
            self.remove(commit)

    def remove(self, commit: str) -> None:
        worktree_registry.remove(self.repo, self.paths.pop(commit))

    def remove_all(self) -> None:
        for commit in list(self.paths):
            self.remove(commit)
        _git(self.repo, "worktree", "prune")


@contextmanager
def worktrees(repo: Path, folder: Path) -> Iterator[Worktrees]:
    """A pool of worktrees of `repo` under `folder`, all removed on the way out; those an
    earlier bisection killed outright left in `repo` are removed first."""
    worktree_registry.sweep_stale(repo)
    pool = Worktrees(repo, folder)
    try:
        yield pool
    finally:
        pool.remove_all()


SIDES = ("good", "candidate", "bad")


def round_order(index: int, sides: Sequence[str] = SIDES) -> list[str]:
    """The candidate in the middle, the bounds' order reversed every other round."""
    return list(sides) if index % 2 == 0 else list(sides)[::-1]


def run_step_round(checkouts: Mapping[str, Path], index: int, run_args: Sequence[str],
                   out_dir: Path, tag: str, environ: Mapping[str, str],
                   ) -> dict[str, Run]:
    """Round `index` of one step: each side's run document, named after its own commit.
    The first run that finds no calibration in `out_dir` calibrates for all the others."""
    calibration = out_dir / CALIBRATION
    runs = {}
    for side in round_order(index, [s for s in SIDES if s in checkouts]):
        out = out_dir / f"{tag}-{side}-round{index + 1}.json"
        calibrated = calibration.is_file() or has_flag(run_args, "--calibration")
        run = run_side(checkouts[side], round_arguments(run_args, calibration), out, environ)
        run = labelled_as_base(run, checkouts[side], None, environ)
        save_run(run, out)
        if not calibrated:
            shutil.copyfile(out, calibration)
        runs[side] = run
    return runs


@dataclass
class RoundsClassifier:
    """`bisect.Classifier` measuring each step in `rounds` A/B rounds; remembers the
    benchmarks the endpoints regressed on (the first step's) to follow them after."""

    pool: Worktrees
    run_args: Sequence[str]
    rounds: int
    out_dir: Path
    policy: RulePolicy
    environ: Mapping[str, str]
    progress: Callable[[str], None] = lambda line: None
    followed: dict[str, Verdict] | None = None
    steps: int = 0

    def __call__(self, good: str, candidate: str | None, bad: str) -> Judgement:
        self.steps += 1
        wanted = {"good": good, "bad": bad, **({"candidate": candidate} if candidate else {})}
        self.pool.keep_only(list(wanted.values()))
        checkouts = {side: self.pool.path(commit) for side, commit in wanted.items()}
        runs: dict[str, list[Run]] = {side: [] for side in checkouts}
        for index in range(self.rounds):
            self.progress(f"  round {index + 1}/{self.rounds}")
            found = run_step_round(checkouts, index, self.run_args, self.out_dir,
                                   f"step{self.steps}", self.environ)
            for side, run in found.items():
                runs[side].append(run)
        if self.followed is None:
            endpoints = self.judge(runs["good"], runs["bad"])
            self.followed = targets(endpoints)
            if candidate is None or not self.followed:
                return grade_endpoints(endpoints)
        if candidate is None:
            return Judgement(Grade.AMBIGUOUS, "the endpoints were measured again")
        return grade_step(self.followed, self.judge(runs["good"], runs["candidate"]),
                          self.judge(runs["candidate"], runs["bad"]))

    def judge(self, base: list[Run], head: list[Run]) -> Comparison:
        # steps follow benchmarks, never the whole run: they keep the whole per-PR level
        return compare_runs(base, head, policy=self.policy, side_by_side=True,
                            ignore_environment=True, whole_run_apart=True)
