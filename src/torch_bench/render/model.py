"""The dashboard's view of a History: runs as display facts, results grouped into series
(one per `Result.benchmark_id`), each point a run's median and interquartile range.

Pure functions; no I/O.
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import math
import operator
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from torch_bench.render.columns import NO_ERROR, Columns, block_of_runs, join_blocks, run_facts
from torch_bench.results.schema import Run
from torch_bench.store.reader import History

DEFAULT_BASELINE_BRANCHES = ("main", "master")
NOT_RECORDED = "not recorded"  # the environment of a run that recorded none (an import)
MINUTE_LIMIT = 2**30 - 1


class ChangePointLike(Protocol):
    index: int
    before: float
    after: float
    ratio: float


# Finds change points in a sequence of values (oldest first); the analysis module provides
# the real one, the dashboard works without it.
ChangePointFinder = Callable[[Sequence[float]], Sequence[ChangePointLike]]


def no_change_points(values: Sequence[float]) -> list[ChangePointLike]:
    return []


@dataclass(frozen=True)
class RunInfo:
    index: int  # position in the history, oldest first
    run_id: str
    created_at: str
    date: str  # YYYY-MM-DD HH:MM
    sha: str
    short_sha: str
    branch: str
    message: str  # first line of the commit message
    url: str | None  # http(s) commit URL, or None
    pr_number: Any
    pr_title: str
    gpu: str
    torch: str
    cuda: str
    driver: str
    fingerprint: str

    @property
    def environment(self) -> str:
        """What the run recorded of where it ran; torch and CUDA only when it recorded them
        (an imported history of a Rust or Go project never saw torch)."""
        if not (self.torch or self.cuda or self.fingerprint) and self.gpu == "CPU":
            return NOT_RECORDED
        return self.gpu + (f" · torch {self.torch}" if self.torch else "") + (
            f" · CUDA {self.cuda}" if self.cuda else "")


@dataclass(frozen=True)
class Point:
    run: RunInfo
    median: float
    q1: float
    q3: float
    n: int


class RunTable:
    """The runs of a history (oldest first) with the facts the pages filter points by as
    arrays: a code per run for its branch and for its environment."""

    def __init__(self, infos: Iterable[RunInfo]) -> None:
        self.infos = tuple(infos)
        branches: dict[str, int] = {}
        self.branch = np.asarray([branches.setdefault(r.branch, len(branches))
                                  for r in self.infos], np.int32)
        self.branch_names = list(branches)
        self._codes = {name: code for code, name in enumerate(self.branch_names)}

    def branch_code(self, branch: str | None) -> int:
        return self._codes.get(branch, -1) if branch is not None else -1

    @functools.cached_property
    def environment(self) -> tuple[np.ndarray, list[tuple[str, str, str]]]:
        """A code per run for (environment label, gpu, torch), and the distinct ones."""
        seen: dict[tuple[str, str, str], int] = {}
        codes = [seen.setdefault((r.environment, r.gpu, r.torch), len(seen)) for r in self.infos]
        return np.asarray(codes, np.int32), list(seen)

    @functools.cached_property
    def minutes(self) -> np.ndarray:
        """When each run was made, in whole minutes since 1970-01-01 UTC (what the date axis
        and the hover text need; the run tables keep the exact time). A date without an
        offset is taken as UTC; one that cannot be read is 0."""
        return np.asarray([minute_of(r.created_at) for r in self.infos], np.int64)

    @functools.cached_property
    def versions(self) -> np.ndarray:
        """A code per run for the versions whose change is marked on a trend."""
        seen: dict[tuple[str, str, str], int] = {}
        return np.asarray([seen.setdefault((r.torch, r.cuda, r.driver), len(seen))
                           for r in self.infos], np.int32)

    @functools.cached_property
    def version_change_texts(self) -> dict[tuple[int, int], str]:
        """Memo of markers.env_changes: the text of a change between two `versions` codes."""
        return {}


def minute_of(created_at: str) -> int:
    try:
        moment = datetime.datetime.fromisoformat(created_at)
    except (TypeError, ValueError):
        return 0
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.timezone.utc)
    try:
        minute = int(moment.timestamp()) // 60
    except (OverflowError, OSError, ValueError):
        return 0
    # within +-(2**30 - 1) (years 0 to about 4000), so that any two differ by an int32
    return max(-MINUTE_LIMIT, min(MINUTE_LIMIT, minute))


class Points(Sequence[Point]):
    """A series' points as columns (`run`: positions in the RunTable, oldest first); a Point
    object is made only for the points looked at, and slices are views."""

    __slots__ = ("table", "run", "median", "q1", "q3", "n", "_derived")

    def __init__(self, table: RunTable, run: np.ndarray, median: np.ndarray, q1: np.ndarray,
                 q3: np.ndarray, n: np.ndarray) -> None:
        self.table, self.run, self.median, self.q1, self.q3, self.n = (
            table, run, median, q1, q3, n)
        self._derived: dict[Any, Any] = {}

    @classmethod
    def of(cls, points: Sequence[Point]) -> Points:
        """Points from Point objects (each with its own run)."""
        return cls(RunTable(p.run for p in points), np.arange(len(points), dtype=np.int32),
                   *(np.asarray([getattr(p, f) for p in points], np.float64)
                     for f in ("median", "q1", "q3")),
                   np.asarray([p.n for p in points], np.int32))

    def __len__(self) -> int:
        return len(self.run)

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return Points(self.table, self.run[index], self.median[index], self.q1[index],
                          self.q3[index], self.n[index])
        i = operator.index(index)
        return Point(self.table.infos[int(self.run[i])], float(self.median[i]),
                     float(self.q1[i]), float(self.q3[i]), int(self.n[i]))

    def __iter__(self) -> Iterator[Point]:
        for i in range(len(self.run)):
            yield self[i]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Points) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def derived(self, key: Any, make: Callable[[], Any]) -> Any:
        """`make()`, computed once per Points object (they do not change): a page asks the
        same things of a series several times. Arrays come back read-only."""
        if key not in self._derived:
            value = make()
            if isinstance(value, np.ndarray):
                value.flags.writeable = False
            self._derived[key] = value
        return self._derived[key]

    def branch_codes(self) -> np.ndarray:
        return self.table.branch[self.run]

    def on_branch(self, branch: str | None, end: int | None = None) -> np.ndarray:
        """Positions of the points (before `end`) measured on `branch`."""
        code = self.table.branch_code(branch)
        positions = self.derived(("on_branch", code),
                                 lambda: np.flatnonzero(self.branch_codes() == code))
        if end is None:
            return positions
        if end < 0:
            end += len(self.run)
        return positions[:np.searchsorted(positions, max(end, 0))]

    def last_on_branch(self, branch: str | None, end: int | None = None) -> Point | None:
        found = self.on_branch(branch, end)
        return self[int(found[-1])] if found.size else None

    def branches(self) -> list[str]:
        return [self.table.branch_names[c] for c in np.unique(self.branch_codes())]


@dataclass(frozen=True, eq=False)
class Series:
    key: str  # file-name-safe, stable across builds
    benchmark_id: str
    suite: str
    name: str
    metric: str
    unit: str
    direction: str
    params: Mapping[str, Any]
    points: Points  # successful results, oldest first (a tuple of Points is converted)
    last_status: str  # status of the newest result, successful or not
    last_error: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.points, Points):
            object.__setattr__(self, "points", Points.of(tuple(self.points)))

    @property
    def title(self) -> str:
        return f"{self.name} · {self.metric}"

    @property
    def params_text(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in sorted(self.params.items()))


@dataclass(frozen=True)
class RunValue:
    series: Series
    status: str
    median: float | None  # None unless the result succeeded with a summary


@dataclass(frozen=True, eq=False)
class SiteModel:
    runs: tuple[RunInfo, ...]
    series: tuple[Series, ...]  # sorted by suite, name, params, metric
    baseline_branch: str | None
    columns: Columns | None = None  # every result, for the views of one run
    row_series: np.ndarray | None = None  # per row of `columns`: position in `series`

    def suites(self) -> list[str]:
        return sorted({s.suite for s in self.series})

    def facts(self, run: RunInfo) -> Mapping[str, Any]:
        """What the history says of a run besides its display facts (run_facts)."""
        if self.columns is None or run.index >= len(self.columns.runs):
            return {}
        return self.columns.runs[run.index]

    @functools.cached_property
    def _run_bounds(self) -> np.ndarray:
        assert self.columns is not None
        return np.searchsorted(self.columns.rows["run"], np.arange(len(self.runs) + 1))

    def run_rows(self, run: RunInfo) -> slice:
        """The rows of `columns` holding the results of `run`, in document order."""
        if self.columns is None or self.row_series is None:
            return slice(0, 0)
        bounds = self._run_bounds
        return slice(int(bounds[run.index]), int(bounds[run.index + 1]))

    def run_values(self, run: RunInfo) -> list[RunValue]:
        """Every result of `run`, in document order."""
        rows = self.run_rows(run)
        if rows.stop <= rows.start:
            return []
        assert self.columns is not None and self.row_series is not None
        cols = self.columns.rows
        ok = self.columns.ok[rows]
        return [RunValue(self.series[int(s)], self.columns.statuses[int(st)],
                         float(m) if good and math.isfinite(m) else None)
                for s, st, m, good in zip(self.row_series[rows], cols["status"][rows],
                                          cols["median"][rows], ok, strict=True)]


_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def safe_key(text: str, readable: str = "") -> str:
    """A file-name-safe key: a readable prefix plus a hash of the full text."""
    digest = hashlib.sha1(text.encode("utf-8")).hexdigest()[:10]
    prefix = _UNSAFE.sub("-", readable).strip("-.")[:48]
    return f"{prefix}-{digest}" if prefix else digest


def run_file_key(run_id: str) -> str:
    return run_id if re.fullmatch(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,80}", run_id) else safe_key(
        run_id)


def choose_baseline_branch(runs: Iterable[RunInfo],
                           preferred: Sequence[str] = DEFAULT_BASELINE_BRANCHES) -> str | None:
    counts: dict[str, int] = {}
    for run in runs:
        if run.branch:
            counts[run.branch] = counts.get(run.branch, 0) + 1
    for name in preferred:
        if name in counts:
            return name
    return max(counts, key=lambda b: (counts[b], b)) if counts else None


def build_model(history: History | Columns, baseline_branch: str | None = None) -> SiteModel:
    """The model of a History (its run order kept) or of Columns read from a build cache."""
    if isinstance(history, History):
        columns = join_blocks([block_of_runs(history.runs)], sort=False)
    else:
        columns = history
    infos = tuple(run_info_of(i, facts) for i, facts in enumerate(columns.runs))
    table = RunTable(infos)
    rows = columns.rows
    bid_codes: dict[str, int] = {}
    desc_bid = np.asarray([bid_codes.setdefault(d.benchmark_id, len(bid_codes))
                           for d in columns.descriptors] or [0], np.int32)
    row_bid = desc_bid[rows["desc"]] if len(rows["desc"]) else np.zeros(0, np.int32)
    ok = columns.ok
    plotted = ok & np.isfinite(rows["median"] + (rows["q3"] - rows["q1"]))
    grouped = group_rows(rows, row_bid, len(bid_codes), plotted, POINT_FIELDS)
    made = []
    for code in range(len(bid_codes)):
        lo, hi = int(grouped.bounds[code]), int(grouped.bounds[code + 1])
        points = Points(table, *(grouped.columns[f][lo:hi] for f in POINT_FIELDS))
        made.append((code, _series(columns, int(grouped.first[code]), int(grouped.last[code]),
                                   points)))
    made.sort(key=lambda item: (item[1].suite, item[1].name, item[1].params_text,
                                item[1].metric))
    position = np.zeros(len(bid_codes), np.int32)
    for i, (code, _) in enumerate(made):
        position[code] = i
    return SiteModel(runs=infos, series=tuple(series for _, series in made),
                     baseline_branch=baseline_branch or choose_baseline_branch(infos),
                     columns=columns, row_series=position[row_bid])


POINT_FIELDS = ("run", "median", "q1", "q3", "n")


@dataclass(frozen=True)
class GroupedRows:
    """Rows grouped by benchmark code: `first`/`last`, each code's first and last row (in
    time order); `columns`, the fields of the chosen rows, code after code, in time order
    within each; code c's are `columns[f][bounds[c]:bounds[c + 1]]`."""

    first: np.ndarray
    last: np.ndarray
    columns: dict[str, np.ndarray]
    bounds: np.ndarray


