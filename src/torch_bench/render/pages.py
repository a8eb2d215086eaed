"""Context for each page template. Pure functions of the SiteModel and the analysis marks;
the tables are computed here so that every page reads well without JavaScript."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from torch_bench.render import names, paths
from torch_bench.render.facets import FACETS, Facet, param_facet_value
from torch_bench.render.formatting import format_change, format_value, relative_change
from torch_bench.render.markers import ChangeMark
from torch_bench.render.measured import NOT_MEASURED, measured_or_none, was_measured
from torch_bench.render.model import Point, RunInfo, RunValue, Series, SiteModel
from torch_bench.render.names import short_names
from torch_bench.render.noise_band import NoiseBand, change_css, noise_band
from torch_bench.render.notes import Notes, marker_labels, marker_notes
from torch_bench.render.sparkline import sparkline_points
from torch_bench.render.svg_chart import trend_chart
from torch_bench.render.trends import chart_points, headline, series_chart
from torch_bench.render.units import DisplayUnit, display_unit
from torch_bench.results.schema import SUCCESS_STATUSES

SPARKLINE_POINTS = 30
OVERVIEW_SUMMARY_POINTS = 100  # the overview's summary charts show this many recent runs
OVERVIEW_ROWS = 15
BENCHMARK_TABLE_ROWS = 20
COMPILE_SUMMARY = ("compile", "summary", ("speedup", "pass_rate"))


def facet_value(facet: Facet, series: Series) -> str | None:
    if facet.env_field == "gpu":
        return series.points[-1].run.gpu if series.points else None
    return param_facet_value(facet, series.params)


# -- Overview -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChangeRow:
    date: str
    title: str
    params: str
    page: str
    commit: str
    url: str | None
    change: str
    css: str


def overview_context(model: SiteModel, marks: Mapping[str, Sequence[ChangeMark]]) -> dict:
    by_suite: dict[str, list[Series]] = {}
    for series in model.series:
        by_suite.setdefault(series.suite, []).append(series)
    suites = [
        {"name": name, "page": paths.suite_page(name), "benchmarks": len(members),
         "latest": max((s.points[-1].run.date for s in members if s.points), default="—")}
        for name, members in sorted(by_suite.items())
    ]
    return {
        "suites": suites,
        "environments": latest_per_environment(model),
        "recent_runs": [_run_row(model, r) for r in reversed(model.runs[-OVERVIEW_ROWS:])],
        "branches": sorted({r.branch for r in model.runs[-OVERVIEW_ROWS:] if r.branch}),
        "changes": recent_changes(model, marks),
        "summary_charts": compile_summary_charts(model),
    }


def latest_per_environment(model: SiteModel) -> list[dict]:
    latest: dict[tuple[str, str], RunInfo] = {}
    for run in model.runs:
        latest[(run.gpu, run.torch)] = run
    rows = sorted(latest.values(), key=lambda r: r.created_at, reverse=True)
    return [_run_row(model, run) for run in rows[:OVERVIEW_ROWS]]


def _run_row(model: SiteModel, run: RunInfo) -> dict:
    facts = model.facts(run)
    return {"run": run, "results": facts.get("results", 0),
            "failures": facts.get("failures", 0)}


def recent_changes(model: SiteModel, marks: Mapping[str, Sequence[ChangeMark]]) -> list[ChangeRow]:
    found = []
    for series in model.series:
        for mark in marks.get(series.key, ()):
            run = series.points[mark.index].run
            found.append((run.created_at, series, mark, run))
    found.sort(key=lambda item: item[0], reverse=True)
    return [
        ChangeRow(date=run.date, title=series.title, params=series.params_text,
                  page=paths.benchmark_page(series), commit=run.short_sha, url=run.url,
                  change=format_change(mark.ratio - 1),
                  css="worse" if mark.regression else "better")
        for _, series, mark, run in found[:OVERVIEW_ROWS]
    ]


def compile_summary_charts(model: SiteModel) -> list[dict]:
    suite, name, metrics = COMPILE_SUMMARY
    charts = []
    for series in model.series:
        if series.suite != suite or series.name != name or series.metric not in metrics:
            continue
        recent = series.points[-OVERVIEW_SUMMARY_POINTS:]
        times = [p.run.created_at for p in recent]
        charts.append({
            "chart": trend_chart([p.median for p in recent], times, series.unit),
            "latest": format_value(recent[-1].median, series.unit) if len(recent) else "—",
            "title": f"{'geometric-mean speedup' if series.metric == 'speedup' else 'pass rate'}"
                     + (f" ({series.params_text})" if series.params_text else ""),
            "page": paths.benchmark_page(series),
            "metric": series.metric,
            "points": len(recent),
        })
    charts.sort(key=lambda chart: chart["metric"] != "speedup")
    return charts


# -- Suite --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SuiteRow:
    series: Series
    page: str
    facets: dict[str, str]
    latest: str
    latest_run: RunInfo | None
    vs_previous: str
    vs_previous_css: str
    vs_baseline: str
    vs_baseline_css: str
    noise: str  # hover text: the noise band the changes are judged against
    sparkline: str
    points: int
    params: str = ""  # only the params this row does not share with every row of the table
    name: str = ""  # the name shown: the suite's common prefix left out (names.py)
    unit: str = ""  # the unit `latest` is written in


def baseline_point(series: Series, branch: str | None) -> Point | None:
    """The newest point of the baseline branch before the series' latest point."""
    return series.points.last_on_branch(branch, len(series.points) - 1)


