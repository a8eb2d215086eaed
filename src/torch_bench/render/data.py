"""The site's JSON data files, fetched by the pages on demand. Each payload is a plain dict
(column arrays where there is one entry per point, to keep files small).

Contract with static/dashboard.js -- a series file:
    {"id", "suite", "name", "metric", "unit", "direction", "params",
     "environments": [{"label", "gpu", "torch"}],      # referred to by points.env
     "commit_url_prefix": prefix or null,              # commit URL = prefix + sha ...
     "points": {"run", "date", "sha", "branch", "message", "url" (... else this list),
                "env", "median", "q1", "q3", "n"},    # one array entry per point, oldest first
     "env_changes": [{"index", "label"}], "change_points": [{"index", "ratio", "regression"}],
     "overlays": {facet key: [{"value", "file"}]}}  # sibling series differing in that facet
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from torch_bench.render import paths
from torch_bench.render.facets import PARAM_FACETS, param_for_facet
from torch_bench.render.markers import ChangeMark, EnvChange
from torch_bench.render.model import Point, Series, SiteModel
from torch_bench.render.noise_band import NoiseBand

TRAINING_RUNS = 10  # the training page offers this many recent runs


def series_payload(series: Series, env_marks: Sequence[EnvChange],
                   change_marks: Sequence[ChangeMark],
                   overlays: Mapping[str, list[dict[str, str]]]) -> dict[str, Any]:
    pts = series.points
    environments: dict[tuple[str, str, str], int] = {}
    env_index = [environments.setdefault((p.run.environment, p.run.gpu, p.run.torch),
                                         len(environments)) for p in pts]
    prefix, urls = commit_urls(pts)
    return {
        "id": series.benchmark_id,
        "suite": series.suite,
        "name": series.name,
        "metric": series.metric,
        "unit": series.unit,
        "direction": series.direction,
        "params": dict(series.params),
        "environments": [{"label": label, "gpu": gpu, "torch": torch}
                         for label, gpu, torch in environments],
        "commit_url_prefix": prefix,
        "points": {
            "run": [p.run.run_id for p in pts],
            "date": [p.run.created_at for p in pts],
            "sha": [p.run.sha for p in pts],
            "branch": [p.run.branch for p in pts],
            "message": [p.run.message for p in pts],
            **({"url": urls} if urls is not None else {}),
            "env": env_index,
            "median": [rounded(p.median) for p in pts],
            "q1": [rounded(p.q1) for p in pts],
            "q3": [rounded(p.q3) for p in pts],
            "n": [p.n for p in pts],
        },
        "env_changes": [{"index": m.index, "label": m.label} for m in env_marks],
        "change_points": [{"index": m.index, "ratio": rounded(m.ratio),
                           "regression": m.regression} for m in change_marks],
        "overlays": dict(overlays),
    }


def rounded(value: float) -> float:
    """Six significant digits: more than any timer here resolves, and half the bytes."""
    return float(f"{value:.6g}")


def commit_urls(points: Sequence[Point]) -> tuple[str | None, list[str | None] | None]:
    """A shared prefix when every commit URL is prefix + sha (one repository), else the list."""
    urls = [p.run.url for p in points]
    if not urls or urls[0] is None or not points[0].run.sha:
        return (None, urls) if any(urls) else (None, None)
    prefix = urls[0][: -len(points[0].run.sha)] if urls[0].endswith(points[0].run.sha) else None
    if prefix and all(u == prefix + p.run.sha for u, p in zip(urls, points, strict=True)):
        return prefix, None
    return None, urls


def overlay_siblings(model: SiteModel) -> dict[str, dict[str, list[Series]]]:
    """For each series key, per param facet: the series (itself included) that differ from it
    only in that facet's param. Facets with a single series are left out."""
    groups: dict[tuple, list[Series]] = {}
    facet_params: list[tuple[Series, str, str]] = []
    for series in model.series:
        for facet in PARAM_FACETS:
            param = param_for_facet(facet, series.params)
            if param is None:
                continue
            rest = tuple(sorted((k, str(v)) for k, v in series.params.items() if k != param))
            group = (series.suite, series.name, series.metric, param, rest)
            groups.setdefault(group, []).append(series)
            facet_params.append((series, facet.key, group))
    result: dict[str, dict[str, list[Series]]] = {}
    for series, facet_key, group in facet_params:
        members = groups[group]
        if len(members) > 1:
            result.setdefault(series.key, {})[facet_key] = members
    return result


def overlay_entries(siblings: Mapping[str, list[Series]], facet_param: Mapping[str, str],
                    page: str) -> dict[str, list[dict[str, str]]]:
    root = paths.root_of(page)
    return {
        facet: [{"value": str(s.params.get(facet_param[facet])),
                 "file": root + paths.series_data(s)} for s in members]
        for facet, members in siblings.items()
    }


def runs_payload(model: SiteModel) -> list[dict[str, Any]]:
    """The runs the Compare page offers, newest first."""
    return [
        {"run": r.run_id, "date": r.date, "sha": r.short_sha, "branch": r.branch,
         "message": r.message, "env": r.environment, "file": paths.run_data(r.run_id)}
        for r in reversed(model.runs)
    ]


def benchmarks_payload(model: SiteModel,
                       bands: Mapping[str, NoiseBand] | None = None) -> list[dict[str, Any]]:
    """Index of every series; run files refer to series by position in this list. `noise`:
    the largest |ln(b / a)| between two runs that is still noise (null: unknown, so never
    coloured) and the minimum effect, as noise_band.py decides them."""
    bands = bands or {}
    out = []
    for s in model.series:
        band = bands.get(s.key)
        width = band.log_half_width if band else None
        out.append({"title": s.title, "suite": s.suite, "params": s.params_text, "unit": s.unit,
                    "direction": s.direction, "page": paths.benchmark_page(s),
                    "noise": {"log_band": None if width is None else rounded(width),
                              "min_effect": band.min_effect if band else None,
                              "text": band.describe() if band else ""}})
    return out


def run_values_payload(model: SiteModel, run_id: str,
                       positions: Mapping[str, int]) -> dict[str, Any]:
    """One run's values: [series position, median or null, status] per result."""
    values = []
    results = model.results_by_run.get(run_id, ())
    ids = model.ids_by_run.get(run_id) or tuple(r.benchmark_id for r in results)
    for bid, result in zip(ids, results, strict=True):
        position = positions.get(bid)
        if position is None:
            continue
        median = result.summary.median if result.ok else None
        values.append([position, median, result.status])
    return {"run": run_id, "values": values}


# Params that tell the native run from the compiled one: the curves differing only in these
# are drawn in one chart and paired in one table row.
TRAINING_RUN_PARAMS = ("backend", "runtime")


def training_payload(model: SiteModel) -> dict[str, Any]:
    """Loss curves of the most recent runs with training results, newest first."""
    runs = []
    for info in reversed(model.runs):
        curves = [
            {"name": r.name, "backend": str(r.params.get("backend", "eager")),
             "runtime": str(r.params.get("runtime", "")),
             "params": ", ".join(f"{k}={v}" for k, v in sorted(r.params.items())
                                 if k not in TRAINING_RUN_PARAMS),
             "loss": [float(x) for x in r.extra.get("loss_curve") or ()]}
            for r in model.results_by_run.get(info.run_id, ())
            if r.suite == "training" and r.metric == "loss"
        ]
        if curves:
            runs.append({"run": info.run_id, "date": info.date, "sha": info.short_sha,
                         "branch": info.branch, "message": info.message, "curves": curves})
        if len(runs) == TRAINING_RUNS:
            break
    return {"runs": runs}
