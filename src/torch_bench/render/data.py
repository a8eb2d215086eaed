"""The site's data files, fetched by the pages on demand. Each payload is a plain dict
(column arrays where there is one entry per point, to keep files small).

Contract with static/dashboard.js -- a series' head file:
    {"id", "suite", "name", "metric", "unit", "direction", "params",
     "environments": [{"label", "gpu", "torch"}],      # referred to by points.env
     "branches": [name],                               # referred to by points.branch
                                                       # (each chunk has its own list)
     "chunks": [{"file", "offset", "length", "count"}],  # the older points, oldest first:
                                                       # segments of packed files (packs.py,
                                                       # each its own length)
     "run_tables": [file],                             # the run tables its points refer to,
     "run_table_first": [run],                         # and the first run each one holds
     "points": {"run", "env", "median", "q1", "q3", "n", "minute_steps", "branch"},
                                                       # one entry per point, oldest first
     "env_changes": [{"index", "label"}],
     "change_points": [{"index", "ratio", "regression", "note"?}],  # note: the run's notes
     "overlays": {facet key: [{"value", "file"}]}}  # sibling series differing in that facet
A point carries what the chart needs of its run: when it was made (minutes since 1970-01-01
UTC; "minute_steps" holds the first point's minute, then each point's step from the one
before, a few digits where the full minute takes eight) and its "branch", a position in the
"branches" of its part of the history (the head file's, or its packed chunk's own: so a
head file does not grow with every branch the benchmark ever ran on, and a chunk's bytes
depend on its own runs only); so does every point of a packed chunk. The page draws and
filters the whole history from the head file and its chunks alone, and fetches a run table
only when it shows a point's commit (hover, click, CSV download), one table per RUN_CHUNK
runs: the idle fetch of a benchmark's history stays about its points' own bytes, whatever
the history's length or how sparsely the benchmark was measured.
A point's "run" is the run's position in the history; run table k (paths.run_table) holds
what the pages show of runs [k x RUN_CHUNK, (k + 1) x RUN_CHUNK):
    {"first", "commit_url_prefix", "run", "date", "sha", "branch", "message", "url" (only
     when the commit URLs are not prefix + sha), "values": {"file", "offsets"}}
where "values" locates each run's values in the runs' values pack: one part per run,
{"run", "statuses", "series", "median", "status"} (run_values_payload) packed by
packs.encode_run_values (the medians as float32). The whole history
of a series is its chunks' points followed by the head's; indexes (env_changes,
change_points) count in it. A new run rewrites only the heads, the newest run table and
values pack: complete chunks and tables keep their bytes (and their cache entries in
browsers).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from torch_bench.render import packs, paths
from torch_bench.render.facets import PARAM_FACETS, param_for_facet
from torch_bench.render.markers import ChangeMark, EnvChange
from torch_bench.render.model import Points, RunInfo, Series, SiteModel
from torch_bench.render.noise_band import NoiseBand

TRAINING_RUNS = 10  # the training page offers this many recent runs
CHUNK_POINTS = 500  # points per history chunk of a series
RUN_CHUNK = 500  # runs per run table and values pack


def series_payload(series: Series, env_marks: Sequence[EnvChange],
                   change_marks: Sequence[ChangeMark],
                   overlays: Mapping[str, list[dict[str, str]]],
                   chunks: Sequence[Mapping[str, Any]] = (),
                   run_tables: Sequence[str] = (),
                   noted: Mapping[int, str] | None = None,
                   run_table_first: Sequence[int] = ()) -> dict[str, Any]:
    """The head file of a series: what describes it, where its complete chunks are
    (`chunks`, CHUNK_POINTS points each, oldest first) and its points after them.
    `noted`: change point index -> what its marker adds (render/notes.py)."""
    noted = noted or {}
    pts = series.points
    codes, labels = environment_index(pts)
    first = len(chunks) * CHUNK_POINTS
    branch_codes, branches = branch_index(pts[first:])
    return {
        "id": series.benchmark_id,
        "suite": series.suite,
        "name": series.name,
        "metric": series.metric,
        "unit": series.unit,
        "direction": series.direction,
        "params": dict(series.params),
        "environments": [{"label": label, "gpu": gpu, "torch": torch}
                         for label, gpu, torch in labels],
        "branches": branches,
        "chunks": [dict(chunk) for chunk in chunks],
        "run_tables": list(run_tables),
        "run_table_first": list(run_table_first),
        "points": head_points(pts[first:], codes[first:], branch_codes),
        "env_changes": [{"index": m.index, "label": m.label} for m in env_marks],
        "change_points": [{"index": m.index, "ratio": rounded(m.ratio),
                           "regression": m.regression,
                           **({"note": noted[m.index]} if m.index in noted else {})}
                          for m in change_marks],
        "overlays": dict(overlays),
    }


def complete_chunks(series: Series) -> int:
    """How many complete chunks of CHUNK_POINTS points the series' history has."""
    return len(series.points) // CHUNK_POINTS


