"""Figures for the data branch: time to append one run as the history grows, and the packed
repository growth per appended run.

Side by side in one process: remotes holding 10, 1,000 and 10,000 runs are built first (with
`git fast-import`, not by storing each run), then each round appends one run of 100 results to
every remote in turn, so machine noise hits all sizes alike. History is laid out two ways:
"spread" (about 14 runs a day, so the current month holds a few hundred runs) and "one month"
(the whole history in the current month, the worst case for the tree that must be rebuilt).

    python benchmarks/store_append.py [--rounds 5]

With `--writers N --runs M`, it measures concurrent stores instead: N writer processes each
store M runs into one remote at once (as the shards of a matrix do), optionally while
`--cpu-hog` keeps every core busy, and prints how many runs arrived, the attempts they took,
the give-ups and whether `git fsck` finds the remote clean.

    python benchmarks/store_append.py --writers 16 --runs 5 --cpu-hog
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from torch_bench.results.schema import measured, new_run
from torch_bench.store.documents import run_files_of
from torch_bench.store.remote import Target, store_runs

SIZES = (10, 1_000, 10_000)
NOW = datetime(2026, 6, 28, 12, tzinfo=timezone.utc)


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def a_run(results: int, created_at: str, rng: random.Random):
    return new_run([measured("bench", f"case{i}", "latency",
                             [rng.uniform(1, 2) for _ in range(10)], params={"batch": 8})
                    for i in range(results)], created_at=created_at)


def build_remote(path: Path, runs: int, spread: bool) -> None:
    """A bare remote whose gh-pages holds `runs` small runs, in one commit."""
    subprocess.run(["git", "init", "-q", "--bare", str(path)], check=True)
    subprocess.run(["git", "config", "uploadpack.allowFilter", "true"], cwd=path, check=True)
    rng = random.Random(runs)
    template = a_run(2, iso(NOW), rng)
    stream = []
    for number in range(runs):
        moment = NOW - (timedelta(hours=1.7 * number) if spread else timedelta(minutes=number))
        created = iso(moment)
        run = new_run(template.results, created_at=created,
                      run_id=f"{created.replace('-', '').replace(':', '')[:15]}-{number:010x}")
        for name, data in run_files_of(run).items():
            stream.append(f"M 100644 inline data/{name}\ndata {len(data)}\n".encode() + data
                          + b"\n")
    header = (b"commit refs/heads/gh-pages\ncommitter bench <b@example.com> 0 +0000\n"
              b"data 8\nhistory\n")
    subprocess.run(["git", "fast-import", "--quiet"], cwd=path, check=True,
                   input=header + b"".join(stream) + b"\n")
    subprocess.run(["git", "gc", "-q"], cwd=path, check=True)


def pack_bytes(remote: Path) -> int:
    subprocess.run(["git", "repack", "-adq"], cwd=remote, check=True)
    return sum(p.stat().st_size for p in (remote / "objects" / "pack").glob("*.pack"))


def time_appends(remotes: dict[int, Path], rounds: int, rng: random.Random) -> dict[int, list]:
    times: dict[int, list[float]] = {size: [] for size in remotes}
    for number in range(rounds):
        for size, remote in remotes.items():
            run = a_run(100, iso(NOW + timedelta(seconds=number)), rng)
            started = time.perf_counter()
            store_runs([run], Target(str(remote)))
            times[size].append(time.perf_counter() - started)
    return times


WRITER = """
import json, sys, time
from torch_bench.results.schema import measured, new_run
from torch_bench.store.remote import GaveUp, Target, store_runs
remote, writer, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for number in range(runs):
    run = new_run([measured("s", f"w{writer}", "latency", [float(number + 1)],
                            params={"n": number})])
    started = time.monotonic()
    try:
        report = store_runs([run], Target(remote))
        print(json.dumps({"ok": True, "attempts": report.attempts,
                          "seconds": time.monotonic() - started}), flush=True)
    except GaveUp as exc:
        print(json.dumps({"ok": False, "error": str(exc)}), flush=True)
