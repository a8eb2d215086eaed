"""How long the dashboard model takes to group a history's rows by benchmark, the two ways
`render/model.py::group_rows` knows, side by side in one process on the same rows:

  grid     a blocked transpose, when every run holds each benchmark once in one order
  sorting  a stable sort by benchmark, then a gather of each field (any layout)

Rows are synthetic: `--runs` runs of `--benchmarks` benchmarks, 2% of results failed. The
best and the median of `--repeats` passes each (the two ways taking turns).

    .venv/bin/python benchmarks/model_grouping.py [--runs 10000] [--benchmarks 1000]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from torch_bench.render import model
from torch_bench.render.model import POINT_FIELDS, group_rows


def synthetic_rows(runs: int, benchmarks: int) -> tuple[dict[str, np.ndarray], np.ndarray,
                                                        np.ndarray]:
    rng = np.random.default_rng(0)
    size = runs * benchmarks
    rows = {"run": np.repeat(np.arange(runs, dtype=np.int32), benchmarks),
            "median": rng.random(size), "q1": rng.random(size), "q3": rng.random(size),
            "n": np.full(size, 30, np.int32)}
    codes = np.tile(rng.permutation(benchmarks).astype(np.int32), runs)
    return rows, codes, rng.random(size) > 0.02


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--benchmarks", type=int, default=1_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rows, codes, chosen = synthetic_rows(args.runs, args.benchmarks)
    grid_layout = model.grid_layout
    ways = {"grid": grid_layout, "sorting": lambda codes, count: None}
    times: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(args.repeats):
        for name, layout in ways.items():
            model.grid_layout = layout  # the sorting way: no grid is ever found
            try:
                start = time.perf_counter()
                group_rows(rows, codes, args.benchmarks, chosen, POINT_FIELDS)
                times[name].append(time.perf_counter() - start)
            finally:
                model.grid_layout = grid_layout
    print(f"{args.runs} runs x {args.benchmarks} benchmarks, {args.repeats} passes each")
    for name, taken in times.items():
        print(f"  {name:8s} best {min(taken):6.3f} s   median {statistics.median(taken):6.3f} s")
    print(f"  sorting / grid, medians: "
          f"{statistics.median(times['sorting']) / statistics.median(times['grid']):.2f}x")


if __name__ == "__main__":
    main()
