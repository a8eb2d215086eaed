"""Making the site's changed files on every core: the plan is built once, then processes
forked from the build share it (copy-on-write) and each makes its part of the work.

A run that measured every benchmark changes every benchmark's page, so a one-run update
renders as many pages as a full build; rendering is pure Python (Jinja2), and one process
uses one core. Forking after the plan keeps the plan, the templates and the caches without
pickling anything. Each worker reports what it counted (files written, kept) through a
pipe; a worker that fails makes the build fail with the worker's own traceback, and the
caller's staging folder is then thrown away as for any failed build."""

from __future__ import annotations

import gc
import json
import os
import signal
import traceback
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

Item = TypeVar("Item")
Done = TypeVar("Done")
MIN_ITEMS_PER_WORKER = 32  # below this, forking costs more than it saves
MAX_THREADS = 4  # threads of `on_threads`


class WorkerFailed(RuntimeError):
    """A forked worker raised; the message carries its traceback."""


def default_jobs() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def on_threads(work: Callable[[Item], Done], items: Iterable[Item]) -> list[Done]:
    """`work(item)` for each item, in order, on a few threads of this process (one per core,
    at most MAX_THREADS): for work that lets go of the GIL, such as hashing large buffers
    or decoding Parquet. A worker's exception is raised here."""
    items = list(items)
    threads = min(default_jobs(), MAX_THREADS, len(items))
    if threads < 2:
        return [work(item) for item in items]
    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(work, items))


def workers_for(items: int, jobs: int) -> int:
    """How many processes `items` pieces of work are worth (1: no fork at all)."""
    if not hasattr(os, "fork"):
        return 1
    return max(1, min(jobs, items // MIN_ITEMS_PER_WORKER))


def run_shared(items: Sequence[Item], work: Callable[[Item], None],
               counts: Callable[[], dict[str, int]], jobs: int) -> list[dict[str, int]]:
    """Call `work` on every item, the items dealt out in turn over up to `jobs` processes
    (this one included). Returns each forked worker's `counts()` after its share, for the
    caller to add to its own. Raises WorkerFailed when a worker failed."""
    workers = workers_for(len(items), jobs)
    children: list[tuple[int, int]] = []  # (pid, read end of its pipe)
    if workers > 1:
        # The garbage collector of a worker would visit (and so write to, copying on write)
        # every object the build made before the fork; frozen objects it leaves alone.
        gc.freeze()
    try:
        for index in range(1, workers):
            read_end, write_end = os.pipe()
            pid = os.fork()
            if pid == 0:  # the worker: its share, its counts, and never back to the caller
                os.close(read_end)
                _work_and_exit(items[index::workers], work, counts, write_end)
            os.close(write_end)
            children.append((pid, read_end))
        for item in items[0::workers]:
            work(item)
    except BaseException:
        _stop(children)
        raise
    finally:
        gc.unfreeze()
    return _collect(children)


def _work_and_exit(share: Sequence[Item], work: Callable[[Item], None],
                   counts: Callable[[], dict[str, int]], write_end: int) -> None:
    status = 1
    try:
        try:
            for item in share:
                work(item)
            report = json.dumps({"counts": counts()})
            status = 0
        except BaseException:
            report = json.dumps({"error": traceback.format_exc()})
        with os.fdopen(write_end, "w", encoding="utf-8") as pipe:
            pipe.write(report)
    finally:
        os._exit(status)  # no atexit handlers, no finally blocks of the caller's stack


def _collect(children: list[tuple[int, int]]) -> list[dict[str, int]]:
    reports, failures = [], []
    for pid, read_end in children:
        with os.fdopen(read_end, "r", encoding="utf-8") as pipe:
            text = pipe.read()
        _, status = os.waitpid(pid, 0)
        try:
            report = json.loads(text)
        except ValueError:
            report = {"error": f"worker {pid} ended without a report (wait status {status})"}
        if "error" in report or status != 0:
            failures.append(report.get("error") or f"worker {pid}: wait status {status}")
        else:
            reports.append(report["counts"])
    if failures:
        raise WorkerFailed("a site worker failed:\n" + "\n".join(failures))
    return reports


def _stop(children: list[tuple[int, int]]) -> None:
    """The caller failed: end its workers and reap them."""
    for pid, read_end in children:
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pass
        os.close(read_end)
        try:
            os.waitpid(pid, 0)
        except OSError:
            pass
