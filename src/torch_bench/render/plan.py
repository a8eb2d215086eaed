"""Everything the site contains, decided without touching the disk: each page with its
template and context, each data file with its payload."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from torch_bench.render import data, pages, paths, trends
from torch_bench.render.content_key import (
    hash_arrays,
    points_key,
    run_digests,
    series_key,
    text_digests,
)
from torch_bench.render.facets import PARAM_FACETS, param_for_facet
from torch_bench.render.markers import ChangeMark, all_change_marks, env_changes
from torch_bench.render.model import ChangePointFinder, Series, SiteModel, no_change_points
from torch_bench.render.noise_band import NoiseBand, noise_band

# Overlays that split one series' own points by an environment field.
ENV_OVERLAYS = ("gpu", "torch")


@dataclass(frozen=True)
class Page:
    path: str
    template: str
    context: dict[str, Any]


@dataclass(frozen=True)
class Outputs:
    pages: tuple[Page, ...]
    data_files: tuple[tuple[str, Any], ...]  # (path, JSON payload)


@dataclass(frozen=True)
class KeyedGroup:
    """Output files made only from the inputs hashed into `key` (content_key.py): when a
    previous build left the same key, its files can be kept as they are."""
    key: str
    paths: tuple[str, ...]
    make: Callable[[], Outputs]


@dataclass(frozen=True)
class SitePlan:
    pages: tuple[Page, ...]
    data_files: tuple[tuple[str, Any], ...]  # (path, JSON payload)
    # one per benchmark (its page, head and trend files), per complete history chunk of a
    # benchmark and per run (its values file)
    groups: tuple[KeyedGroup, ...] = ()


def plan_site(model: SiteModel, finder: ChangePointFinder = no_change_points,
              change_point_window: int | None = None) -> SitePlan:
    marks = all_change_marks(model.series, model.baseline_branch, finder, change_point_window)
    bands = {s.key: noise_band(s, model.baseline_branch, marks[s.key]) for s in model.series}
    siblings = data.overlay_siblings(model)
    site_pages: list[Page] = []
    data_files: list[tuple[str, Any]] = []
    nav = {"suites": [{"name": s, "page": paths.suite_page(s)} for s in model.suites()],
           "baseline_branch": model.baseline_branch}

    def page(path: str, template: str, context: dict[str, Any]) -> None:
        site_pages.append(page_of(path, template, context, nav))

    cards = trends.trend_cards(model, marks, bands)
    page(paths.INDEX_PAGE, "overview.html", {**pages.overview_context(model, marks),
                                              "trends": cards[:trends.OVERVIEW_TRENDS],
                                              "trend_total": len(cards)})
    for suite in model.suites():
        page(paths.suite_page(suite), "suite.html", {
            **pages.suite_context(model, suite, bands),
            "trends": [c for c in cards if c.series.suite == suite]})
    digests = run_digests(model.runs)
    groups = []
    for series in model.series:
        siblings_of = siblings.get(series.key, {})
        chunks = [paths.series_chunk(series, k) for k in range(data.complete_chunks(series))]
        key = series_key(series, digests, marks[series.key], bands[series.key], nav,
                         model.baseline_branch,
                         {f: [s.key for s in members] for f, members in siblings_of.items()},
                         chunks)
        groups.append(KeyedGroup(key, (paths.benchmark_page(series), paths.series_data(series),
                                       paths.trend_data(series)),
                                 lambda series=series, chunks=chunks: benchmark_outputs(
                                     model, series, marks[series.key], bands[series.key],
                                     siblings.get(series.key, {}), nav, chunks)))
        groups.extend(chunk_groups(series, digests))
    groups.extend(run_groups(model, digests))
    training = data.training_payload(model)
    data_files.append((paths.TRAINING_DATA, training))
    page(paths.TRAINING_PAGE, "training.html", pages.training_context(training))
    data_files.append((paths.RUNS_INDEX, data.runs_payload(model)))
    data_files.append((paths.BENCHMARKS_INDEX, data.benchmarks_payload(model, bands)))
    page(paths.COMPARE_PAGE, "compare.html", pages.compare_context(model, bands))
    return SitePlan(tuple(site_pages), tuple(data_files), tuple(groups))


def page_of(path: str, template: str, context: dict[str, Any], nav: dict[str, Any]) -> Page:
    return Page(path, template, {**context, "nav": nav, "page_path": path,
                                 "root": paths.root_of(path), "plotly_file": paths.PLOTLY_FILE})


def benchmark_outputs(model: SiteModel, series: Series, marks: Sequence[ChangeMark],
                      band: NoiseBand, siblings: Mapping[str, list[Series]],
                      nav: dict[str, Any], chunks: Sequence[str] = ()) -> Outputs:
    """One benchmark's page, history head file and trend-card file."""
    path = paths.benchmark_page(series)
    facet_param = {f.key: param_for_facet(f, series.params) for f in PARAM_FACETS}
    overlays = data.overlay_entries(siblings, facet_param, path)
    page = page_of(path, "benchmark.html", pages.benchmark_context(
        model, series, marks, [*overlays, *ENV_OVERLAYS], band), nav)
    return Outputs((page,), (
        (paths.series_data(series),
         data.series_payload(series, env_changes(series.points), marks, overlays,
                             [paths.root_of(path) + chunk for chunk in chunks])),
        (paths.trend_data(series),
         trends.trend_payload(series, marks, band, model.baseline_branch))))


def chunk_groups(series: Series, digests: np.ndarray) -> list[KeyedGroup]:
    """One group per complete history chunk of a series: kept as it is while its points,
    their runs and their environments' numbering stay the same."""
    if not data.complete_chunks(series):
        return []
    env, _ = data.environment_index(series.points)
    groups = []
    for k in range(data.complete_chunks(series)):
        span = slice(k * data.CHUNK_POINTS, (k + 1) * data.CHUNK_POINTS)
        path = paths.series_chunk(series, k)
        key = points_key(series.points[span], digests, path, env[span].tobytes())
        groups.append(KeyedGroup(key, (path,), lambda series=series, k=k, path=path: Outputs(
            (), ((path, data.chunk_payload(series, k)),))))
    return groups


def run_groups(model: SiteModel, digests: np.ndarray) -> list[KeyedGroup]:
    """One group per run: its values file, kept while the run's results and the index of
    series they point into (benchmarks.json) stay the same."""
    positions = {s.benchmark_id: i for i, s in enumerate(model.series)}
    index_key = hash_arrays([s.benchmark_id for s in model.series])
    groups = []
    columns, row_series = model.columns, model.row_series
    if columns is None or row_series is None:
        return groups
    statuses = text_digests(columns.statuses)
    for run in model.runs:
        rows = model.run_rows(run)
        path = paths.run_data(run.run_id)
        key = hash_arrays(index_key, path, digests[run.index], row_series[rows],
                          columns.rows["median"][rows], columns.ok[rows],
                          statuses[columns.rows["status"][rows]])
        groups.append(KeyedGroup(key, (path,), lambda run=run, path=path: Outputs(
            (), ((path, data.run_values_payload(model, run, positions)),))))
    return groups
