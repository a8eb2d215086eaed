"""Build the dashboard from a history: model, plan, write.

Change points are searched over each benchmark's whole history. The analysis module remembers
the answer for every part of a history that can no longer change; that memo is kept in the
site itself (paths.CHANGE_POINT_MEMO) and read back by the next build into the same folder, so
adding a run costs one short search per benchmark. The memo never changes a result: a build
with it is byte-identical to a build without it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from importlib import import_module
from pathlib import Path
from typing import Any

from torch_bench.fileio import write_bytes_atomic
from torch_bench.render import paths
from torch_bench.render.columns import Columns
from torch_bench.render.history_cache import CACHE_NAMES, load_columns
from torch_bench.render.model import ChangePointFinder, build_model, no_change_points
from torch_bench.render.packs import json_bytes
from torch_bench.render.plan import plan_site
from torch_bench.render.size_guard import SizeLimit
from torch_bench.render.writer import SITE_MARKER, write_site
from torch_bench.store.notes import Notes, read_notes
from torch_bench.store.previous_site import PreviousSite
from torch_bench.store.reader import EVERY_RUN, History, RunFilter

CHANGE_POINT_MODULE = "torch_bench.analyze.changepoints"
MEMO_NAME = "changepoints.json"  # in the build-cache folder (paths.CHANGE_POINT_MEMO)
CHUNK_MEMO_NAME = "chunks.json"  # in the build-cache folder (paths.CHUNK_MEMO)
# 0: change points are searched in the whole history (a positive N: the newest N runs only).
CHANGE_POINT_WINDOW = 0


def default_change_point_finder() -> ChangePointFinder:
    """The analysis module's finder when it is installed; otherwise none are marked."""
    try:
        module = import_module(CHANGE_POINT_MODULE)
    except ImportError:
        return no_change_points
    return getattr(module, "find_change_points", no_change_points)


def remembering_finder(cache: Path) -> tuple[ChangePointFinder, Callable[[], Any]] | None:
    """A whole-history finder primed with the memo in the build-cache folder `cache` (if
    any), and a function giving the memo to keep; None without the analysis module."""
    try:
        module = import_module(CHANGE_POINT_MODULE)
        search, memo_type = module.find_change_points_whole, module.ChangePointMemo
    except (ImportError, AttributeError):
        return None
    memo = memo_type(read_memo(cache / MEMO_NAME))

    def finder(values: Sequence[float]):
        return search(values, memo)

    many = getattr(module, "find_change_points_many", None)
    if many is not None:  # every benchmark's new points searched in one batched call
        finder.many = lambda histories: many(histories, memo)  # type: ignore[attr-defined]
    return finder, memo.kept


def _read_json_object(path: Path) -> dict[str, Any] | None:
    """A JSON object stored in the build cache; None when missing or unreadable (the cache
    is only ever a shortcut)."""
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return stored if isinstance(stored, dict) else None


def read_chunk_memo(path: Path) -> dict[str, Any] | None:
    """The stored chunk memo (render/chunk_memo.py checks what it holds)."""
    return _read_json_object(path)


def read_memo(path: Path) -> dict[str, list[int]]:
    """The stored change-point memo; empty when missing or unreadable."""
    entries = _read_json_object(path) or {}
    return {k: v for k, v in entries.items()
            if isinstance(v, list) and all(isinstance(i, int) for i in v)}


