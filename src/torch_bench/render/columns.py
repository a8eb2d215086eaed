"""The history as columns: everything the dashboard reads of a run, and one row per result
in numpy arrays, so that ten million results cost hundreds of megabytes and not gigabytes of
Python objects, and so that the build cache (history_cache.py) can keep them on disk.

    RunFacts     the display facts of one run, plus what the filters and pages need of its
                 results (counts, training loss curves); plain JSON-able values
    Descriptor   a benchmark's identity and presentation: suite, name, metric, unit,
                 direction, params, and its benchmark id
    RowBlock     the results of some runs: per row the run (position in the block's runs),
                 descriptor (position in the block's descriptors), status, median, q1, q3, n
                 and error; made from Run documents by `block_of_runs`
    Columns      blocks joined: runs sorted by (created_at, run_id), one descriptor table,
                 one set of row arrays (`join_blocks`)

Pure functions; no I/O.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from torch_bench.results.schema import SUCCESS_STATUSES, Result, Run

# Columns of a row block, with their dtypes (every block has all of them).
ROW_FIELDS = (("run", np.int32), ("desc", np.int32), ("status", np.int32),
              ("median", np.float64), ("q1", np.float64), ("q3", np.float64),
              ("n", np.int32), ("error", np.int32))
NO_ERROR = -1
TRAINING_SUITE, LOSS_METRIC = "training", "loss"
# what the training page shows of a run's loss result besides its curve
TRAINING_SHOWN = ("verdict_loss", "verdict_rule", "epoch_times_ms")


@dataclass(frozen=True)
class Descriptor:
    suite: str
    name: str
    metric: str
    unit: str
    direction: str
    params: Mapping[str, Any]
    benchmark_id: str

    def to_json(self) -> list[Any]:
        return [self.suite, self.name, self.metric, self.unit, self.direction,
                dict(self.params), self.benchmark_id]

    @classmethod
    def from_json(cls, item: Sequence[Any]) -> Descriptor:
        suite, name, metric, unit, direction, params, bid = item
        return cls(suite, name, metric, unit, direction, params, bid)


def run_facts(run: Run) -> dict[str, Any]:
    """What the dashboard shows and filters by of one run (JSON-able)."""
    return facts_of(run.run_id, run.created_at, run.git, run.env, len(run.results),
                    sum(1 for r in run.results if not r.ok),
                    [training_entry(r.name, r.params, r.extra) for r in run.results
                     if r.suite == TRAINING_SUITE and r.metric == LOSS_METRIC])


def facts_of(run_id: str, created_at: str, git: Mapping[str, Any], env: Mapping[str, Any],
             results: int, failures: int, training: list[list[Any]]) -> dict[str, Any]:
    """`run_facts` of a run given by its parts (archive_rows.py reads them from columns)."""
    return {
        "run_id": run_id,
        "created_at": created_at,
        "repository": _plain(git.get("repository")),  # as stored: the filters compare it
        "sha": _text(git.get("sha")),
        "branch": _text(git.get("branch")),
        "message": _text(git.get("message")).strip().split("\n", 1)[0],
        "url": _http_url(git.get("url")),
        "pr_number": _plain(git.get("pr_number")),
        "pr_title": _text(git.get("pr_title")),
        "gpu": _text(env.get("gpu_name")) or "CPU",
        "torch": _text(env.get("torch")),
        "cuda": _text(env.get("cuda")),
        "driver": _text(env.get("driver")),
        "fingerprint": _text(env.get("fingerprint")),
        "fingerprint_filter": _plain(env.get("fingerprint")),  # Run.fingerprint
        "results": results,
        "failures": failures,
        "training": training,
    }


def training_entry(name: str, params: Mapping[str, Any],
                   extra: Mapping[str, Any]) -> list[Any]:
    """What the training page shows of one loss result."""
    return [name, dict(params), [float(x) for x in extra.get("loss_curve") or ()],
            {k: extra[k] for k in TRAINING_SHOWN if k in extra}]


def _plain(value: Any) -> Any:
    return value if value is None or isinstance(value, (str, int, float, bool)) else str(value)


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _http_url(value: Any) -> str | None:
    text = _text(value)
    return text if text.startswith(("https://", "http://")) else None


@dataclass
class RowBlock:
    runs: list[dict[str, Any]]  # run_facts of each run, in block order
    descriptors: list[Descriptor]
    statuses: list[str]
    errors: list[str]
    rows: dict[str, np.ndarray]  # ROW_FIELDS, all the same length
    table_id: str | None = None  # blocks with the same id have the same descriptors

    @property
    def size(self) -> int:
        return len(self.rows["run"])


def empty_rows(size: int = 0) -> dict[str, np.ndarray]:
    return {name: np.zeros(size, dtype) for name, dtype in ROW_FIELDS}


def block_of_runs(runs: Iterable[Run], shared: dict[tuple, Descriptor] | None = None) -> RowBlock:
    """The rows of `runs` (results in document order, runs in the given order). Blocks made
    with the same `shared` dict share their Descriptor objects (and so joining them is cheap)."""
    facts: list[dict[str, Any]] = []
    descriptors: dict[tuple, int] = {}
    statuses: dict[str, int] = {}
    errors: dict[str, int] = {}
    columns: dict[str, list] = {name: [] for name, _ in ROW_FIELDS}
    for position, run in enumerate(runs):
        facts.append(run_facts(run))
        for result in run.results:
            columns["run"].append(position)
            columns["desc"].append(_descriptor_code(result, descriptors))
            columns["status"].append(statuses.setdefault(result.status, len(statuses)))
            median, q1, q3, n = _summary(result)
            columns["median"].append(median)
            columns["q1"].append(q1)
            columns["q3"].append(q3)
            columns["n"].append(n)
            columns["error"].append(NO_ERROR if result.error is None
                                    else errors.setdefault(result.error, len(errors)))
    table: list[Descriptor | None] = [None] * len(descriptors)
    shared = {} if shared is None else shared
    for key, (code, result) in descriptors.items():
        found = shared.get(key)
        if found is None:
            suite, name, metric, unit, direction, _ = key
            found = shared[key] = Descriptor(suite, name, metric, unit, direction,
                                             dict(result.params), result.benchmark_id)
        table[code] = found
    return RowBlock(facts, table, list(statuses), list(errors),
                    {name: np.asarray(columns[name], dtype) for name, dtype in ROW_FIELDS})


def _descriptor_code(result: Result, known: dict[tuple, Any]) -> int:
    key = descriptor_key(result.suite, result.name, result.metric, result.unit,
                         result.direction, result.params)
    found = known.get(key)
    if found is None:
        found = known[key] = (len(known), result)
    return found[0]


def descriptor_key(suite: str, name: str, metric: str, unit: str, direction: str,
                   params: Mapping[str, Any]) -> tuple:
    """One key per distinct presentation of a benchmark (the param types are part of the
    key: 1, 1.0 and True are equal but format differently)."""
    try:
        key = (suite, name, metric, unit, direction,
               tuple((k, type(v), v) for k, v in params.items()))
        hash(key)
    except TypeError:  # an unhashable param value: keyed by its text instead
        key = (suite, name, metric, unit, direction,
               repr(sorted(params.items(), key=lambda item: item[0])))
    return key


def _summary(result: Result) -> tuple[float, float, float, int]:
    summary = result.summary
    if summary is None:  # n -1: no summary at all
        return math.nan, math.nan, math.nan, -1
    half = summary.iqr / 2
    return summary.median, summary.median - half, summary.median + half, summary.n


@dataclass
class Columns:
    """Every result of a history. `runs` are sorted by (created_at, run_id), rows keep their
    order within a run, and `rows["run"]` indexes `runs`."""
    runs: list[dict[str, Any]]
    descriptors: list[Descriptor]
    statuses: list[str]
    errors: list[str]
    rows: dict[str, np.ndarray]

    @functools.cached_property
    def ok(self) -> np.ndarray:
        """Rows with a successful status and a summary (Result.ok)."""
        return successful(self.statuses)[self.rows["status"]] & (self.rows["n"] >= 0)


def successful(statuses: Sequence[str]) -> np.ndarray:
    """Per status code, whether the status is a success (indexable by codes of an empty
    list too)."""
    return np.asarray([s in SUCCESS_STATUSES for s in statuses] or [False], bool)


def join_blocks(blocks: Sequence[RowBlock], keep_run=lambda facts: True,
                sort: bool = True) -> Columns:
    """One Columns from blocks in reading order: a run id met again later is dropped (the
    first copy counts), as are runs `keep_run` rejects; then runs are sorted by (created_at,
    run_id) unless `sort` is False (they are already in the order wanted)."""
    seen: set[str] = set()
    taken: list[tuple[int, int]] = []  # (block, run position) of each run kept
    for b, block in enumerate(blocks):
        for position, facts in enumerate(block.runs):
            if facts["run_id"] in seen:
                continue
            seen.add(facts["run_id"])
            if keep_run(facts):
                taken.append((b, position))
    if sort:
        taken.sort(key=lambda item: (blocks[item[0]].runs[item[1]]["created_at"],
                                     blocks[item[0]].runs[item[1]]["run_id"]))
    runs = [blocks[b].runs[p] for b, p in taken]
    new_index = {key: i for i, key in enumerate(taken)}
    descriptors: dict[tuple, int] = {}
    table: list[Descriptor] = []
    statuses: dict[str, int] = {}
    errors: dict[str, int] = {}
    parts: list[dict[str, np.ndarray]] = []
    maps: dict[Any, np.ndarray] = {}  # descriptor codes of a table already joined
    for b, block in enumerate(blocks):
        if not block.size:
            continue
        run_map = np.full(len(block.runs), -1, np.int32)
        for position in range(len(block.runs)):
            run_map[position] = new_index.get((b, position), -1)
        runs_of_rows = run_map[block.rows["run"]]
        keep = runs_of_rows >= 0
        if not keep.any():
            continue
        same = block.table_id or tuple(map(id, block.descriptors))
        desc_map = maps.get(same)
        if desc_map is None:
            desc_map = maps[same] = np.asarray(
                [_join_descriptor(d, descriptors, table) for d in block.descriptors] or [0],
                np.int32)
        status_map = np.asarray([statuses.setdefault(s, len(statuses))
                                 for s in block.statuses] or [0], np.int32)
        error_map = np.asarray([errors.setdefault(e, len(errors)) for e in block.errors]
                               + [NO_ERROR], np.int32)  # index -1 stays -1
        every = bool(keep.all())  # most blocks: no copy of their rows before the join
        part = {name: column if every else column[keep] for name, column in block.rows.items()}
        part["run"] = runs_of_rows if every else runs_of_rows[keep]
        for name, codes, count in (("desc", desc_map, len(block.descriptors)),
                                   ("status", status_map, len(block.statuses)),
                                   ("error", error_map, len(block.errors))):
            if not _numbered_alike(codes, count):  # mostly they are: no copy of the rows
                part[name] = codes[part[name]]
        parts.append(part)
    if parts:
        # Each run's rows lie in one part, in order; parts taken by their first run usually
        # join already in time order (archives of past months, then this month's run
        # files), which spares sorting ten million rows.
        parts.sort(key=lambda part: int(part["run"][0]))
        rows = {name: np.concatenate([p[name] for p in parts]) for name, _ in ROW_FIELDS}
        if (rows["run"][1:] < rows["run"][:-1]).any():
            order = np.argsort(rows["run"], kind="stable")  # runs in time order, rows in place
            rows = {name: column[order] for name, column in rows.items()}
    else:
        rows = empty_rows()
    return Columns(runs, table, list(statuses), list(errors), rows)


def _numbered_alike(codes: np.ndarray, count: int) -> bool:
    """Whether a block's codes 0..count-1 keep their numbers in the join (error code -1, no
    error, always does)."""
    return bool((codes[:count] == np.arange(count)).all())


def _join_descriptor(descriptor: Descriptor, known: dict[tuple, int],
                     table: list[Descriptor]) -> int:
    key = (descriptor.suite, descriptor.name, descriptor.metric, descriptor.unit,
           descriptor.direction, descriptor.benchmark_id,
           repr([(k, type(v).__name__, v) for k, v in descriptor.params.items()]))
    found = known.get(key)
    if found is None:
        found = known[key] = len(table)
        table.append(descriptor)
    return found