def group_rows(rows: Mapping[str, np.ndarray], codes: np.ndarray, count: int,
               chosen: np.ndarray, fields: Sequence[str]) -> GroupedRows:
    """Group the rows (in time order) by their code in 0..count-1 (each code has a row),
    keeping the `chosen` ones' `fields`."""
    layout = grid_layout(codes, count)
    if layout is not None:
        return _group_grid(rows, layout, chosen, fields)
    # per code, rows stay in time order; NumPy sorts 16-bit codes by radix, 3x faster
    narrow = codes.astype(np.uint16) if count <= 1 << 16 else codes
    order = np.argsort(narrow, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(count + 1))
    kept = order[chosen[order]]
    return GroupedRows(order[bounds[:-1]], order[bounds[1:] - 1],
                       {f: rows[f][kept] for f in fields},
                       np.searchsorted(codes[kept], np.arange(count + 1)))


def grid_layout(codes: np.ndarray, count: int) -> np.ndarray | None:
    """When every run holds each code once, in the same order (a suite run whole each time:
    the common case), the rows form a runs x codes grid: the codes of one run, else None."""
    if not count or len(codes) % count:
        return None
    first = codes[:count]
    if not (np.bincount(first, minlength=count) == 1).all():
        return None
    return first if (codes.reshape(-1, count) == first).all() else None


