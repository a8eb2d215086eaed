"""A/B mode: base and head measured in the same job, interleaved over several rounds.

On a noisy shared runner this is the only way to see small changes: both sides see the same
machine state, and alternating the order each round (base-head, head-base, ...) cancels
drift. Each round runs `torch-bench run` once per side in its own process, with the side's
checkout as the working directory and first on PYTHONPATH (its `src/` folder too, when it
has one), so the code under test is the checkout's. The samples of all rounds are pooled
per side, and R = rounds in the rule; without a history, the run-to-run noise is learned
from the rounds themselves (`within_side_noise`).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from torch_bench.analyze.noise import MAD_TO_SD, NoiseEstimate
from torch_bench.analyze.verdicts import results_by_id, trusted
from torch_bench.errors import UserError
from torch_bench.results.document import load_run
from torch_bench.results.schema import Run

SIDES = ("base", "head")


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
    paths = [str(p) for p in (checkout / "src", checkout) if p.is_dir()]
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


def run_ab(base: Path, head: Path, rounds: int, run_args: Sequence[str], out_dir: Path,
           progress: Callable[[Step, int], None] = lambda step, total: None,
           tag: str = "") -> dict[str, list[Run]]:
    """Run the schedule; the run documents per side, in round order."""
    for side, checkout in (("base", base), ("head", head)):
        if not checkout.is_dir():
            raise UserError(f"--{side}: {checkout}: no such folder")
    runs: dict[str, list[Run]] = {side: [] for side in SIDES}
    steps = schedule(rounds)
    for step in steps:
        progress(step, len(steps))
        out = out_dir / f"{step.side}{tag}-round{step.round + 1}.json"
        runs[step.side].append(run_side(base if step.side == "base" else head, run_args, out))
    return runs


def within_side_noise(base: Sequence[Run], head: Sequence[Run]) -> dict[str, NoiseEstimate]:
    """Per benchmark, the run-to-run spread of ln(per-run median) within each side, pooled
    over both sides and learned from all 2R runs: 1.4826 x median |d| / sqrt(2) over the
    differences d between runs of the same side (consistent for normal noise, and free of the
    zero a deviation from a 3-run median would contribute). Untrusted runs (failed pre-flight)
    teach nothing when their side has trusted ones."""
    noise = {}
    base_ids, head_ids = results_by_id(trusted(base) or base), results_by_id(trusted(head) or head)
    for key in set(base_ids) & set(head_ids):
        differences: list[float] = []
        runs = 0
        for results in (base_ids[key], head_ids[key]):
            logs = np.log([r.summary.median for r in results
                           if r.ok and r.summary and r.summary.median > 0])
            runs += len(logs)
            differences += [a - b for i, a in enumerate(logs) for b in logs[i + 1:]]
        if len(differences) >= 2:
            spread = float(MAD_TO_SD * np.median(np.abs(differences)) / np.sqrt(2))
            # one mean per side is estimated, hence runs - 2 degrees of freedom
            noise[key] = NoiseEstimate(spread, runs, df=runs - 2, side_by_side=True)
    return noise