def run_chunks_of(series: Series) -> list[int]:
    """The run tables (by number) that the series' points refer to."""
    chunks = series.points.run // RUN_CHUNK  # increasing: each distinct one is a new value
    return chunks[np.flatnonzero(np.diff(chunks, prepend=-1))].tolist()


def chunk_segment(series: Series, chunk: int, env: np.ndarray) -> bytes:
    """Points [chunk x CHUNK_POINTS, (chunk + 1) x CHUNK_POINTS) of a series as a packed
    segment (packs.py); `env`: environment_index of all its points."""
    span = slice(chunk * CHUNK_POINTS, (chunk + 1) * CHUNK_POINTS)
    codes, branches = branch_index(series.points[span])
    return packs.encode_segment({**segment_columns(series, env, span), "branch": codes},
                                branches)


def chunk_lengths(series: Series, env: np.ndarray, first: int = 0) -> list[int]:
    """The length of each complete chunk's segment from chunk `first` on (what
    `chunk_segment` makes), cheaply."""
    whole = complete_chunks(series)
    span = slice(first * CHUNK_POINTS, whole * CHUNK_POINTS)
    codes, names = [], []
    for k in range(first, whole):
        local, branches = branch_index(series.points[k * CHUNK_POINTS:(k + 1) * CHUNK_POINTS])
        codes.append(local)
        names.append(len(packs.json_bytes(branches)))
    columns = {**segment_columns(series, env, span),
               "branch": np.concatenate(codes) if codes else np.zeros(0, np.int32)}
    return (packs.segment_lengths(columns, CHUNK_POINTS) + np.asarray(names, np.int64)).tolist()


def segment_columns(series: Series, env: np.ndarray, span: slice) -> dict[str, np.ndarray]:
    """What a packed segment holds of the points in `span`, but their branches."""
    pts = series.points[span]
    return {"run": pts.run, "n": pts.n, "median": pts.median, "q1": pts.q1, "q3": pts.q3,
            "env": env[span], "minute": pts.table.minutes[pts.run]}


def environment_index(points: Points) -> tuple[np.ndarray, list[tuple[str, str, str]]]:
    """Per point, its environment's position in the list of the series' environments (in
    order of first appearance), and that list. Worked out once per Points object."""
    return points.derived("environment_index", lambda: _environment_index(points))


def _environment_index(points: Points) -> tuple[np.ndarray, list[tuple[str, str, str]]]:
    run_codes, environments = points.table.environment
    codes = run_codes[points.run]
    distinct, first_seen = np.unique(codes, return_index=True)
    ordered = distinct[np.argsort(first_seen)]
    renumber = np.zeros(len(environments) or 1, np.int32)
    renumber[ordered] = np.arange(len(ordered), dtype=np.int32)
    numbered = renumber[codes]
    numbered.flags.writeable = False  # shared by every caller (Points.derived)
    return numbered, [environments[c] for c in ordered.tolist()]


def branch_index(points: Points) -> tuple[np.ndarray, list[str]]:
    """Per point, its run's branch as a position in the list of these points' branches (in
    order of first appearance), and that list."""
    table = points.table
    codes = table.branch[points.run]
    distinct, first_seen = np.unique(codes, return_index=True)
    ordered = distinct[np.argsort(first_seen)]
    renumber = np.zeros(len(table.branch_names) or 1, np.int32)
    renumber[ordered] = np.arange(len(ordered), dtype=np.int32)
    return renumber[codes], [table.branch_names[c] for c in ordered.tolist()]


def head_points(pts: Points, env: np.ndarray, branch: np.ndarray) -> dict[str, Any]:
    return {"run": pts.run.tolist(), "env": env.tolist(), "median": rounded_list(pts.median),
            "q1": rounded_list(pts.q1), "q3": rounded_list(pts.q3), "n": pts.n.tolist(),
            "minute_steps": np.diff(pts.table.minutes[pts.run], prepend=0).tolist(),
            "branch": branch.tolist()}


def run_table_payload(runs: Sequence[RunInfo], first: int, values_file: str,
                      offsets: Sequence[int]) -> dict[str, Any]:
    """Run table of `runs` (positions first, first + 1, ...); `offsets`: where each run's
    line starts in `values_file`, then where the last ends."""
    prefix, urls = commit_urls(runs)
    return {
        "first": first,
        "commit_url_prefix": prefix,
        "run": [r.run_id for r in runs],
        "date": [r.created_at for r in runs],
        "sha": [r.sha for r in runs],
        "branch": [r.branch for r in runs],
        "message": [r.message for r in runs],
        **({"url": urls} if urls is not None else {}),
        "values": {"file": values_file, "offsets": list(offsets)},
    }


def rounded(value: float) -> float:
    """Six significant digits: more than any timer here resolves, and half the bytes."""
    return float(f"{value:.6g}")


