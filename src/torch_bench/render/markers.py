"""Where a series' environment changed and where the analysis found change points."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from torch_bench.render.model import ChangePointFinder, Points, Series

# Environment fields whose change is marked on a trend (attribute of RunInfo, label).
ENV_MARKER_FIELDS = (("torch", "torch"), ("cuda", "CUDA"), ("driver", "driver"))


@dataclass(frozen=True)
class EnvChange:
    index: int  # point index where the new environment starts
    label: str  # e.g. "torch 2.4.0 → 2.5.0"


@dataclass(frozen=True)
class ChangeMark:
    index: int  # point index of the first point after the change
    before: float
    after: float
    ratio: float  # after / before
    regression: bool  # worse in the metric's direction


def env_changes(points: Points) -> list[EnvChange]:
    codes = points.table.versions[points.run]
    changes = []
    for i in (np.flatnonzero(codes[1:] != codes[:-1]) + 1).tolist():
        old, new = points[i - 1].run, points[i].run
        parts = [f"{label} {getattr(old, attr) or '?'} → {getattr(new, attr) or '?'}"
                 for attr, label in ENV_MARKER_FIELDS if getattr(old, attr) != getattr(new, attr)]
        if parts:
            changes.append(EnvChange(i, "; ".join(parts)))
    return changes


def baseline_positions(series: Series, baseline_branch: str | None,
                       end: int | None = None) -> np.ndarray:
    """Positions of the baseline branch's points before `end` (all of them when it has
    none there)."""
    positions = series.points.on_branch(baseline_branch, end)
    if not positions.size:
        positions = np.arange(len(series.points.run[:end]))
    return positions


def change_marks(series: Series, baseline_branch: str | None, finder: ChangePointFinder,
                 window: int | None = None) -> list[ChangeMark]:
    """Change points of the baseline branch's points (all points when it has none), as
    indexes into the whole series. With `window`, only the newest `window` of those points
    are searched (the finder's cost grows faster than linearly with the length)."""
    positions = baseline_positions(series, baseline_branch)
    if window:
        positions = positions[-window:]
    values = series.points.median[positions]
    if len(values) < 2:
        return []
    marks = []
    for found in finder(values):
        if not 0 <= found.index < len(positions):
            continue
        ratio = float(found.ratio)
        worse = ratio > 1 if series.direction == "lower" else ratio < 1
        marks.append(ChangeMark(int(positions[found.index]), float(found.before),
                                float(found.after), ratio, worse))
    return marks
