"""Figures for the whole-history change-point search: the current search side by side with the
per-step search it replaced (kept as the oracle of tests/test_changepoint_sameness.py), in one
process, on seeded series with steps.

    PYTHONPATH=src python benchmarks/change_point_speed.py [--lengths 1000 10000]
        [--series 3] [--old-series 1]

Per length and series: cold search of the whole history (old and new), a warm update (memo
kept from the series one run shorter, as JSON, then the series: one chunk search), a warm update
that completes a chunk (two searches), the same series again (memo hit), and the memo's JSON
size for the series. Times are the best of a few repeats; the old cold search runs once, on
`--old-series` series only (about 16 s at 10,000 points on a loaded 2-core machine).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from torch_bench.analyze.changepoints import (
    CONTEXT,
    STRIDE,
    ChangePointMemo,
    find_change_points_whole,
)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from test_changepoint_sameness import OracleMemo, oracle_find_change_points_whole  # noqa: E402


def stepped_series(n: int, seed: int) -> np.ndarray:
    """1% noise, a +8% step a third of the way in, a -5% step at two thirds, and spikes."""
    rng = np.random.default_rng(seed)
    values = 10 * np.exp(rng.normal(0.0, 0.01, n))
    values[n // 3:] *= 1.08
    values[2 * n // 3:] *= 0.95
    values[rng.integers(0, n, size=n // 200)] *= 1.5
    return values


def best_ms(call: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return min(times) * 1000


def kept_json(values: np.ndarray) -> str:
    memo = ChangePointMemo()
    find_change_points_whole(values, memo)
    return json.dumps(memo.kept())


def measure_old(values: np.ndarray) -> dict:
    """The per-step search: cold on all but the newest run, then the newest run with the memo
    it left, then the same series again."""
    memo = OracleMemo()
    started = time.perf_counter()
    oracle_find_change_points_whole(values[:-1], memo)
    cold_s = time.perf_counter() - started
    memo = OracleMemo(memo.kept())
    started = time.perf_counter()
    found = oracle_find_change_points_whole(values, memo)
    warm_ms = (time.perf_counter() - started) * 1000
    memo = OracleMemo(memo.kept())
    started = time.perf_counter()
    oracle_find_change_points_whole(values, memo)
    hit_ms = (time.perf_counter() - started) * 1000
    return {"old_cold_s": cold_s, "old_warm_ms": warm_ms, "old_hit_ms": hit_ms,
            "old_found": [c.index for c in found],
            "old_memo_bytes": len(json.dumps(memo.kept()))}


def measure(values: np.ndarray, repeats: int) -> dict:
    """The current search, the same way (warm figures: best of `repeats`), plus a newest run
    that completes a chunk."""
    n = values.size
    started = time.perf_counter()
    find_change_points_whole(values[:-1])
    figures: dict = {"new_cold_s": time.perf_counter() - started}
    figures["found"] = [c.index for c in find_change_points_whole(values)]
    shorter = kept_json(values[:-1])
    figures["warm_ms"] = best_ms(
        lambda: find_change_points_whole(values, ChangePointMemo(json.loads(shorter))), repeats)
    # The longest prefix whose newest run completes a chunk (two searches instead of one).
    boundary = n - (n - CONTEXT - 1) % STRIDE
    before_boundary = kept_json(values[:boundary - 1])
    figures["warm_chunk_ms"] = best_ms(lambda: find_change_points_whole(
        values[:boundary], ChangePointMemo(json.loads(before_boundary))), repeats)
    same = kept_json(values)
    figures["hit_ms"] = best_ms(
        lambda: find_change_points_whole(values, ChangePointMemo(json.loads(same))), repeats)
    figures["memo_bytes"] = len(same)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--series", type=int, default=3, help="seeded series per length")
    parser.add_argument("--old-series", type=int, default=1,
                        help="series per length also searched by the old, per-step search")
    parser.add_argument("--repeats", type=int, default=5, help="repeats of each warm timing")
    args = parser.parse_args()
    print("cold: n - 1 points, no memo; warm +1: n points, memo kept (as JSON) from n - 1; "
          "+1 closing a chunk: the same at the last chunk boundary; memo hit: n points again")
    print(f"{'points':>7} {'seed':>4} {'search':>6} {'cold s':>7} {'warm +1 ms':>10} "
          f"{'+1 closing a chunk ms':>21} {'memo hit ms':>11} {'memo JSON B':>11}  found")
    for n in args.lengths:
        for seed in range(args.series):
            values = stepped_series(n, seed)
            figures = measure(values, args.repeats)
            found = ",".join(map(str, figures["found"]))
            if seed < args.old_series:
                old = measure_old(values)
                same = "same" if old["old_found"] == figures["found"] else "DIFFERENT"
                print(f"{n:>7} {seed:>4} {'old':>6} {old['old_cold_s']:>7.2f} "
                      f"{old['old_warm_ms']:>10.1f} {'-':>21} {old['old_hit_ms']:>11.2f} "
                      f"{old['old_memo_bytes']:>11}  {same}", flush=True)
            print(f"{n:>7} {seed:>4} {'new':>6} {figures['new_cold_s']:>7.3f} "
                  f"{figures['warm_ms']:>10.2f} {figures['warm_chunk_ms']:>21.2f} "
                  f"{figures['hit_ms']:>11.3f} {figures['memo_bytes']:>11}  {found}", flush=True)


if __name__ == "__main__":
    main()
