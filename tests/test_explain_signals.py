"""`torch-bench explain` stopped by a signal leaves nothing behind: on SIGINT or SIGTERM it
stops its profiling worker, whatever the worker started, and removes its scratch folder; on
SIGKILL the kernel ends the worker, and the next explain ends the rest and removes the folder.
Real processes: the profiled case starts a grandchild that leaves its session, then hangs."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from support.hostile_suite import ESCAPE

TESTS = Path(__file__).parent
WORKER = "torch_bench.execute.profile_worker"


def alive(processes: list[psutil.Process]) -> list[psutil.Process]:
    """Those of `processes` still running (a zombie has ended: only its parent's wait is due)."""
    found = []
    for process in processes:
        try:
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                found.append(process)
        except psutil.NoSuchProcess:
            continue
    return found


def eventually(check, what: str, seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.2)


def explain_command(tmp_path: Path, cases: str) -> list[str]:
    config = tmp_path / f"{cases}.yaml"
    config.write_text("suites: [support.hostile_suite]\n"
                      f"options:\n  support.hostile_suite: {{cases: '{cases}'}}\n")
    checkout = tmp_path / "checkout"
    checkout.mkdir(exist_ok=True)
    return [sys.executable, "-m", "torch_bench", "explain", "--base", str(checkout), "--head",
            str(checkout), "--warmup", "0", "--steps", "1", "--", "--config", str(config)]


@pytest.fixture
def hanging(tmp_path):
    """An explain (its process, its worker and the worker's escaped grandchild, and its
    temporary folder) whose profiled case started that grandchild and hangs. Whatever a
    failed test left running is killed."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch),
           "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
    started = subprocess.Popen(explain_command(tmp_path, "escape~hang"), cwd=tmp_path, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    explaining = psutil.Process(started.pid)
    tree: dict[str, psutil.Process] = {}

    def grown() -> bool:
        if started.poll() is not None:
            return True
        for process in explaining.children(recursive=True):
            with contextlib.suppress(psutil.Error):
                command = process.cmdline()
                if WORKER in command or ESCAPE in command:
                    tree[WORKER if WORKER in command else ESCAPE] = process
        return ESCAPE in tree

    try:
        eventually(grown, "the profiled case never started its grandchild", seconds=300)
        assert started.poll() is None, started.stderr.read()
        assert any(scratch.iterdir())
        yield started, tree[WORKER], tree[ESCAPE], scratch, env
    finally:
        for process in alive([explaining, *tree.values()]):
            process.kill()
        started.communicate()


@pytest.mark.slow
@pytest.mark.parametrize("signum, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupted_explain_stops_its_worker_and_removes_its_folder(hanging, signum,
                                                                         status):
    started, worker, grandchild, scratch, _ = hanging
    started.send_signal(signum)
    _, err = started.communicate(timeout=120)
    assert started.returncode == status, err
    eventually(lambda: not alive([worker, grandchild]), "a process of the explain outlived it")
    assert not list(scratch.iterdir())


@pytest.mark.slow
def test_a_killed_explains_worker_dies_with_it_and_the_next_explain_ends_the_rest(hanging,
                                                                                tmp_path):
    started, worker, grandchild, scratch, env = hanging
    started.kill()  # SIGKILL: explain cannot clean up
    started.wait()
    eventually(lambda: not alive([worker]), "the profiling worker outlived its explain")
    assert alive([grandchild])  # it left the worker's session: still there
    done = subprocess.run(explain_command(tmp_path, "ok"), cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    eventually(lambda: not alive([grandchild]), "the next explain did not end the grandchild")
    assert not list(scratch.iterdir())  # and removed the folder
