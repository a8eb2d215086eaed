"""The dashboard's view of a History: runs as display facts, results grouped into series
(one per `Result.benchmark_id`), each point a run's median and interquartile range.

Pure functions; no I/O.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from torch_bench.results.schema import Result, Run
from torch_bench.store.reader import History

DEFAULT_BASELINE_BRANCHES = ("main", "master")


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
        return f"{self.gpu} · torch {self.torch}" + (f" · CUDA {self.cuda}" if self.cuda else "")


@dataclass(frozen=True)
class Point:
    run: RunInfo
    median: float
    q1: float
    q3: float
    n: int


@dataclass(frozen=True)
class Series:
    key: str  # file-name-safe, stable across builds
    benchmark_id: str
    suite: str
    name: str
    metric: str
    unit: str
    direction: str
    params: Mapping[str, Any]
    points: tuple[Point, ...]  # successful results, oldest first
    last_status: str  # status of the newest result, successful or not
    last_error: str | None = None

    @property
    def title(self) -> str:
        return f"{self.name} · {self.metric}"

    @property
    def params_text(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in sorted(self.params.items()))


@dataclass(frozen=True)
class SiteModel:
    runs: tuple[RunInfo, ...]
    series: tuple[Series, ...]  # sorted by suite, name, params, metric
    baseline_branch: str | None
    results_by_run: Mapping[str, tuple[Result, ...]] = field(default_factory=dict)
    # benchmark id of each entry of results_by_run, computed once (it hashes the params)
    ids_by_run: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def suites(self) -> list[str]:
        return sorted({s.suite for s in self.series})


_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def safe_key(text: str, readable: str = "") -> str:
    """A file-name-safe key: a readable prefix plus a hash of the full text."""
    digest = hashlib.sha1(text.encode("utf-8")).hexdigest()[:10]
    prefix = _UNSAFE.sub("-", readable).strip("-.")[:48]
    return f"{prefix}-{digest}" if prefix else digest


def run_file_key(run_id: str) -> str:
    return run_id if re.fullmatch(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,80}", run_id) else safe_key(
        run_id)


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _http_url(value: Any) -> str | None:
    text = _text(value)
    return text if text.startswith(("https://", "http://")) else None


def run_info(index: int, run: Run) -> RunInfo:
    git, env = run.git, run.env
    sha = _text(git.get("sha"))
    created = run.created_at
    return RunInfo(
        index=index,
        run_id=run.run_id,
        created_at=created,
        date=created[:16].replace("T", " "),
        sha=sha,
        short_sha=sha[:8],
        branch=_text(git.get("branch")),
        message=_text(git.get("message")).strip().split("\n", 1)[0],
        url=_http_url(git.get("url")),
        pr_number=git.get("pr_number"),
        pr_title=_text(git.get("pr_title")),
        gpu=_text(env.get("gpu_name")) or "CPU",
        torch=_text(env.get("torch")),
        cuda=_text(env.get("cuda")),
        driver=_text(env.get("driver")),
        fingerprint=_text(env.get("fingerprint")),
    )


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


def quartiles(result: Result) -> tuple[float, float]:
    """First and third quartile; centred on the median when only the IQR is stored."""
    summary = result.summary
    assert summary is not None
    return summary.median - summary.iqr / 2, summary.median + summary.iqr / 2


def build_model(history: History, baseline_branch: str | None = None) -> SiteModel:
    runs = tuple(run_info(i, run) for i, run in enumerate(history.runs))
    grouped: dict[str, list[tuple[RunInfo, Result]]] = {}
    ids_by_run: dict[str, tuple[str, ...]] = {}
    known: dict[tuple, str] = {}
    for info, run in zip(runs, history.runs, strict=True):
        ids = tuple(_benchmark_id(result, known) for result in run.results)
        ids_by_run[run.run_id] = ids
        for bid, result in zip(ids, run.results, strict=True):
            grouped.setdefault(bid, []).append((info, result))
    series = [_series(bid, entries) for bid, entries in grouped.items()]
    series.sort(key=lambda s: (s.suite, s.name, s.params_text, s.metric))
    return SiteModel(
        runs=runs,
        series=tuple(series),
        baseline_branch=baseline_branch or choose_baseline_branch(runs),
        results_by_run={run.run_id: run.results for run in history.runs},
        ids_by_run=ids_by_run,
    )


def _benchmark_id(result: Result, known: dict[tuple, str]) -> str:
    """result.benchmark_id, formatted once per distinct benchmark rather than once per result
    (the types are part of the key: 1, 1.0 and True are equal but format differently)."""
    try:
        key = (result.suite, result.name, result.metric,
               tuple((k, type(v), v) for k, v in result.params.items()))
        found = known.get(key)
    except TypeError:  # an unhashable param value
        return result.benchmark_id
    if found is None:
        found = known[key] = result.benchmark_id
    return found


def _series(bid: str, entries: list[tuple[RunInfo, Result]]) -> Series:
    first = entries[0][1]
    last = entries[-1][1]
    points = []
    for info, result in entries:
        if result.ok and math.isfinite(result.summary.median + result.summary.iqr):
            q1, q3 = quartiles(result)
            points.append(Point(info, result.summary.median, q1, q3, result.summary.n))
    return Series(
        key=safe_key(bid, f"{first.suite}-{first.name}-{first.metric}"),
        benchmark_id=bid,
        suite=first.suite,
        name=first.name,
        metric=first.metric,
        unit=first.unit,
        direction=first.direction,
        params=dict(first.params),
        points=tuple(points),
        last_status=last.status,
        last_error=last.error,
    )
