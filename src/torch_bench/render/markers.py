"""Where a series' environment changed and where the analysis found change points."""

from __future__ import annotations

from dataclasses import dataclass

from torch_bench.render.model import ChangePointFinder, Point, Series

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


def env_changes(points: tuple[Point, ...]) -> list[EnvChange]:
    changes = []
    for i in range(1, len(points)):
        old, new = points[i - 1].run, points[i].run
        parts = [f"{label} {getattr(old, attr) or '?'} → {getattr(new, attr) or '?'}"
                 for attr, label in ENV_MARKER_FIELDS if getattr(old, attr) != getattr(new, attr)]
        if parts:
            changes.append(EnvChange(i, "; ".join(parts)))
    return changes


def change_marks(series: Series, baseline_branch: str | None, finder: ChangePointFinder,
                 window: int | None = None) -> list[ChangeMark]:
    """Change points of the baseline branch's points (all points when it has none), as
    indexes into the whole series. With `window`, only the newest `window` of those points
    are searched (the finder's cost grows faster than linearly with the length)."""
    positions = [i for i, p in enumerate(series.points) if p.run.branch == baseline_branch]
    if not positions:
        positions = list(range(len(series.points)))
    if window:
        positions = positions[-window:]
    values = [series.points[i].median for i in positions]
    if len(values) < 2:
        return []
    marks = []
    for found in finder(values):
        if not 0 <= found.index < len(positions):
            continue
        ratio = float(found.ratio)
        worse = ratio > 1 if series.direction == "lower" else ratio < 1
        marks.append(ChangeMark(positions[found.index], float(found.before), float(found.after),
                                ratio, worse))
    return marks
