"""Calls per sample from history, so that every run of a benchmark times the same loop.

The first run of a benchmark on an environment calibrates how many calls one sample times
(`extra["loops"]` of its results); later runs reuse that count, as pyperf keeps its `loops`.
The count comes from the latest trusted run on the same environment fingerprint that has the
benchmark; without one, the benchmark is calibrated afresh. A run document named on its own
(`--calibration run.json`, as an A/B passes its first run to the others) gives its counts
whether or not it passed its pre-flight: the count is the loop it timed, which does not
depend on how steady the machine was.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from torch_bench.errors import UserError
from torch_bench.results.document import load_run
from torch_bench.results.schema import Run
from torch_bench.store.reader import load_history, sort_runs


def recorded_loops(runs: Iterable[Run], fingerprint: str | None,
                   trusted_only: bool = True) -> dict[str, int]:
    """Benchmark id -> calls per sample, from the latest (trusted, unless `trusted_only` is
    false) same-fingerprint run that recorded one for it."""
    counts: dict[str, int] = {}
    for run in sort_runs(runs):  # oldest first: later runs overwrite
        if fingerprint is None or run.fingerprint != fingerprint or \
                (trusted_only and not run.trusted):
            continue
        for result in run.results:
            # Runs written before `loops` was recorded name it `calls_per_sample`.
            loops = result.extra.get("loops", result.extra.get("calls_per_sample"))
            if result.ok and isinstance(loops, int) and not isinstance(loops, bool) and loops > 0:
                counts[result.benchmark_id] = loops
    return counts


def is_one_document(source: str | os.PathLike) -> bool:
    return Path(source).is_file()


def read_calibration_runs(source: str | os.PathLike) -> list[Run]:
    """The runs of a run document or of a data folder."""
    path = Path(source)
    if path.is_dir():
        return list(load_history(path).runs)
    if path.is_file():
        return [load_run(path)]
    raise UserError(f"--calibration: {source}: no such run document or data folder")