def suite_row(series: Series, baseline_branch: str | None,
              band: NoiseBand | None = None) -> SuiteRow:
    """A suite table row; changes are coloured only beyond the rule's noise (noise_band.py)."""
    pts = series.points
    band = band or noise_band(series, baseline_branch)
    latest = pts[-1] if pts else None
    previous = pts[-2] if len(pts) > 1 else None
    base = baseline_point(series, baseline_branch)
    to_prev = to_base = None
    if series.last_status in SUCCESS_STATUSES:  # a failed newest result has no change
        now = measured_or_none(latest and latest.median, series.unit)
        to_prev = relative_change(now, measured_or_none(previous and previous.median,
                                                        series.unit))
        to_base = relative_change(now, measured_or_none(base and base.median, series.unit))
    facets = {f.key: v for f in FACETS if (v := facet_value(f, series)) is not None}
    newest = latest.median if latest else None
    shown = display_unit(newest if newest is not None else 0.0, series.unit)
    return SuiteRow(
        series=series,
        page=paths.benchmark_page(series),
        facets=facets,
        latest=shown.format(newest) if was_measured(newest, series.unit) else NOT_MEASURED,
        unit=unit_label(shown, series.unit),
        latest_run=latest.run if latest else None,
        vs_previous=format_change(to_prev),
        vs_previous_css=change_css(to_prev, series.direction, band),
        vs_baseline=format_change(to_base),
        vs_baseline_css=change_css(to_base, series.direction, band),
        noise=band.describe(),
        sparkline=sparkline_points(pts.median[-SPARKLINE_POINTS:].tolist()),
        points=len(pts),
    )


def shared_params(members: Sequence[Series]) -> dict[str, str]:
    """The params every one of `members` has, with the same value (none for a single one)."""
    return names.shared_params([series.params for series in members])


def params_text(params: Mapping[str, Any], leave_out: Mapping[str, str] = {}) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(params.items()) if k not in leave_out)


def suite_context(model: SiteModel, suite: str,
                  bands: Mapping[str, NoiseBand] | None = None) -> dict:
    bands = bands or {}
    members = [s for s in model.series if s.suite == suite]
    shared = shared_params(members)
    shown = short_names(s.name for s in members)
    rows = [replace(suite_row(s, model.baseline_branch, bands.get(s.key)),
                    params=params_text(s.params, shared), name=shown[s.name]) for s in members]
    filters = []
    for facet in FACETS:
        values = sorted({row.facets[facet.key] for row in rows if facet.key in row.facets},
                        key=_natural)
        if values:
            filters.append({"key": facet.key, "label": facet.label, "options": values})
    return {"suite": suite, "rows": rows, "filters": filters,
            "baseline_branch": model.baseline_branch, "shared_params": params_text(shared),
            "shared": shared}


