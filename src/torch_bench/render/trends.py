"""Small-multiple trend charts for the overview and suite pages: which benchmarks come first
(those with a recent change point or a change beyond noise against the baseline), and the
compact data file each card fetches when it scrolls into view.

Contract with static/dashboard.js -- a trend file (json/trend/<key>.json):
    {"median": [...],            # the newest TREND_POINTS medians, oldest first
     "change_points": [{"index", "regression"}],  # indexes into "median"
     "band": [low, high] or null}  # the range a run stays in when nothing changed (noise)

Pure functions; no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from torch_bench.render import paths
from torch_bench.render.formatting import format_change, format_value, relative_change
from torch_bench.render.markers import ChangeMark
from torch_bench.render.measured import NOT_MEASURED, was_measured
from torch_bench.render.model import Series, SiteModel
from torch_bench.render.noise_band import NoiseBand, change_css, noise_medians
from torch_bench.results.schema import SUCCESS_STATUSES

TREND_POINTS = 120  # points drawn per small multiple
RECENT_RUNS = 20  # a change point among the newest this many points is "recent"
OVERVIEW_TRENDS = 24  # cards on the overview; suite pages show all of theirs


@dataclass(frozen=True)
class TrendCard:
    series: Series
    page: str
    data_file: str
    latest: str
    flag: str  # why it is shown first, or ""
    css: str  # "worse", "better" or "same"

    @property
    def flagged(self) -> bool:
        return bool(self.flag)


def trend_card(series: Series, marks: Sequence[ChangeMark], band: NoiseBand,
               baseline_branch: str | None) -> TrendCard:
    flag, css = attention(series, marks, band, baseline_branch)
    latest = float(series.points.median[-1]) if len(series.points) else None
    return TrendCard(series=series, page=paths.benchmark_page(series),
                     data_file=paths.trend_data(series),
                     latest=format_value(latest, series.unit)
                     if was_measured(latest, series.unit) else NOT_MEASURED, flag=flag,
                     css=css)


def attention(series: Series, marks: Sequence[ChangeMark], band: NoiseBand,
              baseline_branch: str | None) -> tuple[str, str]:
    """(reason, css) when the series deserves a look: a recent change point, else the newest
    point beyond noise against the newest baseline-branch point; ("", "same") otherwise."""
    recent = [m for m in marks if m.index >= len(series.points) - RECENT_RUNS]
    if recent:
        newest = recent[-1]
        return (f"change point {format_change(newest.ratio - 1)}",
                "worse" if newest.regression else "better")
    if series.last_status not in SUCCESS_STATUSES:
        return series.last_status, "worse"
    pts = series.points
    base = pts.last_on_branch(baseline_branch, len(pts) - 1)
    change = relative_change(pts[-1].median if pts else None, base.median if base else None)
    css = change_css(change, series.direction, band)
    return (f"{format_change(change)} vs baseline", css) if css != "same" else ("", "same")


def trend_cards(model: SiteModel, marks: Mapping[str, Sequence[ChangeMark]],
                bands: Mapping[str, NoiseBand], suite: str | None = None) -> list[TrendCard]:
    """Cards of every series (of `suite`), regressions first, then improvements, then the
    rest, each group in the model's order."""
    cards = [trend_card(s, marks.get(s.key, ()), bands[s.key], model.baseline_branch)
             for s in model.series if suite is None or s.suite == suite]
    order = {"worse": 0, "better": 1}
    return sorted(cards, key=lambda c: order.get(c.css, 2) if c.flagged else 2)


def trend_payload(series: Series, marks: Sequence[ChangeMark], band: NoiseBand,
                  baseline_branch: str | None) -> dict[str, Any]:
    first = max(len(series.points) - TREND_POINTS, 0)
    medians = [float(f"{m:.4g}") for m in series.points.median[first:].tolist()]
    level = _level(series, baseline_branch, marks)
    width = band.log_half_width
    return {
        "median": medians,
        "change_points": [{"index": m.index - first, "regression": m.regression}
                          for m in marks if m.index >= first],
        "band": None if width is None or level is None else
        [float(f"{level * math.exp(-width):.4g}"), float(f"{level * math.exp(width):.4g}")],
    }


def _level(series: Series, baseline_branch: str | None,
           marks: Sequence[ChangeMark]) -> float | None:
    values = sorted(noise_medians(series, baseline_branch, marks))
    return values[len(values) // 2] if values else None
