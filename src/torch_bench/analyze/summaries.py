"""Suite summaries worth a line of their own in a report.

The compile suite writes one summary result per run: suite `compile`, name `summary`, with
metrics `speedup` (geometric mean over passing models), `pass_rate`, `compile_time` and
`memory_ratio`. A report shows how the geometric-mean speedup and the pass rate moved.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from torch_bench.results.schema import Run

COMPILE_SUMMARY = ("compile", "summary")
COMPILE_METRICS = ("speedup", "pass_rate")


@dataclass(frozen=True)
class SummaryChange:
    metric: str
    params: str  # rendered parameters (device, mode, ...), "" when none
    base: float
    head: float

    @property
    def ratio(self) -> float:
        return self.head / self.base if self.base else float("inf")


def _values(runs: Sequence[Run], metric: str) -> dict[str, list[float]]:
    found: dict[str, list[float]] = {}
    for run in runs:
        for r in run.results:
            if (r.suite, r.name) == COMPILE_SUMMARY and r.metric == metric and r.summary:
                key = ", ".join(f"{k}={v}" for k, v in sorted(r.params.items()))
                found.setdefault(key, []).append(r.summary.median)
    return found


def compile_changes(base: Sequence[Run], head: Sequence[Run]) -> list[SummaryChange]:
    """Geometric-mean speedup and pass rate, base vs head (median over runs), for every
    configuration present on both sides."""
    changes = []
    for metric in COMPILE_METRICS:
        before, after = _values(base, metric), _values(head, metric)
        for key in sorted(set(before) & set(after)):
            changes.append(SummaryChange(metric, key, float(np.median(before[key])),
                                         float(np.median(after[key]))))
    return changes