def six_digits(values: np.ndarray) -> np.ndarray:
    """`values` rounded to six significant digits, for many at once (as `rounded`, but for a
    value exactly half-way between two six-digit decimals, which may go either way): a
    whole number divided or multiplied by an exact power of ten is the double nearest the
    decimal, so it prints as the six digits. Zero, infinities and NaN stay as they are."""
    values = np.asarray(values, np.float64)
    finite = np.isfinite(values) & (values != 0)
    exponent = np.zeros(len(values), np.int64)
    exponent[finite] = 5 - np.floor(np.log10(np.abs(values[finite]))).astype(np.int64)
    out = values.copy()
    up = finite & (exponent >= 0) & (exponent <= 22)
    down = finite & (exponent < 0) & (exponent >= -22)
    scale = 10.0 ** np.abs(exponent)
    out[up] = np.round(values[up] * scale[up]) / scale[up]
    out[down] = np.round(values[down] / scale[down]) * scale[down]
    return out


def rounded_list(values: np.ndarray) -> list[float]:
    return [float(f"{v:.6g}") for v in values.tolist()]


def commit_urls(runs: Sequence[RunInfo]) -> tuple[str | None, list[str | None] | None]:
    """A shared prefix when every commit URL is prefix + sha (one repository), else the list."""
    urls = [r.url for r in runs]
    if not urls or urls[0] is None or not runs[0].sha:
        return (None, urls) if any(urls) else (None, None)
    prefix = urls[0][: -len(runs[0].sha)] if urls[0].endswith(runs[0].sha) else None
    if prefix and all(u == prefix + r.sha for u, r in zip(urls, runs, strict=True)):
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
    """The runs the Compare page offers, newest first; each names the run table that
    locates its values."""
    return [
        {"run": r.run_id, "date": r.date, "sha": r.short_sha, "branch": r.branch,
         "message": r.message, "env": r.environment,
         "table": paths.run_table(r.index // RUN_CHUNK), "line": r.index % RUN_CHUNK}
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


def run_values_payload(model: SiteModel, run: RunInfo) -> dict[str, Any]:
    """One run's values as columns, one entry per result in the order of benchmarks.json:
    its series' position there (as spans [first, count] of consecutive positions), its
    median at six significant digits (null when it has none) and its status (a position in
    "statuses"; "status" is left out when every result has the first). Made from the model's
    arrays: ten million results cost seconds."""
    rows = model.run_rows(run)
    columns, row_series = model.columns, model.row_series
    if columns is None or row_series is None or rows.stop <= rows.start:
        return {"run": run.run_id, "statuses": [], "series": [], "median": []}
    order = np.arange(rows.start, rows.stop)[np.argsort(row_series[rows], kind="stable")]
    medians = columns.rows["median"][order]
    median: list[float | None] = six_digits(medians).tolist()
    for i in np.flatnonzero(~(columns.ok[order] & np.isfinite(medians))).tolist():
        median[i] = None
    used, status = np.unique(columns.rows["status"][order], return_inverse=True)
    return {"run": run.run_id, "statuses": [columns.statuses[c] for c in used.tolist()],
            "series": spans(row_series[order]), "median": median,
            **({"status": status.tolist()} if len(used) > 1 else {})}


def spans(positions: np.ndarray) -> list[list[int]]:
    """[first, count] of each run of consecutive positions (0 1 2 5 6 -> [0, 3], [5, 2])."""
    if not len(positions):
        return []
    breaks = np.flatnonzero(np.diff(positions) != 1) + 1
    starts = np.concatenate([[0], breaks])
    counts = np.diff(np.concatenate([starts, [len(positions)]]))
    return [[int(positions[s]), int(c)] for s, c in zip(starts, counts, strict=True)]


# Params that tell the native run from the compiled one: the curves differing only in these
# are drawn in one chart and paired in one table row.
TRAINING_RUN_PARAMS = ("backend", "runtime")


def training_curve(name: str, params: Mapping[str, Any], loss: Sequence[float],
                   shown: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """One run's curve, with what the page shows of it (`columns.TRAINING_SHOWN`)."""
    return {"name": name, "backend": str(params.get("backend", "eager")),
            "runtime": str(params.get("runtime", "")),
            "params": ", ".join(f"{k}={v}" for k, v in sorted(params.items())
                                if k not in TRAINING_RUN_PARAMS),
            "loss": list(loss), **(shown or {})}


def training_payload(model: SiteModel) -> dict[str, Any]:
    """Loss curves of the most recent runs with training results, newest first."""
    runs = []
    for info in reversed(model.runs):
        curves = [training_curve(*fact) for fact in model.facts(info).get("training", ())]
        if curves:
            runs.append({"run": info.run_id, "date": info.date, "sha": info.short_sha,
                         "branch": info.branch, "message": info.message, "curves": curves})
        if len(runs) == TRAINING_RUNS:
            break
    return {"runs": runs}
