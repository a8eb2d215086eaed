"""What a build worked out about each series' complete history chunks (the digest that keys
its packed segment, content_key.chunk_digests, and the segment's length, for the offsets
in the series' head file), kept in the build cache so that a build which only adds runs
does not lay out, measure and hash every old point again (at 10,000 runs x 1,000
benchmarks: ten million points, about a second per build).

An entry is only ever a shortcut, never trusted blindly: it is reused when the renderer is
the same, every run it covered still has the same display facts (a hash of their digests,
in order) and the series' points it covered hash the same now (their runs and values,
read straight from the columns; a tenth of the cost of laying them out). Anything else,
including an unreadable memo, means the chunks are worked out again. The memo never
changes a result: a build with it is byte-identical to a build without it.

Pure logic; build.py reads and writes the memo file."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from torch_bench.render import data
from torch_bench.render.content_key import chunk_digests, renderer_fingerprint
from torch_bench.render.model import Points, Series
from torch_bench.render.workers import on_threads

EnvOf = Callable[[Series], np.ndarray]  # a series' data.environment_index codes


@dataclass(frozen=True)
class Chunks:
    """Of one series' complete chunks, oldest first: their digests and segment lengths."""
    digests: tuple[str, ...]
    lengths: tuple[int, ...]


def points_hash(points: Points) -> str:
    """A hash of the points' runs and values, read from their columns as they are."""
    hasher = hashlib.sha1()
    for column in (points.run, points.median, points.q1, points.q3, points.n):
        hasher.update(str(column.dtype).encode())
        hasher.update(np.ascontiguousarray(column))
    return hasher.hexdigest()[:20]


def runs_hash(run_digests: np.ndarray, count: int) -> str:
    return hashlib.sha1(np.ascontiguousarray(run_digests[:count])).hexdigest()[:20]


class ChunkMemo:
    """Chunks of each series, from the memo of the previous build where it still holds."""

    def __init__(self, stored: Mapping[str, Any] | None, run_digests: np.ndarray) -> None:
        self._run_digests = run_digests
        self._series: dict[str, dict[str, Any]] = {}
        self._kept: dict[str, dict[str, Any]] = {}
        self._hashes: dict[tuple[str, int], str] = {}  # (series key, points covered) -> hash
        if _still_valid(stored, run_digests):
            assert stored is not None
            self._series = stored["series"]

    def chunks(self, series: Series, env_of: EnvOf) -> Chunks:
        """The series' complete chunks; `env_of` is asked only for chunks not remembered."""
        whole = data.complete_chunks(series)
        known, verified = self._remembered(series, whole)
        digests, lengths = list(known.digests), list(known.lengths)
        if len(digests) < whole:
            first = len(digests) * data.CHUNK_POINTS
            env = env_of(series)
            digests += chunk_digests(series.points[first:], self._run_digests, env[first:],
                                     data.CHUNK_POINTS)
            lengths += data.chunk_lengths(series, env, first=len(lengths))
        found = Chunks(tuple(digests), tuple(lengths))
        if whole:
            covered = whole * data.CHUNK_POINTS
            same = verified if len(known.digests) == whole else None
            self._kept[series.key] = {"points": covered,
                                      "hash": same or points_hash(series.points[:covered]),
                                      "digests": list(found.digests),
                                      "lengths": list(found.lengths)}
        return found

    def _remembered(self, series: Series, whole: int) -> tuple[Chunks, str | None]:
        """The remembered chunks that still hold, and the hash of the points they cover."""
        nothing = Chunks((), ()), None
        entry = self._series.get(series.key)
        try:
            covered = int(entry["points"]) if entry else 0
            count = covered // data.CHUNK_POINTS
            if not entry or covered % data.CHUNK_POINTS or not 0 < count <= whole or \
                    entry["hash"] != self._points_hash(series, covered):
                return nothing
            digests = tuple(str(d) for d in entry["digests"])
            lengths = tuple(int(n) for n in entry["lengths"])
        except (KeyError, TypeError, ValueError):
            return nothing
        if len(digests) != count or len(lengths) != count:
            return nothing
        return Chunks(digests, lengths), entry["hash"]

    def hash_ahead(self, series_list: Sequence[Series]) -> None:
        """Hash the points each remembered entry covers, for every series at once on a few
        threads, ahead of `chunks`."""
        todo = []
        for series in series_list:
            entry = self._series.get(series.key)
            covered = entry.get("points") if isinstance(entry, dict) else None
            if isinstance(covered, int) and 0 < covered <= len(series.points):
                todo.append((series, covered))
        # on threads: hashlib lets go of the GIL while it hashes a buffer over 2 KiB
        hashes = on_threads(lambda item: points_hash(item[0].points[:item[1]]), todo)
        self._hashes = {(s.key, covered): h for (s, covered), h in zip(todo, hashes, strict=True)}

    def _points_hash(self, series: Series, covered: int) -> str:
        found = self._hashes.get((series.key, covered))
        return found if found is not None else points_hash(series.points[:covered])

    def kept(self) -> dict[str, Any]:
        """The memo to keep for the next build: this build's chunks of every series."""
        return {"renderer": renderer_fingerprint(), "chunk_points": data.CHUNK_POINTS,
                "runs": len(self._run_digests),
                "runs_hash": runs_hash(self._run_digests, len(self._run_digests)),
                "series": self._kept}


def _still_valid(stored: Mapping[str, Any] | None, run_digests: np.ndarray) -> bool:
    """Whether a stored memo was made by this renderer over runs that are still the first
    runs of the history, with the same display facts."""
    if not isinstance(stored, Mapping) or not isinstance(stored.get("series"), dict):
        return False
    runs = stored.get("runs")
    return (stored.get("renderer") == renderer_fingerprint()
            and stored.get("chunk_points") == data.CHUNK_POINTS
            and isinstance(runs, int) and 0 < runs <= len(run_digests)
            and stored.get("runs_hash") == runs_hash(run_digests, runs))


def all_chunks(series_list: Sequence[Series], memo: ChunkMemo,
               env_of: EnvOf) -> dict[str, Chunks]:
    memo.hash_ahead(series_list)
    return {series.key: memo.chunks(series, env_of) for series in series_list}
