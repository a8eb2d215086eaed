"""Figures for the Parquet history: size of the data branch per run, on disk and in git
history, as run files (what `store` writes) and after `data compact` (Parquet, samples kept,
as the Action compacts), and the time to read it back (the reader of compare and data, and the
dashboard's reader without its cache).

    nice -n 19 python benchmarks/history_size.py [--runs 1000] [--benchmarks 1000]
                                                 [--samples 10] [--batch 50]

Runs are synthetic (`--benchmarks` results each, `--samples` raw samples per result, six runs
a day on one branch, a few environments) and committed to a real local git repository in
batches of `--batch` runs, as matrix shards push them; then the history is compacted and the
compaction committed. Git sizes are of the packed repository after `git gc`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

from torch_bench.fileio import write_bytes_atomic
from torch_bench.render.history_cache import load_columns
from torch_bench.results.schema import Result, Run, new_run
from torch_bench.results.stats import Summary
from torch_bench.store.documents import run_files_of
from torch_bench.store.layout import archive_files
from torch_bench.store.plan import apply_plan, plan_compact
from torch_bench.store.reader import load_history
from torch_bench.store.scan import scan_folder

SUITES = ("transformers", "vision", "rnns", "compile")
DTYPES = ("float32", "float16", "bfloat16")


def benchmark_specs(count: int) -> list[tuple[str, str, dict]]:
    """`count` (suite, name, params), as a suite of models x dtypes x batch sizes."""
    specs = []
    for k in range(count):
        suite = SUITES[k % len(SUITES)]
        specs.append((suite, f"model_{k // 24:03d}",
                      {"dtype": DTYPES[k % 3], "batch_size": 2 ** (k // 3 % 8),
                       "device": "cuda", "mode": "inference"}))
    return specs


def synthetic_runs(runs: int, benchmarks: int, samples: int, seed: int = 0) -> Iterator[Run]:
    rng = np.random.default_rng(seed)
    specs = benchmark_specs(benchmarks)
    levels = rng.uniform(0.5, 50.0, benchmarks)
    start = datetime(2024, 1, 1, tzinfo=timezone.utc)
    for i in range(runs):
        values = levels[:, None] * np.exp(rng.normal(0, 0.02, (benchmarks, samples)))
        q25, median, q75, p90 = np.percentile(values, [25, 50, 75, 90], axis=1)
        stats = zip(median.tolist(), values.mean(1).tolist(), values.std(1, ddof=1).tolist(),
                    (q75 - q25).tolist(), values.min(1).tolist(), values.max(1).tolist(),
                    p90.tolist(), strict=True)
        results = tuple(
            Result(suite=suite, name=name, metric="latency", unit="ms", direction="lower",
                   params=params, samples=tuple(row), group=suite,
                   summary=Summary(samples, med, mean, std, iqr, low, high, top))
            for (suite, name, params), row, (med, mean, std, iqr, low, high, top)
            in zip(specs, values.tolist(), stats, strict=True))
        created = (start + timedelta(hours=4 * i)).strftime("%Y-%m-%dT%H:%M:%SZ")
        yield new_run(results, created_at=created,
                      run_id=f"{created.replace('-', '').replace(':', '')[:15]}-{i:010x}",
                      git={"repository": "octo/bench", "branch": "main", "sha": f"{i:040x}",
                           "message": f"commit {i}"},
                      ci={"provider": "github", "run_id": str(1000 + i)},
                      env={"fingerprint": f"fp-{i // 500}", "torch": f"2.{i // 500}.0",
                           "python": "3.11.9", "gpu_name": "NVIDIA A100", "cpu_count": 32},
                      config={"suite": "all", "repeats": samples})


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout


def packed_bytes(repo: Path) -> int:
    git(repo, "gc", "-q", "--prune=now")
    fields = dict(line.split(": ") for line in git(repo, "count-objects", "-v").splitlines())
    return (int(fields["size-pack"]) + int(fields["size"])) * 1024


def folder_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def timed(action) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process): on a shared machine the CPU time is the
    figure that does not depend on the load."""
    wall, cpu = time.perf_counter(), time.process_time()
    action()
    return time.perf_counter() - wall, time.process_time() - cpu


def secs(pair: tuple[float, float]) -> str:
    return f"{pair[0]:.1f} s ({pair[1]:.1f} CPU)"


def mb(n: float) -> str:
    return f"{n / 1e6:,.1f} MB"


def measure(runs: int, benchmarks: int, samples: int, batch: int, work: Path) -> None:
    repo = work / "branch"
    data = repo / "benchmarks"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "gh-pages")
    git(repo, "config", "user.name", "bench")
    git(repo, "config", "user.email", "bench@example.com")
    started = time.perf_counter()
    for i, run in enumerate(synthetic_runs(runs, benchmarks, samples), 1):
        for path, content in run_files_of(run).items():
            write_bytes_atomic(data / path, content)
        if i % batch == 0 or i == runs:
            git(repo, "add", "-A")
            git(repo, "commit", "-q", "-m", f"runs up to {i}")
    written = time.perf_counter() - started
    json_disk = folder_bytes(data)
    json_git = packed_bytes(repo)
    json_read = timed(lambda: load_history(data))
    json_site_read = timed(lambda: load_columns(data, None))

    compacted = timed(lambda: apply_plan(data, plan_compact(scan_folder(data), "9999/12",
                                                            summarise=False)))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "compact")
    parquet_disk = folder_bytes(data)
    both_git = packed_bytes(repo)
    parquet_read = timed(lambda: load_history(data))
    parquet_site_read = timed(lambda: load_columns(data, None))
    tip = work / "tip"
    subprocess.run(["git", "clone", "-q", "--depth=1", "--no-local", "-b", "gh-pages",
                    str(repo), str(tip)], check=True)
    tip_git = packed_bytes(tip)

    results = runs * benchmarks
    print(f"\n{runs:,} runs x {benchmarks:,} benchmarks x {samples} samples "
          f"({results:,} results; generated and committed in {written:.0f} s, "
          f"compacted in {secs(compacted)} into {len(archive_files(data))} Parquet files)")
    rows = [
        ("data folder on disk", json_disk, parquet_disk),
        ("git history, packed", json_git, both_git),
    ]
    print(f"{'':34}{'run files (JSON)':>20}{'Parquet':>20}{'per run J / P':>22}")
    for label, before, after in rows:
        print(f"{label:34}{mb(before):>20}{mb(after):>20}"
              f"{before / runs / 1e3:>11,.1f} / {after / runs / 1e3:,.1f} KB")
    print(f"{'fresh clone of the tip (depth 1)':34}{'':>20}{mb(tip_git):>20}"
          f"{'':>11}{tip_git / runs / 1e3:>9,.1f} KB")
    print(f"{'read: load_history':34}{secs(json_read):>20}{secs(parquet_read):>20}")
    print(f"{'read: site reader, no cache':34}{secs(json_site_read):>20}"
          f"{secs(parquet_site_read):>20}")
    print("(git history after compaction keeps the run files' blobs of earlier commits, "
          "so it is the JSON history plus the Parquet files)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, nargs="+", default=[1000])
    parser.add_argument("--benchmarks", type=int, default=1000)
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("--batch", type=int, default=50)
    args = parser.parse_args()
    for runs in args.runs:
        work = Path(tempfile.mkdtemp(prefix="history-size-"))
        try:
            measure(runs, args.benchmarks, args.samples, args.batch, work)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    print(f"load: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