"""

HOG = "while True:\n    pass\n"


def concurrent_stores(writers: int, runs: int, cpu_hog: bool) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        remote = Path(scratch) / "concurrent.git"
        subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
        hogs = [subprocess.Popen([sys.executable, "-c", HOG])
                for _ in range(os.cpu_count() or 1)] if cpu_hog else []
        started = time.perf_counter()
        try:
            procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(remote), str(w),
                                       str(runs)], stdout=subprocess.PIPE, text=True)
                     for w in range(writers)]
            outcomes = []
            for proc in procs:
                out, _ = proc.communicate()
                outcomes += [json.loads(line) for line in out.splitlines() if line.strip()]
        finally:
            for hog in hogs:
                hog.kill()
                hog.wait()
        wall = time.perf_counter() - started
        stored = subprocess.run(["git", "ls-tree", "-r", "--name-only", "gh-pages", "data/runs"],
                                cwd=remote, capture_output=True, text=True).stdout.split()
        fsck = subprocess.run(["git", "fsck", "--strict"], cwd=remote, capture_output=True,
                              text=True)
        done = [o for o in outcomes if o["ok"]]
        attempts = sorted(o["attempts"] for o in done)
        seconds = sorted(o["seconds"] for o in done)
        load = f" under a CPU hog ({len(hogs)} busy processes)" if hogs else ""
        print(f"{writers} writers x {runs} runs{load}:")
        print(f"  stored {len(done)}/{writers * runs} (run files on the branch: {len(stored)}),"
              f" gave up: {len(outcomes) - len(done)}")
        if done:
            print(f"  attempts per store: median {statistics.median(attempts):g}, "
                  f"max {attempts[-1]}; seconds per store: median "
                  f"{statistics.median(seconds):.1f}, max {seconds[-1]:.1f}; wall {wall:.0f} s")
        # Objects of pushes that lost a race stay behind as dangling commits: harmless.
        lines = (fsck.stdout + fsck.stderr).splitlines()
        dangling = sum(line.startswith("dangling ") for line in lines)
        errors = [line for line in lines if not line.startswith(("dangling ", "notice: "))]
        verdict = "clean" if fsck.returncode == 0 and not errors else "\n".join(errors)
        print(f"  git fsck --strict: {verdict} ({dangling} dangling objects of lost races)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--growth-runs", type=int, default=20)
    parser.add_argument("--writers", type=int, help="measure N concurrent writers instead")
    parser.add_argument("--runs", type=int, default=5, help="runs each writer stores")
    parser.add_argument("--cpu-hog", action="store_true",
                        help="keep every core busy while the writers store")
    args = parser.parse_args()
    if args.writers:
        concurrent_stores(args.writers, args.runs, args.cpu_hog)
        return
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as scratch:
        for spread in (True, False):
            remotes = {}
            for size in SIZES:
                remotes[size] = Path(scratch) / f"{size}-{spread}.git"
                build_remote(remotes[size], size, spread)
            times = time_appends(remotes, args.rounds, rng)
            medians = {size: statistics.median(values) for size, values in times.items()}
            print(f"append one run of 100 results, history {'spread' if spread else 'one month'}"
                  f" ({args.rounds} rounds, median):")
            for size, value in medians.items():
                print(f"  {size:>6} runs in history: {value * 1000:7.1f} ms")
            print(f"  ratio largest/smallest history: "
                  f"{medians[SIZES[-1]] / medians[SIZES[0]]:.2f}")
        remote = Path(scratch) / "growth.git"
        build_remote(remote, 1_000, True)
        before = pack_bytes(remote)
        for number in range(args.growth_runs):
            store_runs([a_run(100, iso(NOW + timedelta(minutes=number)), rng)],
                       Target(str(remote)))
        growth = (pack_bytes(remote) - before) / args.growth_runs
        document = len(next(iter(run_files_of(a_run(100, iso(NOW), rng)).values())))
        print(f"packed repository growth per appended run of 100 results (10 samples each): "
              f"{growth / 1024:.1f} KiB (canonical document {document / 1024:.1f} KiB "
              f"uncompressed, plus two exports)")


if __name__ == "__main__":
    main()
