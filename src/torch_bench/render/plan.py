"""Everything the site contains, decided without touching the disk: each page with its
template and context, each data file with its payload."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from torch_bench.render import data, packs, pages, paths, trends
from torch_bench.render.chunk_memo import ChunkMemo, Chunks, all_chunks
from torch_bench.render.content_key import (
    hash_arrays,
    run_digests,
    series_key,
    text_digests,
)
from torch_bench.render.facets import PARAM_FACETS, param_for_facet
from torch_bench.render.markers import ChangeMark, all_change_marks, env_changes
from torch_bench.render.model import (
    ChangePointFinder,
    RunInfo,
    Series,
    SiteModel,
    no_change_points,
)
from torch_bench.render.noise_band import NoiseBand, noise_band
from torch_bench.render.notes import Notes, marker_labels, marker_notes
from torch_bench.render.workers import on_threads

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
    data_files: tuple[tuple[str, Any], ...]  # (path, JSON payload, or the file's bytes)


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
    # one per benchmark (its page, head and trend files), per packed chunk file and per
    # RUN_CHUNK runs (their run table and values pack)
    groups: tuple[KeyedGroup, ...] = ()
    chunk_memo: Mapping[str, Any] | None = None  # to keep for the next build (chunk_memo.py)


def plan_site(model: SiteModel, finder: ChangePointFinder = no_change_points,
              change_point_window: int | None = None, notes: Notes | None = None,
              chunk_memo: Mapping[str, Any] | None = None) -> SitePlan:
    """`notes`: the data folder's run notes (store/notes.py), shown at change points.
    `chunk_memo`: what the previous build kept of the history chunks (chunk_memo.py)."""
    notes = notes or {}
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
    memo = ChunkMemo(chunk_memo, digests)
    series_chunks = all_chunks(model.series, memo, environment_codes)
    pack_members, chunk_entries = pack_layout(model.series, series_chunks)
    chunk_keys = {key: chunks.digests for key, chunks in series_chunks.items()}
    groups = []
    for series in model.series:
        siblings_of = siblings.get(series.key, {})
        chunks = chunk_entries.get(series.key, [])
        run_chunks = data.run_chunks_of(series)
        run_tables = [paths.run_table(k) for k in run_chunks]
        key = series_key(series, digests, marks[series.key], bands[series.key], nav,
                         model.baseline_branch,
                         {f: [s.key for s in members] for f, members in siblings_of.items()},
                         chunks, run_tables, notes_of(series, marks[series.key], notes),
                         chunk_keys[series.key],
                         since=len(chunk_keys[series.key]) * data.CHUNK_POINTS)
        groups.append(KeyedGroup(key, (paths.benchmark_page(series), paths.series_data(series),
                                       paths.trend_data(series)),
                                 lambda series=series, chunks=chunks, run_tables=run_tables,
                                 run_chunks=run_chunks:
                                 benchmark_outputs(model, series, marks[series.key],
                                                   bands[series.key],
                                                   siblings.get(series.key, {}), nav, chunks,
                                                   run_tables, notes, run_chunks)))
    groups.extend(pack_groups(pack_members, chunk_keys))
    groups.extend(run_groups(model, digests))
    training = data.training_payload(model)
    data_files.append((paths.TRAINING_DATA, training))
    page(paths.TRAINING_PAGE, "training.html", pages.training_context(training))
    data_files.append((paths.RUNS_INDEX, data.runs_payload(model)))
    data_files.append((paths.BENCHMARKS_INDEX, data.benchmarks_payload(model, bands)))
    page(paths.COMPARE_PAGE, "compare.html", pages.compare_context(model, bands))
    return SitePlan(tuple(site_pages), tuple(data_files), tuple(groups), memo.kept())


def notes_of(series: Series, marks: Sequence[ChangeMark], notes: Notes) -> list:
    """What the notes show on this benchmark's page (part of its content key)."""
    return marker_notes(series, marks, notes) if notes else []


def page_of(path: str, template: str, context: dict[str, Any], nav: dict[str, Any]) -> Page:
    return Page(path, template, {**context, "nav": nav, "page_path": path,
                                 "root": paths.root_of(path), "plotly_file": paths.PLOTLY_FILE})


def benchmark_outputs(model: SiteModel, series: Series, marks: Sequence[ChangeMark],
                      band: NoiseBand, siblings: Mapping[str, list[Series]],
                      nav: dict[str, Any], chunks: Sequence[Mapping[str, Any]] = (),
                      run_tables: Sequence[str] = (), notes: Notes | None = None,
                      run_chunks: Sequence[int] = ()) -> Outputs:
    """One benchmark's page, history head file and trend-card file."""
    path = paths.benchmark_page(series)
    root = paths.root_of(path)
    facet_param = {f.key: param_for_facet(f, series.params) for f in PARAM_FACETS}
    overlays = data.overlay_entries(siblings, facet_param, path)
    page = page_of(path, "benchmark.html", pages.benchmark_context(
        model, series, marks, [*overlays, *ENV_OVERLAYS], band, notes), nav)
    return Outputs((page,), (
        (paths.series_data(series),
         data.series_payload(series, env_changes(series.points), marks, overlays,
                             [{**chunk, "file": root + chunk["file"]} for chunk in chunks],
                             [root + table for table in run_tables],
                             marker_labels(series, marks, notes or {}),
                             [k * data.RUN_CHUNK for k in run_chunks])),
        (paths.trend_data(series),
         trends.trend_payload(series, marks, band, model.baseline_branch))))


