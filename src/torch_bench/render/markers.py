"""Where a series' environment changed and where the analysis found change points."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from torch_bench.render.model import ChangePointFinder, Points, RunInfo, Series

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


def env_changes(points: Points) -> tuple[EnvChange, ...]:
    """Where the versions marked on a trend change between consecutive points."""
    return points.derived("env_changes", lambda: _env_changes(points))


def _env_changes(points: Points) -> tuple[EnvChange, ...]:
    table, runs = points.table, points.run
    codes = table.versions[runs]
    # The text depends on the two versions alone: worked out once per pair for all series
    # (a thousand benchmarks cross the same upgrades).
    texts = table.version_change_texts
    changes = []
    for i in (np.flatnonzero(codes[1:] != codes[:-1]) + 1).tolist():
        pair = (int(codes[i - 1]), int(codes[i]))
        text = texts.get(pair)
        if text is None:
            text = texts[pair] = _change_text(table.infos[int(runs[i - 1])],
                                              table.infos[int(runs[i])])
        if text:
            changes.append(EnvChange(i, text))
    return tuple(changes)


def _change_text(old: RunInfo, new: RunInfo) -> str:
    return "; ".join(f"{label} {getattr(old, attr) or '?'} → {getattr(new, attr) or '?'}"
                     for attr, label in ENV_MARKER_FIELDS
                     if getattr(old, attr) != getattr(new, attr))


def baseline_positions(series: Series, baseline_branch: str | None,
                       end: int | None = None) -> np.ndarray:
    """Positions of the baseline branch's points before `end` (all of them when it has
    none there)."""
    positions = series.points.on_branch(baseline_branch, end)
    if not positions.size:
        positions = np.arange(len(series.points.run[:end]))
    return positions


def search_input(series: Series, baseline_branch: str | None,
                 window: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(positions, values) a change-point search looks at: the baseline branch's points (all
    points when it has none), the newest `window` of them with a window."""
    positions = baseline_positions(series, baseline_branch)
    if window:
        positions = positions[-window:]
    return positions, series.points.median[positions]


def marks_of(series: Series, positions: np.ndarray, found) -> list[ChangeMark]:
    """Change points found in the searched values, as indexes into the whole series."""
    marks = []
    for point in found:
        if not 0 <= point.index < len(positions):
            continue
        ratio = float(point.ratio)
        worse = ratio > 1 if series.direction == "lower" else ratio < 1
        marks.append(ChangeMark(int(positions[point.index]), float(point.before),
                                float(point.after), ratio, worse))
    return marks


def change_marks(series: Series, baseline_branch: str | None, finder: ChangePointFinder,
                 window: int | None = None) -> list[ChangeMark]:
    """Change points of the baseline branch's points (all points when it has none), as
    indexes into the whole series. With `window`, only the newest `window` of those points
    are searched (the finder's cost grows faster than linearly with the length)."""
    positions, values = search_input(series, baseline_branch, window)
    if len(values) < 2:
        return []
    return marks_of(series, positions, finder(values))


def all_change_marks(series: Sequence[Series], baseline_branch: str | None,
                     finder: ChangePointFinder,
                     window: int | None = None) -> dict[str, list[ChangeMark]]:
    """`change_marks` of every series by key; a finder with a `many` attribute (a function of
    a list of value sequences) searches them all in one call."""
    many = getattr(finder, "many", None)
    if many is None:
        return {s.key: change_marks(s, baseline_branch, finder, window) for s in series}
    inputs = {s.key: (s, *search_input(s, baseline_branch, window)) for s in series}
    searched = [key for key, (_, _, values) in inputs.items() if len(values) >= 2]
    found = many([inputs[key][2] for key in searched])
    marks: dict[str, list[ChangeMark]] = {key: [] for key in inputs}
    for key, points in zip(searched, found, strict=True):
        one, positions, _ = inputs[key]
        marks[key] = marks_of(one, positions, points)
    return marks
