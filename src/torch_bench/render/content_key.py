"""Content keys: a short hash of everything a group of output files is made from, so a build
into an existing site can keep the files of a group whose key did not change without
rendering them again (writer.py). A key covers the inputs, not the output; the renderer's
own code and templates enter through `renderer_fingerprint`, so a new version of the tool
never reuses files an older one wrote.

Pure functions, except `renderer_fingerprint`, which reads the package's own files.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import cache
from importlib import resources
from typing import Any

import numpy as np

import torch_bench
from torch_bench.render.model import Points, RunInfo, Series

PACKAGE = "torch_bench.render"


def digest(*parts: Any) -> str:
    """A hash of the parts' reprs (dataclasses, tuples, dicts of plain values: all stable)."""
    return hashlib.sha1(repr(parts).encode("utf-8")).hexdigest()[:20]


@cache
def renderer_fingerprint() -> str:
    """A hash of the tool's version and the renderer's modules, templates and static files."""
    hasher = hashlib.sha1(torch_bench.__version__.encode())
    root = resources.files(PACKAGE)
    for folder in (root, root / "templates", root / "static"):
        for entry in sorted(folder.iterdir(), key=lambda e: e.name):
            if entry.is_file() and entry.name.endswith((".py", ".html", ".css", ".js")):
                hasher.update(entry.name.encode() + b"\0" + entry.read_bytes())
    return hasher.hexdigest()[:20]


def run_digests(runs: Sequence[RunInfo]) -> np.ndarray:
    """One 8-byte hash per run of every display fact the pages show of it."""
    return np.asarray([int(digest(run)[:16], 16) for run in runs] or [0], np.uint64)


def text_digests(texts: Sequence[str]) -> np.ndarray:
    return np.asarray([int(digest(text)[:16], 16) for text in texts] or [0], np.uint64)


def points_key(points: Points, runs: np.ndarray, *inputs: Any) -> str:
    """A hash of some points (through their runs' digests) and of `inputs`."""
    hasher = hashlib.sha1(digest(renderer_fingerprint(), inputs).encode())
    hasher.update(runs[points.run])
    for column in (points.median, points.q1, points.q3, points.n):
        hasher.update(np.ascontiguousarray(column))
    return hasher.hexdigest()[:20]


def series_key(series: Series, runs: np.ndarray, *inputs: Any, since: int = 0) -> str:
    """Key of one benchmark's outputs: the series (its points from `since` on through their
    runs' digests; the points before it must enter through `inputs`, say as the digests of
    their chunks) and every other input of its page and data files (`inputs`: marks, band,
    overlays, ...)."""
    head = (series.benchmark_id, series.key, series.suite, series.name, series.metric,
            series.unit, series.direction, sorted((k, repr(v)) for k, v in series.params.items()),
            series.last_status, series.last_error)
    return points_key(series.points[since:], runs, head, inputs, since)


CHUNK_RECORD = np.dtype([("run", "<u8"), ("median", "<f8"), ("q1", "<f8"), ("q3", "<f8"),
                         ("n", "<i4"), ("env", "<i4")])


def chunk_digests(points: Points, runs: np.ndarray, env: np.ndarray, size: int) -> list[str]:
    """A hash of each complete chunk of `size` points (their runs through the runs' digests,
    their values and environment codes): what a packed history chunk holds of one series.
    The points are laid out once as records, so each chunk is one contiguous buffer."""
    whole = len(points) // size * size
    records = np.empty(whole, CHUNK_RECORD)
    records["run"] = runs[points.run[:whole]]
    for name in ("median", "q1", "q3", "n"):
        records[name] = getattr(points, name)[:whole]
    records["env"] = env[:whole]
    buffer = records.view(np.uint8)
    step = size * CHUNK_RECORD.itemsize
    return [hashlib.sha1(buffer[start:start + step]).hexdigest()[:20]
            for start in range(0, len(buffer), step)]


def hash_arrays(*parts: Any) -> str:
    """A hash of numpy arrays (their bytes) and plain values (their reprs)."""
    hasher = hashlib.sha1(renderer_fingerprint().encode())
    for part in parts:
        if isinstance(part, np.ndarray):
            hasher.update(np.ascontiguousarray(part))
        else:
            hasher.update(repr(part).encode())
        hasher.update(b"\0")
    return hasher.hexdigest()[:20]

