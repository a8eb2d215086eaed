"""Build the dashboard from a history: model, plan, write."""

from __future__ import annotations

import os
from collections.abc import Callable
from importlib import import_module
from pathlib import Path

from torch_bench.render.model import ChangePointFinder, build_model, no_change_points
from torch_bench.render.plan import plan_site, run_payloads
from torch_bench.render.writer import write_site
from torch_bench.store.reader import History

CHANGE_POINT_MODULE = "torch_bench.analyze.changepoints"
# Change points are searched in this many newest baseline-branch runs of each benchmark:
# enough for a trend's recent history, and it keeps the build's cost from growing with it.
CHANGE_POINT_WINDOW = 60


def default_change_point_finder() -> ChangePointFinder:
    """The analysis module's finder when it is installed; otherwise none are marked."""
    try:
        module = import_module(CHANGE_POINT_MODULE)
    except ImportError:
        return no_change_points
    return getattr(module, "find_change_points", no_change_points)


def build_site(history: History, out: str | os.PathLike, *,
               finder: ChangePointFinder | None = None, baseline_branch: str | None = None,
               change_point_window: int | None = CHANGE_POINT_WINDOW,
               keep: tuple[str, ...] = (),
               progress: Callable[[str], None] = lambda message: None) -> Path:
    model = build_model(history, baseline_branch)
    progress(f"{len(model.runs)} runs, {len(model.series)} benchmarks")
    plan = plan_site(model, finder or default_change_point_finder(), change_point_window)
    progress("change points searched")
    return write_site(plan, run_payloads(model, plan), out, progress, keep)