def _natural(text: str) -> tuple:
    try:
        return (0, float(text), text)
    except ValueError:
        return (1, 0.0, text)


# -- Benchmark ----------------------------------------------------------------------------------


def benchmark_context(model: SiteModel, series: Series, marks: Sequence[ChangeMark],
                      overlay_facets: Sequence[str], band: NoiseBand | None = None,
                      notes: Notes | None = None) -> dict:
    recent = list(reversed(series.points[-BENCHMARK_TABLE_ROWS:]))
    labels = {f.key: f.label for f in FACETS}
    band = band or noise_band(series, model.baseline_branch, marks)
    noted = marker_labels(series, marks, notes or {})
    drawn = chart_points(series, marks, band, model.baseline_branch)
    chart = series_chart(series, marks, band, model.baseline_branch, noted=noted)
    shown = chart.shown  # one unit for the chart, its header, headline and table
    return {
        "chart": chart,
        "unit_label": unit_label(shown, series.unit),
        "chart_points": drawn,
        "headline": headline(series, band, model.baseline_branch, shown),
        "series": series,
        "data_file": paths.series_data(series),
        "trend_file": paths.trend_data(series),
        "suite_page": paths.suite_page(series.suite),
        "rows": [{"point": p, "median": shown.format(p.median)
                  if was_measured(p.median, series.unit) else NOT_MEASURED,
                  "iqr": spread_text(p, shown)} for p in recent],
        "branches": branch_choices(drawn["branch"], model.baseline_branch,
                                   bool(series.points.on_branch(model.baseline_branch).size)),
        "overlays": [{"key": k, "label": labels.get(k, k)} for k in overlay_facets],
        "changes": [{"run": series.points[m.index].run, "change": format_change(m.ratio - 1),
                     "css": "worse" if m.regression else "better", **noted}
                    for m, noted in zip(marks, marker_notes(series, marks, notes or {}),
                                        strict=True)],
    }


NO_SPREAD = "none recorded"  # a single sample (an import of one value per run): no spread


def spread_text(point: Point, shown: DisplayUnit) -> str:
    """A run's interquartile range in the chart's unit, or that the source recorded none."""
    return NO_SPREAD if point.n <= 1 else shown.format(point.q3 - point.q1)


def unit_label(shown: DisplayUnit, unit: str) -> str:
    """The unit named in a chart's header: its display unit, "ratio" for ratios, "" for
    bare numbers."""
    return shown.symbol or ("ratio" if unit == "ratio" else "")


def branch_choices(drawn_branches: Sequence[str], baseline_branch: str | None,
                   on_baseline: bool) -> list[str]:
    """The branch filter's choices as the page is served: the branches of the drawn points,
    and the baseline branch when the benchmark was measured on it. dashboard.js adds the
    older points' branches once it has fetched the whole history, so a page does not carry
    every branch ever measured (a history of thousands of pull requests would make each page
    a list of them, and every new branch would change every page)."""
    baseline = {baseline_branch} if baseline_branch and on_baseline else set()
    return sorted({b for b in drawn_branches if b} | baseline)


# -- Compare ------------------------------------------------------------------------------------


def default_pair(model: SiteModel) -> tuple[RunInfo, RunInfo] | None:
    """The newest run against the newest baseline-branch run before it (else the run before)."""
    if len(model.runs) < 2:
        return None
    newest = model.runs[-1]
    earlier = model.runs[:-1]
    base = next((r for r in reversed(earlier) if r.branch == model.baseline_branch), earlier[-1])
    return base, newest


