"""Small-multiple trend charts for the overview and suite pages: which benchmarks come first
(those with a recent change point or a change beyond noise against the baseline), and the
compact data file each card fetches when it scrolls into view.

Contract with static/dashboard.js -- a trend file (json/trend/<key>.json):
    {"median": [...],            # the newest TREND_POINTS medians, oldest first
     "change_points": [{"index", "regression"}],  # indexes into "median"
     "band": [low, high] or null,  # the range a run stays in when nothing changed (noise)
     "band_from": index,          # where that level starts (the last change point), or 0
     "unit": unit, "dates": [first, last]}  # of the drawn points, ISO-8601

The benchmark page's first chart is drawn on the server from the same points
(`series_chart`, svg_chart.py), with the points' dates and commits for hover
(`chart_points`).

Pure functions; no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from torch_bench.render import paths
from torch_bench.render.formatting import format_change, format_value, relative_change
from torch_bench.render.markers import ChangeMark, env_changes
from torch_bench.render.measured import NOT_MEASURED, was_measured
from torch_bench.render.model import Series, SiteModel
from torch_bench.render.names import card_titles, own_params, param_spread, shared_params
from torch_bench.render.noise_band import NoiseBand, change_css, noise_medians
from torch_bench.render.svg_chart import ChangePoint, Chart, chart_unit, trend_chart
from torch_bench.render.units import DisplayUnit
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
    title: str = ""  # the name shown: what tells it from its suite's others (names.py)
    params: str = ""  # the params that tell it from the other cards of its suite
    change: str = ""  # the newest point against the baseline, e.g. "+2.1% vs main"
    change_css: str = "same"

    @property
    def flagged(self) -> bool:
        return bool(self.flag)


def trend_card(series: Series, marks: Sequence[ChangeMark], band: NoiseBand,
               baseline_branch: str | None) -> TrendCard:
    flag, css = attention(series, marks, band, baseline_branch)
    head = headline(series, band, baseline_branch, card_unit(series, marks, band,
                                                             baseline_branch))
    return TrendCard(series=series, page=paths.benchmark_page(series),
                     data_file=paths.trend_data(series), latest=head["latest"], flag=flag,
                     css=css, title=series.name,
                     change=f"{head['change']} vs {head['baseline']}" if head["change"] != "—"
                     else "", change_css=head["change_css"])


def headline(series: Series, band: NoiseBand, baseline_branch: str | None,
             shown: DisplayUnit | None = None) -> dict[str, str]:
    """What a chart says in words above it: the newest value (in the chart's unit, `shown`,
    else in the one that suits it), its change against the newest point of the baseline
    branch before it (coloured beyond noise only), the noise band."""
    pts = series.points
    latest = float(pts.median[-1]) if len(pts) else None
    base = pts.last_on_branch(baseline_branch, len(pts) - 1)
    change = None
    if series.last_status in SUCCESS_STATUSES and was_measured(latest, series.unit):
        change = relative_change(latest, base.median if base else None)
    if not was_measured(latest, series.unit):
        latest_text = NOT_MEASURED
    else:
        latest_text = shown.format(latest) if shown else format_value(latest, series.unit)
    return {"latest": latest_text,
            "date": pts[-1].run.date if len(pts) else "",
            "change": format_change(change), "change_css": change_css(change, series.direction,
                                                                      band),
            "baseline": baseline_branch or "baseline",
            "baseline_commit": base.run.short_sha if base else "",
            "noise": f"±{band.percent:.1f}%" if band.percent is not None else "unknown",
            "noise_text": band.describe()}


def card_unit(series: Series, marks: Sequence[ChangeMark], band: NoiseBand,
              baseline_branch: str | None) -> DisplayUnit:
    """The unit the card's chart is drawn in (dashboard.js draws it from `trend_payload`
    with the same rule), so that the value under it is written in the same unit."""
    first = window_start(series)
    level_band = band_range(series, marks, band, baseline_branch)
    return chart_unit(series.points.median[first:].tolist(), series.unit, level_band or ())


def window_start(series: Series, points: int = TREND_POINTS) -> int:
    return max(len(series.points) - points, 0)


def series_chart(series: Series, marks: Sequence[ChangeMark], band: NoiseBand,
                 baseline_branch: str | None, points: int = TREND_POINTS,
                 noted: Mapping[int, str] | None = None) -> Chart:
    """The chart of the newest `points` points, with axes, noise band and change points
    (`noted`: point index -> what the marker adds, for runs with notes: render/notes.py)."""
    noted = noted or {}
    first = window_start(series, points)
    recent = series.points[first:]
    infos = series.points.table.infos
    runs = [infos[int(r)] for r in recent.run]
    level_band = band_range(series, marks, band, baseline_branch)
    inside = [m for m in marks if m.index >= first]
    return trend_chart(
        recent.median.tolist(), [run.created_at for run in runs], series.unit,
        band=level_band, band_from=max((m.index - first for m in inside), default=0),
        change_points=[ChangePoint(m.index - first, m.regression,
                                   f"change point {format_change(m.ratio - 1)}: "
                                   f"{runs[m.index - first].date} "
                                   f"{runs[m.index - first].short_sha}"
                                   + (f" — {noted[m.index]}" if m.index in noted else ""))
                       for m in inside],
        env_changes=[(c.index - first, c.label) for c in env_changes(series.points)
                     if c.index > first],
        quartiles=(recent.q1.tolist(), recent.q3.tolist()))


def chart_points(series: Series, marks: Sequence[ChangeMark], band: NoiseBand,
                 baseline_branch: str | None, points: int = TREND_POINTS) -> dict[str, Any]:
    """The drawn points' facts for hover and commit links, one array entry per point, and
    what the page needs to draw them again: where they start in the whole history ("first"),
    the noise band and the point it starts at, the change points (whole-history indexes)."""
    first = window_start(series, points)
    recent = series.points[first:]
    infos = series.points.table.infos
    runs = [infos[int(r)] for r in recent.run]
    level_band = band_range(series, marks, band, baseline_branch)
    return {"first": first, "date": [r.created_at for r in runs],
            "median": [float(f"{m:.6g}") for m in recent.median.tolist()],
            "sha": [r.short_sha for r in runs],
            "branch": [r.branch for r in runs], "url": [r.url for r in runs],
            "message": [r.message[:80] for r in runs],
            "band": list(level_band) if level_band else None,
            "band_from": max((m.index for m in marks), default=0),
            "change_points": [{"index": m.index, "ratio": m.ratio, "regression": m.regression}
                              for m in marks if m.index >= first]}


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
    members = [s for s in model.series if suite is None or s.suite == suite]
    names: dict[str, list[str]] = {}
    for series in members:
        names.setdefault(series.suite, []).append(series.name)
    shown = {name: card_titles(group) for name, group in names.items()}
    shared = {name: shared_params([s.params for s in members if s.suite == name])
              for name in names}
    spread = {name: param_spread(s.params for s in members if s.suite == name)
              for name in names}
    groups: dict[tuple[str, str, str], list[Series]] = {}
    for series in members:
        groups.setdefault((series.suite, series.name, series.metric), []).append(series)
    within = {key: param_spread(s.params for s in group) for key, group in groups.items()}
    cards = [replace(trend_card(s, marks.get(s.key, ()), bands[s.key], model.baseline_branch),
                     title=shown[s.suite][s.name],
                     params=own_params(s.name, s.params, shared[s.suite],
                                       within[(s.suite, s.name, s.metric)], spread[s.suite]))
             for s in members]
    order = {"worse": 0, "better": 1}
    return sorted(cards, key=lambda c: order.get(c.css, 2) if c.flagged else 2)


def trend_payload(series: Series, marks: Sequence[ChangeMark], band: NoiseBand,
                  baseline_branch: str | None) -> dict[str, Any]:
    first = window_start(series)
    medians = [float(f"{m:.4g}") for m in series.points.median[first:].tolist()]
    level_band = band_range(series, marks, band, baseline_branch)
    infos = series.points.table.infos
    runs = series.points.run[first:]
    return {
        "median": medians,
        "change_points": [{"index": m.index - first, "regression": m.regression}
                          for m in marks if m.index >= first],
        "band": None if level_band is None else [float(f"{v:.4g}") for v in level_band],
        "band_from": max((m.index - first for m in marks if m.index >= first), default=0),
        "unit": series.unit,
        "dates": [infos[int(runs[0])].created_at, infos[int(runs[-1])].created_at]
        if len(runs) else [],
    }


def band_range(series: Series, marks: Sequence[ChangeMark], band: NoiseBand,
               baseline_branch: str | None) -> tuple[float, float] | None:
    """The values a run stays within when nothing changed: the level since the last change
    point, widened by the noise band; None when the noise is unknown. Worked out once per
    series and inputs (a benchmark's page, chart and trend file each ask)."""
    key = ("band_range", baseline_branch, band.log_half_width, tuple(marks))
    return series.points.derived(key, lambda: _band_range(series, marks, band,
                                                          baseline_branch))


def _band_range(series: Series, marks: Sequence[ChangeMark], band: NoiseBand,
                baseline_branch: str | None) -> tuple[float, float] | None:
    level = _level(series, baseline_branch, marks)
    width = band.log_half_width
    if width is None or level is None:
        return None
    return level * math.exp(-width), level * math.exp(width)


def _level(series: Series, baseline_branch: str | None,
           marks: Sequence[ChangeMark]) -> float | None:
    values = sorted(noise_medians(series, baseline_branch, marks))
    return values[len(values) // 2] if values else None
