"""Build the dashboard from a history: model, plan, write.

Change points are searched over each benchmark's whole history. The analysis module remembers
the answer for every part of a history that can no longer change; that memo is kept in the
site itself (paths.CHANGE_POINT_MEMO) and read back by the next build into the same folder, so
adding a run costs one short search per benchmark. The memo never changes a result: a build
with it is byte-identical to a build without it.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Callable, Sequence
from importlib import import_module
from pathlib import Path
from typing import Any

from torch_bench.render import paths
from torch_bench.render.model import ChangePointFinder, build_model, no_change_points
from torch_bench.render.plan import plan_site, run_payloads
from torch_bench.render.writer import write_site
from torch_bench.store.reader import History

CHANGE_POINT_MODULE = "torch_bench.analyze.changepoints"
# 0: change points are searched in the whole history (a positive N: the newest N runs only).
CHANGE_POINT_WINDOW = 0


def default_change_point_finder() -> ChangePointFinder:
    """The analysis module's finder when it is installed; otherwise none are marked."""
    try:
        module = import_module(CHANGE_POINT_MODULE)
    except ImportError:
        return no_change_points
    return getattr(module, "find_change_points", no_change_points)


def remembering_finder(out: Path) -> tuple[ChangePointFinder, Callable[[], Any]] | None:
    """A whole-history finder primed with the memo of the site at `out` (if any), and a
    function giving the memo to store with the new site; None without the analysis module."""
    try:
        module = import_module(CHANGE_POINT_MODULE)
        search, memo_type = module.find_change_points_whole, module.ChangePointMemo
    except (ImportError, AttributeError):
        return None
    memo = memo_type(read_memo(out / paths.CHANGE_POINT_MEMO))

    def finder(values: Sequence[float]):
        return search(values, memo)

    return finder, memo.kept


def read_memo(path: Path) -> dict[str, list[int]]:
    """The stored memo; empty when missing or unreadable (it is only ever a shortcut)."""
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(entries, dict):
        return {}
    return {k: v for k, v in entries.items()
            if isinstance(v, list) and all(isinstance(i, int) for i in v)}


def build_site(history: History, out: str | os.PathLike, *,
               finder: ChangePointFinder | None = None, baseline_branch: str | None = None,
               change_point_window: int | None = CHANGE_POINT_WINDOW,
               keep: tuple[str, ...] = (),
               progress: Callable[[str], None] = lambda message: None) -> Path:
    model = build_model(history, baseline_branch)
    progress(f"{len(model.runs)} runs, {len(model.series)} benchmarks")
    remembered = None
    if finder is None and not change_point_window:
        remembered = remembering_finder(Path(out))
    if remembered is not None:
        finder = remembered[0]
    plan = plan_site(model, finder or default_change_point_finder(), change_point_window or None)
    progress("change points searched")
    extra = run_payloads(model, plan)
    if remembered is not None:
        extra = itertools.chain([(paths.CHANGE_POINT_MEMO, remembered[1]())], extra)
    return write_site(plan, extra, out, progress, keep)