GRID_BLOCK = 256  # runs transposed at a time: a block of rows stays in the CPU's cache


def _group_grid(rows: Mapping[str, np.ndarray], layout: np.ndarray, chosen: np.ndarray,
                fields: Sequence[str]) -> GroupedRows:
    """group_rows on a grid: a blocked transpose, which spares sorting and gathering ten
    million rows one by one (each benchmark's rows lie a whole run apart)."""
    count = len(layout)
    column_of = np.argsort(layout)  # the grid column of each code

    def by_code(values: np.ndarray) -> np.ndarray:
        grid = values.reshape(-1, count)
        out = np.empty((count, len(grid)), values.dtype)
        for start in range(0, len(grid), GRID_BLOCK):
            out[:, start:start + GRID_BLOCK] = grid[start:start + GRID_BLOCK, column_of].T
        return out

    keep = by_code(chosen)
    runs = len(chosen) // count
    return GroupedRows(column_of, (runs - 1) * count + column_of,
                       {f: by_code(rows[f])[keep] for f in fields},
                       np.concatenate([[0], np.cumsum(keep.sum(axis=1))]))


def run_info_of(index: int, facts: Mapping[str, Any]) -> RunInfo:
    created = facts["created_at"]
    return RunInfo(index=index, run_id=facts["run_id"], created_at=created,
                   date=created[:16].replace("T", " "), sha=facts["sha"],
                   short_sha=facts["sha"][:8], branch=facts["branch"], message=facts["message"],
                   url=facts["url"], pr_number=facts["pr_number"], pr_title=facts["pr_title"],
                   gpu=facts["gpu"], torch=facts["torch"], cuda=facts["cuda"],
                   driver=facts["driver"], fingerprint=facts["fingerprint"])


def run_info(index: int, run: Run) -> RunInfo:
    return run_info_of(index, run_facts(run))


def _series(columns: Columns, first: int, last: int, points: Points) -> Series:
    descriptor = columns.descriptors[int(columns.rows["desc"][first])]
    error = int(columns.rows["error"][last])
    bid = descriptor.benchmark_id
    return Series(
        key=safe_key(bid, f"{descriptor.suite}-{descriptor.name}-{descriptor.metric}"),
        benchmark_id=bid,
        suite=descriptor.suite,
        name=descriptor.name,
        metric=descriptor.metric,
        unit=descriptor.unit,
        direction=descriptor.direction,
        params=dict(descriptor.params),
        points=points,
        last_status=columns.statuses[int(columns.rows["status"][last])],
        last_error=None if error == NO_ERROR else columns.errors[error],
    )
