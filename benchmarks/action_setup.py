"""Figures for the Action's set-up step (src/torch_bench/action/install.py, as action.yml runs
it): building its virtual environment from constraints.txt (cold: a fresh tool cache, pip's
download cache warm after the first build), against reusing the environment a cache restored
(only this checkout of the action is reinstalled).

Each extra is built `--rounds` times cold and reused as many times, alternating, so machine
load hits both alike. The default extras need no torch (the dashboard and comment
sub-actions); `--with-torch` adds the main action's `measure,site` with the CPU torch (large
downloads on the first round).

    python benchmarks/action_setup.py [--rounds 2] [--extras comment,site] [--with-torch]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INSTALL = ROOT / "src" / "torch_bench" / "action" / "install.py"


def step(mode: str, env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-I", str(INSTALL), mode], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def measure(extras: str, torch: str, rounds: int) -> tuple[list[float], list[float]]:
    cold, cached = [], []
    for _ in range(rounds):
        tool_cache = Path(tempfile.mkdtemp(prefix="torch-bench-tool-cache-"))
        env = {**os.environ, "RUNNER_TOOL_CACHE": str(tool_cache), "TB_EXTRAS": extras,
               "TB_TORCH": torch, "TB_DEVICE": "cpu"}
        try:
            cold.append(step("plan", env) + step("create", env))
            cached.append(step("plan", env) + step("create", env))
        finally:
            shutil.rmtree(tool_cache, ignore_errors=True)
    return cold, cached


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--with-torch", action="store_true")
    parser.add_argument("--extras", default="comment,site",
                        help="which torch-free environments to build (default comment,site)")
    args = parser.parse_args()
    cases = [(extras, "auto") for extras in args.extras.split(",") if extras]
    if args.with_torch:
        cases.append(("measure,site", "cpu"))
    print(f"{'extras':<14} {'cold (s)':>22} {'cached (s)':>22}", flush=True)
    for extras, torch in cases:
        cold, cached = measure(extras, torch, args.rounds)
        print(f"{extras:<14} {statistics.median(cold):>8.1f} (first {cold[0]:>6.1f})"
              f"   {statistics.median(cached):>8.1f} (first {cached[0]:>6.1f})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
