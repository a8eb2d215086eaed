"""Figures for `data compact`: size on disk and time to load the history, as run files and
after compaction, side by side in one process.

    python benchmarks/history_load.py [--runs 1000] [--results 20]
"""

from __future__ import annotations

import argparse
import random
import shutil
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from torch_bench.results.schema import measured, new_run
from torch_bench.store.folder import store_in_folder
from torch_bench.store.plan import apply_plan, plan_compact
from torch_bench.store.reader import load_history
from torch_bench.store.scan import scan_folder


def folder_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def best_load(root: Path, repeats: int = 2) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        load_history(root)
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--results", type=int, default=20)
    args = parser.parse_args()
    rng, start = random.Random(0), datetime(2025, 1, 1, tzinfo=timezone.utc)
    runs = [new_run([measured("bench", f"case{i}", "latency",
                              [rng.uniform(1, 2) for _ in range(20)])
                     for i in range(args.results)],
                    created_at=(start + timedelta(hours=12 * n)).strftime("%Y-%m-%dT%H:%M:%SZ"))
            for n in range(args.runs)]
    with tempfile.TemporaryDirectory() as scratch:
        files = Path(scratch) / "files"
        store_in_folder(runs, files)
        variants = {"run files": files}
        for summarise in (False, True):
            folder = Path(scratch) / f"compact-{summarise}"
            shutil.copytree(files, folder)
            apply_plan(folder, plan_compact(scan_folder(folder), "9999/12", summarise))
            variants["archives, samples " + ("summarised" if summarise else "kept")] = folder
        print(f"{args.runs} runs x {args.results} results x 20 samples:")
        for name, folder in variants.items():
            print(f"  {name:<30} {folder_bytes(folder) / 2**20:7.2f} MiB on disk, "
                  f"load {best_load(folder) * 1000:7.0f} ms")


if __name__ == "__main__":
    main()
