"""A/B mode: base and head measured in the same job, interleaved over several rounds.

On a noisy shared runner this is the only way to see small changes: both sides see the same
machine state, and alternating the order each round (base-head, head-base, ...) cancels
drift. Each round runs `torch-bench run` once per side in its own process, with the side's
checkout as the working directory and first on PYTHONPATH (its `src/` folder too, when it
has one), so the code under test is the checkout's. The samples of all rounds are pooled
per side, and R = rounds in the rule; without a history, the run-to-run noise is learned
from the rounds themselves (`verdicts.compare_runs(side_by_side=True)`).

Both sides time the same loop: the first run of an A/B calibrates the calls per sample and
its document (`calibration.json` in the output folder) is passed as `--calibration` to every
later run of both sides, the confirming rounds included. Rounds start one worker process
per case (`--processes 1` unless asked otherwise: the rounds themselves are the repeated
processes), forked from a server that imported torch once (`--case-start fork`) rather than
a fresh interpreter. The base side's documents name the base's own commit and branch, not
the head's that the job's environment describes. `run_round` runs one round, for callers
that decide round by round how many to run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from torch_bench.errors import UserError
from torch_bench.redact import token_free_environment
from torch_bench.results.document import load_run, save_run
from torch_bench.results.schema import Run
from torch_bench.suite_path import checkout_paths

SIDES = ("base", "head")
CALIBRATION = "calibration.json"  # in the output folder: the loop every run of an A/B times


@dataclass(frozen=True)
class Step:
    round: int  # 0-based
    side: str  # "base" or "head"


def schedule(rounds: int) -> list[Step]:
    """ABBA order: base first in even rounds, head first in odd rounds."""
    steps = []
    for i in range(rounds):
        order = SIDES if i % 2 == 0 else SIDES[::-1]
        steps += [Step(i, side) for side in order]
    return steps


def side_environment(checkout: Path, environ: Mapping[str, str]) -> dict[str, str]:
    """The side's run imports the checkout's code: never with a token in its environment."""
    paths = checkout_paths(checkout, environ) + [
        str(p) for p in (checkout / "src", checkout) if p.is_dir()]
    environ = token_free_environment(environ)
    existing = environ.get("PYTHONPATH")
    return {**environ, "PYTHONPATH": os.pathsep.join(paths + ([existing] if existing else []))}


def run_side(checkout: Path, run_args: Sequence[str], out: Path,
             environ: Mapping[str, str] = os.environ) -> Run:
    """One `torch-bench run` in `checkout`; its run document."""
    out = out.resolve()  # the run works in the checkout
    command = [sys.executable, "-m", "torch_bench", "run", *run_args, "--out", str(out)]
    done = subprocess.run(command, cwd=checkout, env=side_environment(checkout, environ),
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          check=False)
    if done.returncode != 0 or not out.exists():
        tail = (done.stderr or "").strip().splitlines()[-1:] or ["no output"]
        raise UserError(f"torch-bench run in {checkout} exited {done.returncode}: {tail[0]}")
    return load_run(out)


@dataclass(frozen=True)
class Checkouts:
    """The two sides of an A/B. `base_branch` names the base's branch when its checkout
    does not (a detached worktree of the merge-base)."""

    base: Path
    head: Path
    base_branch: str | None = None

    def of(self, side: str) -> Path:
        return self.base if side == "base" else self.head

    def check(self) -> None:
        for side in SIDES:
            if not self.of(side).is_dir():
                raise UserError(f"--{side}: {self.of(side)}: no such folder")


def has_flag(run_args: Sequence[str], flag: str) -> bool:
    return any(arg == flag or arg.startswith(flag + "=") for arg in run_args)


def round_arguments(run_args: Sequence[str], calibration: Path | None) -> list[str]:
    """`run_args` for one run of an A/B: one worker process per case, forked from a server
    that imported torch once (where the platform forks), unless asked otherwise; and the
    A/B's calibration when there is one and the caller gave none."""
    args = list(run_args)
    if not has_flag(args, "--processes"):
        args += ["--processes", "1"]
    if not has_flag(args, "--case-start") and hasattr(os, "fork"):
        args += ["--case-start", "fork"]
    if calibration is not None and calibration.is_file() and not has_flag(args, "--calibration"):
        args += ["--calibration", str(calibration)]
    return args


def run_round(checkouts: Checkouts, index: int, run_args: Sequence[str], out_dir: Path,
              tag: str = "", progress: Callable[[Step], None] = lambda step: None,
              environ: Mapping[str, str] = os.environ) -> dict[str, Run]:
    """Round `index` (0-based; base first in even rounds): each side's run document. The
    first run that finds no `calibration.json` in `out_dir` calibrates, and its document
    becomes that file for every later run."""
    calibration = out_dir / CALIBRATION
    runs: dict[str, Run] = {}
    for side in (SIDES if index % 2 == 0 else SIDES[::-1]):
        progress(Step(index, side))
        out = out_dir / f"{side}{tag}-round{index + 1}.json"
        calibrated = calibration.is_file() or has_flag(run_args, "--calibration")
        run = run_side(checkouts.of(side), round_arguments(run_args, calibration), out,
                       environ)
        if side == "base":
            run = labelled_as_base(run, checkouts.base, checkouts.base_branch, environ)
            save_run(run, out)
        if not calibrated:
            shutil.copyfile(out, calibration)
        runs[side] = run
    return runs


def run_ab(base: Path, head: Path, rounds: int, run_args: Sequence[str], out_dir: Path,
           progress: Callable[[Step, int], None] = lambda step, total: None,
           tag: str = "", base_branch: str | None = None) -> dict[str, list[Run]]:
    """Run the schedule; the run documents per side, in round order."""
    checkouts = Checkouts(base, head, base_branch)
    checkouts.check()
    runs: dict[str, list[Run]] = {side: [] for side in SIDES}
    total = 2 * rounds
    for index in range(rounds):
        pair = run_round(checkouts, index, run_args, out_dir, tag,
                         lambda step: progress(step, total))
        for side in SIDES:
            runs[side].append(pair[side])
    return runs


def _git(checkout: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(checkout), *args], capture_output=True,
                              text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def labelled_as_base(run: Run, checkout: Path, branch: str | None = None,
                     environ: Mapping[str, str] = os.environ) -> Run:
    """`run` with the git facts of the base checkout: its commit, message and branch (as
    given, else the checkout's own, else the job's base branch `GITHUB_BASE_REF`), and no
    pull request (the job's environment describes the head's)."""
    own = _git(checkout, "rev-parse", "--abbrev-ref", "HEAD")
    branch = branch or (own if own != "HEAD" else None) or environ.get("GITHUB_BASE_REF") or None
    sha = _git(checkout, "rev-parse", "HEAD")
    repository = run.git.get("repository")
    server = environ.get("GITHUB_SERVER_URL", "https://github.com")
    git = {**run.git, "sha": sha, "branch": branch,
           "ref": f"refs/heads/{branch}" if branch else None,
           "message": _git(checkout, "log", "-1", "--format=%B"),
           "pr_number": None, "pr_title": None, "base_sha": None, "base_branch": None,
           "url": f"{server}/{repository}/commit/{sha}" if repository and sha else None}
    return replace(run, git=git)