def environment_codes(series: Series) -> np.ndarray:
    """data.environment_index codes of a series' points."""
    return data.environment_index(series.points)[0]


PackMembers = dict[tuple[int, int], list[Series]]  # (bucket, chunk) -> series, in pack order


def pack_layout(series_list: Sequence[Series], chunks: Mapping[str, Chunks],
                ) -> tuple[PackMembers, dict[str, list[dict]]]:
    """Which series each packed chunk file holds (packs.py), and per series key where its
    complete chunks lie: [{"file", "offset", "length", "count"}], oldest first (segments
    are as long as their columns need: `chunks`' lengths)."""
    members: PackMembers = {}
    for series in sorted(series_list, key=lambda s: s.key):
        bucket = packs.bucket_of(series.key)
        for k in range(data.complete_chunks(series)):
            members.setdefault((bucket, k), []).append(series)
    entries: dict[str, list[dict]] = {}
    for (bucket, k), in_pack in sorted(members.items()):
        offset = 0
        for series in in_pack:
            length = chunks[series.key].lengths[k]
            entries.setdefault(series.key, []).append(
                {"file": paths.series_pack(bucket, k), "offset": offset,
                 "length": length, "count": data.CHUNK_POINTS})
            offset += length
    return members, entries


def pack_groups(members: PackMembers,
                chunk_keys: Mapping[str, Sequence[str]]) -> list[KeyedGroup]:
    """One group per packed chunk file: kept as it is while the points of its segments (and
    their environments' numbering) stay the same: `chunk_keys`, content_key.chunk_digests
    by series key."""
    groups = []
    for (bucket, k), in_pack in sorted(members.items()):
        path = paths.series_pack(bucket, k)
        parts = [path, *((series.key, chunk_keys[series.key][k]) for series in in_pack)]
        groups.append(KeyedGroup(hash_arrays(*parts), (path,),
                                 lambda in_pack=in_pack, k=k, path=path: Outputs((), (
                                     (path, b"".join(data.chunk_segment(s, k, environment_codes(s))
                                                     for s in in_pack)),))))
    return groups


def run_groups(model: SiteModel, digests: np.ndarray) -> list[KeyedGroup]:
    """One group per RUN_CHUNK runs: their run table and values pack, kept while the runs'
    display facts, their results and the index of series they point into (benchmarks.json)
    stay the same."""
    index_key = hash_arrays([s.benchmark_id for s in model.series])
    columns, row_series = model.columns, model.row_series
    statuses = text_digests(columns.statuses) if columns is not None else None
    chunks = [model.runs[k * data.RUN_CHUNK:(k + 1) * data.RUN_CHUNK]
              for k in range(-(-len(model.runs) // data.RUN_CHUNK))]
    ok = columns.ok if columns is not None else None  # worked out before the threads start
    if model.runs:
        model.run_rows(model.runs[0])  # and so are the runs' row bounds

    def key(k: int) -> str:
        runs = chunks[k]
        parts: list[Any] = [index_key, paths.run_table(k), paths.run_values_pack(k),
                            digests[runs[0].index:runs[-1].index + 1]]
        if columns is not None and row_series is not None and statuses is not None:
            rows = slice(model.run_rows(runs[0]).start, model.run_rows(runs[-1]).stop)
            bounds = [model.run_rows(run).start for run in runs]
            parts += [np.asarray(bounds), row_series[rows], columns.rows["median"][rows],
                      ok[rows], statuses[columns.rows["status"][rows]]]
        return hash_arrays(*parts)
    return [KeyedGroup(chunk_key, (paths.run_table(k), paths.run_values_pack(k)),
                       lambda runs=chunks[k], k=k: run_chunk_outputs(model, runs, k))
            for k, chunk_key in enumerate(on_threads(key, range(len(chunks))))]


def run_chunk_outputs(model: SiteModel, runs: Sequence[RunInfo], chunk: int) -> Outputs:
    """A run table and the values pack its "values" entry locates."""
    parts = [packs.encode_run_values(data.run_values_payload(model, run)) for run in runs]
    table, values = paths.run_table(chunk), paths.run_values_pack(chunk)
    return Outputs((), ((table, data.run_table_payload(runs, chunk * data.RUN_CHUNK, values,
                                                       packs.offsets_of(parts))),
                        (values, b"".join(parts))))