def compare_rows(model: SiteModel, a: RunInfo, b: RunInfo,
                 bands: Mapping[str, NoiseBand] | None = None) -> list[dict]:
    bands = bands or {}
    values_a = {v.series.benchmark_id: v for v in model.run_values(a)}
    values_b = {v.series.benchmark_id: v for v in model.run_values(b)}
    rows = []
    for bid in sorted(set(values_a) | set(values_b)):
        ra, rb = values_a.get(bid), values_b.get(bid)
        series = (ra or rb).series
        va = measured_or_none(ra.median, series.unit) if ra is not None else None
        vb = measured_or_none(rb.median, series.unit) if rb is not None else None
        change = relative_change(vb, va)
        band = bands.get(series.key) or noise_band(series, model.baseline_branch)
        both = display_unit(max(abs(v) for v in (va or 0.0, vb or 0.0)), series.unit)
        rows.append({"series": series, "page": paths.benchmark_page(series),
                     "a": shown(ra, series.unit, both), "b": shown(rb, series.unit, both),
                     "unit": unit_label(both, series.unit),
                     "ratio": f"{vb / va:.3f}" if va and vb is not None else "—",
                     "change": format_change(change),
                     "css": change_css(change, series.direction, band),
                     "noise": band.describe()})
    return rows


def shown(value: RunValue | None, unit: str, both: DisplayUnit) -> str:
    """A compare cell: the value as a number in the row's unit (`both`), "—" when there is
    no result, else its failed status."""
    if value is None:
        return format_value(None, unit)
    if value.median is None:
        return value.status
    return both.number(value.median) if was_measured(value.median, unit) else NOT_MEASURED


def compare_context(model: SiteModel, bands: Mapping[str, NoiseBand] | None = None) -> dict:
    pair = default_pair(model)
    return {"pair": pair, "rows": compare_rows(model, *pair, bands) if pair else [],
            "runs_file": paths.RUNS_INDEX, "benchmarks_file": paths.BENCHMARKS_INDEX}


# -- Training -----------------------------------------------------------------------------------


def is_native(curve: Mapping[str, Any]) -> bool:
    return curve.get("runtime") == "native" or curve["backend"] == "eager"


RULE_NAMES = {"last_epoch_mean": "last-epoch mean", "seed": "seed rule (training_loss.py)"}


def verdict_loss(curve: Mapping[str, Any]) -> tuple[float | None, str]:
    """The loss the parity verdict used for this run, and how it was made; a run stored
    before that figure was recorded shows its last step, and says so."""
    if curve.get("verdict_loss") is not None:
        rule = curve.get("verdict_rule")
        return curve["verdict_loss"], RULE_NAMES.get(rule, str(rule))
    return (curve["loss"][-1] if curve["loss"] else None), "last step"


def epoch_times(curve: Mapping[str, Any]) -> str:
    """The first epoch (compiling, for a compiled run) and the mean of the others."""
    times = curve.get("epoch_times_ms") or []
    if not times:
        return "—"
    first = format_value(times[0], "ms")
    if len(times) == 1:
        return f"{first} (one epoch)"
    return f"{first} first · {format_value(sum(times[1:]) / (len(times) - 1), 'ms')} later"


def training_context(training: Mapping[str, Any]) -> dict:
    """The newest training run's losses as the parity verdict compared them: one row per
    model and params, the native run beside each compiled backend, with their ratio, the
    rule that made the figures, and each run's first (compiling) and later epoch times."""
    runs = training.get("runs") or []
    if not runs:
        return {"run": None, "rows": [], "data_file": paths.TRAINING_DATA}
    latest = runs[0]
    models: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    for curve in latest["curves"]:
        loss, rule = verdict_loss(curve)
        backend = "native" if is_native(curve) else curve["backend"]
        models.setdefault((curve["name"], curve["params"]), {})[backend] = {
            "loss": loss, "rule": rule, "epochs": epoch_times(curve)}
    rows = []
    none = {"loss": None, "rule": "—", "epochs": "—"}
    for (name, params), runs_of in sorted(models.items()):
        native = runs_of.get("native", none)
        compiled = sorted((b, r) for b, r in runs_of.items() if b != "native") or [("—", none)]
        for backend, run in compiled:
            final, base = run["loss"], native["loss"]
            rows.append({"name": name, "params": params, "backend": backend,
                         "eager": format_value(base, "1"), "compiled": format_value(final, "1"),
                         "ratio": f"{final / base:.3f}" if base and final is not None
                         else "—",
                         "rule": run["rule"] if run is not none else native["rule"],
                         "eager_epochs": native["epochs"], "compiled_epochs": run["epochs"]})
    return {"run": latest, "rows": rows, "data_file": paths.TRAINING_DATA}
