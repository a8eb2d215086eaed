"""Content keys: a short hash of everything a group of output files is made from, so a build
into an existing site can keep the files of a group whose key did not change without
rendering them again (writer.py). A key covers the inputs, not the output; the renderer's
own code and templates enter through `renderer_fingerprint`, so a new version of the tool
never reuses files an older one wrote.

Pure functions, except `renderer_fingerprint`, which reads the package's own files.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Iterable, Mapping
from functools import cache
from importlib import resources
from typing import Any

import torch_bench
from torch_bench.render.model import RunInfo, Series

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


def run_digests(runs: Iterable[RunInfo]) -> dict[str, str]:
    """One hash per run of every display fact the pages show of it."""
    return {run.run_id: digest(run) for run in runs}


def series_key(series: Series, runs: Mapping[str, str], *inputs: Any) -> str:
    """Key of one benchmark's outputs: the series (its points through their runs' digests)
    and every other input of its page and data files (`inputs`: marks, band, overlays, ...)."""
    head = (series.benchmark_id, series.key, series.suite, series.name, series.metric,
            series.unit, series.direction, sorted((k, repr(v)) for k, v in series.params.items()),
            series.last_status, series.last_error)
    hasher = hashlib.sha1(digest(renderer_fingerprint(), head, inputs).encode())
    hasher.update("\0".join(runs[p.run.run_id] for p in series.points).encode())
    # the values as exact doubles: as precise as their reprs, and much faster to hash
    hasher.update(array("d", [v for p in series.points
                              for v in (p.median, p.q1, p.q3, p.n)]).tobytes())
    return hasher.hexdigest()[:20]
