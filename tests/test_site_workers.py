"""The site's changed files made by forked workers (render/workers.py): the same bytes as one
process makes, the work really shared, and a failing worker failing the build without
touching the site already there."""

from __future__ import annotations

import os

import pytest

from test_incremental_build import run, tree
from torch_bench.render import plan as site_plan
from torch_bench.render import workers
from torch_bench.render.build import build_site
from torch_bench.render.workers import WorkerFailed, run_shared, workers_for
from torch_bench.store.reader import History


@pytest.fixture
def fork_for_little(monkeypatch):
    """Fork even for the handful of benchmarks a test history has."""
    monkeypatch.setattr(workers, "MIN_ITEMS_PER_WORKER", 1)


def on_each_page(monkeypatch, record) -> None:
    """Call `record` with the pid of the process making each benchmark page."""
    made = site_plan.benchmark_outputs

    def recording(*args, **kwargs):
        record(os.getpid())
        return made(*args, **kwargs)
    monkeypatch.setattr(site_plan, "benchmark_outputs", recording)


def test_a_site_made_by_three_workers_equals_one_made_by_one(tmp_path, fork_for_little,
                                                              monkeypatch):
    runs = tuple(run(i) for i in range(30))
    pid_file = tmp_path / "pids"

    def record(pid: int) -> None:
        with open(pid_file, "a", encoding="utf-8") as out:
            out.write(f"{pid}\n")
    on_each_page(monkeypatch, record)
    shared = build_site(History(runs), tmp_path / "shared", jobs=3)
    pids = set(pid_file.read_text(encoding="utf-8").split())
    alone = build_site(History(runs), tmp_path / "alone", jobs=1)
    assert tree(shared) == tree(alone)
    assert len(pids) == 2  # two benchmarks: the build process and one worker made a page each
    assert str(os.getpid()) in pids


def test_a_failing_worker_fails_the_build_and_leaves_the_site(tmp_path, fork_for_little,
                                                              monkeypatch):
    runs = tuple(run(i) for i in range(30))
    site = build_site(History(runs[:20]), tmp_path / "site", jobs=1)
    before = tree(site)
    builder = os.getpid()

    def failing_in_a_worker(pid: int) -> None:
        if pid != builder:
            raise ValueError("a page that cannot be made")
    on_each_page(monkeypatch, failing_in_a_worker)
    with pytest.raises(WorkerFailed, match="ValueError: a page that cannot be made"):
        build_site(History(runs), site, jobs=2)
    assert tree(site) == before
    assert [p.name for p in tmp_path.iterdir()] == ["site"]  # no staging folder left


def test_work_is_dealt_in_turn_and_counts_come_back(tmp_path):
    done = tmp_path / "done"
    done.mkdir()

    def work(item: int) -> None:
        (done / f"{item}-{os.getpid()}").touch()
    reports = run_shared(list(range(200)), work, lambda: {"made": 1}, jobs=2)
    names = sorted(p.name for p in done.iterdir())
    assert sorted(int(n.split("-")[0]) for n in names) == list(range(200))
    own = [int(n.split("-")[0]) for n in names if n.endswith(f"-{os.getpid()}")]
    assert sorted(own) == list(range(0, 200, 2))
    assert reports == [{"made": 1}]


def test_little_work_is_not_forked():
    assert workers_for(10, jobs=8) == 1
    assert workers_for(workers.MIN_ITEMS_PER_WORKER * 3, jobs=2) == 2
    assert workers_for(10_000, jobs=1) == 1


def test_workers_leave_what_the_build_made_to_the_parent_and_it_collectable_again(
        fork_for_little):
    """Before forking, the build's objects are frozen out of the garbage collector's reach (a
    worker's collections would otherwise write to every one of them, copying the pages they
    share); afterwards the build's objects can be collected again."""
    import gc

    seen: list[int] = []
    reports = run_shared(list(range(4)), lambda item: seen.append(gc.get_freeze_count()),
                         lambda: {"frozen": min(seen)}, jobs=2)
    assert reports[0]["frozen"] > 0  # the worker ran with the build's objects frozen
    assert gc.get_freeze_count() == 0