def build_site(history: History | Columns, out: str | os.PathLike, *,
               finder: ChangePointFinder | None = None, baseline_branch: str | None = None,
               change_point_window: int | None = CHANGE_POINT_WINDOW,
               keep: tuple[str, ...] = (),
               progress: Callable[[str], None] = lambda message: None,
               moved: Mapping[str, Path] | None = None, carried: Iterable[str] = (),
               cache_dir: Path | None = None, size_limit: SizeLimit | None = None,
               notes: Notes | None = None, jobs: int | None = None,
               onto: PreviousSite | None = None,
               on_carried: Callable[[list[str]], None] = lambda paths: None) -> Path:
    """Build the site into `out`. The build cache (change-point memo) is kept in the site,
    or in `cache_dir` when given (then `moved` files go there too, after the site is
    written). A site over `size_limit` (default: GitHub Pages') is refused. `jobs`:
    processes rendering the changed files (default: one per core). `onto`, `on_carried`: a
    site this one will be published over, whose unchanged files are not written but listed
    (writer.py)."""
    model = build_model(history, baseline_branch)
    progress(f"{len(model.runs)} runs, {len(model.series)} benchmarks")
    memo_folder = cache_dir or Path(out) / paths.BUILD_CACHE_DIR
    remembered = None
    if finder is None and not change_point_window:
        remembered = remembering_finder(memo_folder)
    if remembered is not None:
        finder = remembered[0]
    plan = plan_site(model, finder or default_change_point_finder(), change_point_window or None,
                     notes, read_chunk_memo(memo_folder / CHUNK_MEMO_NAME))
    progress("change points searched")
    memo = remembered[1]() if remembered is not None else None
    if cache_dir is None:
        extra = [(paths.CHANGE_POINT_MEMO, memo)] if memo is not None else []
        extra.append((paths.CHUNK_MEMO, plan.chunk_memo))
        return write_site(plan, extra, out, progress, keep, moved, carried, size_limit, jobs,
                          onto, on_carried)
    site = write_site(plan, [], out, progress, keep, size_limit=size_limit, jobs=jobs,
                      onto=onto, on_carried=on_carried)
    cache_dir.mkdir(parents=True, exist_ok=True)
    if memo is not None:
        write_bytes_atomic(cache_dir / MEMO_NAME, json_bytes(memo))
    write_bytes_atomic(cache_dir / CHUNK_MEMO_NAME, json_bytes(plan.chunk_memo))
    for name, file in (moved or {}).items():
        os.replace(file, cache_dir / name)
    return site


def build_site_from_data(data: str | os.PathLike, out: str | os.PathLike, *,
                         where: RunFilter = EVERY_RUN,
                         problem: Callable[[str], None] = lambda message: None,
                         progress: Callable[[str], None] = lambda message: None,
                         cache_dir: Path | None = None, **options: Any) -> Path:
    """Build the site of a data folder, reading only the data files the build cache does not
    already hold (history_cache.py): the cache of the site at `out`, kept there, or the one
    in `cache_dir` when given (a folder of its own, say one CI restores between jobs). The
    run notes (store/notes.py) are read whole each time: they are few and small."""
    notes, bad_notes = read_notes(Path(data))
    for message in bad_notes:
        problem(message)
    options = {"notes": notes, **options}
    if cache_dir is not None:
        history = load_columns(data, cache_dir, where, progress,
                               scratch_in=cache_dir.resolve().parent)
        try:
            for message in history.problems:
                problem(message)
            progress(f"read {history.files_read} data files, {history.files_cached} from "
                     f"the cache")
            return build_site(history.columns, out, progress=progress, cache_dir=cache_dir,
                              moved=history.cache_files, **options)
        finally:
            history.discard()
    cache_dir = Path(out) / paths.BUILD_CACHE_DIR
    previous = cache_dir if (Path(out) / SITE_MARKER).is_file() else None
    history = load_columns(data, previous, where, progress,
                           scratch_in=Path(out).resolve().parent)
    for message in history.problems:
        problem(message)
    progress(f"read {history.files_read} data files, {history.files_cached} from the cache")
    try:
        written = history.cache_files or {}
        carried = [f"{paths.BUILD_CACHE_DIR}/{name}" for name in CACHE_NAMES
                   if name not in written]
        moved = {f"{paths.BUILD_CACHE_DIR}/{name}": file for name, file in written.items()}
        return build_site(history.columns, out, progress=progress, carried=carried,
                          moved=moved, **options)
    finally:
        history.discard()
