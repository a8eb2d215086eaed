"""Cases forked from a server that imported torch once (`--case-start fork`): the same
isolation as a fresh interpreter per case, statuses, timeouts, memory caps and secrets."""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import replace

import psutil
import pytest

from test_isolation import assert_each_fault_has_its_status
from torch_bench.config import build_run_config
from torch_bench.execute import forkserver
from torch_bench.runner import execute, plan_cases

pytestmark = [pytest.mark.usefixtures("child_can_import_support"),
              pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork (POSIX)")]


def run_forked(suite, cases, secret_env=(), metric="latency", **isolation):
    config = build_run_config(suites=[suite], cli_options={"cases": cases},
                              isolation=isolation, processes=1)
    config = replace(config, isolation=replace(config.isolation, case_start="fork",
                                               secret_env=secret_env))
    try:
        return {r.name: r for r in execute(plan_cases(config), config) if r.metric == metric}
    finally:
        forkserver.close_all()


def test_each_failure_gets_its_status_from_a_forked_case_and_the_run_goes_on():
    results = run_forked("support.fault_suite", "raise,ok,abort,exit,hog,ok", timeout_s=300,
                         memory_limit_mb=1024)
    assert_each_fault_has_its_status(results)


def test_the_cases_share_one_server_and_each_runs_in_its_own_process():
    memory = run_forked("support.fault_suite", "ok", metric="peak_rss", timeout_s=300)["ok"]
    assert memory.summary.median > 50  # a process with torch imported
    config = build_run_config(suites=["support.process_suite"], processes=3,
                              timing={"min_repeats": 3, "max_repeats": 3},
                              cli_options={"cases": "steady", "marker": "unused"})
    config = replace(config, isolation=replace(config.isolation, case_start="fork"))
    try:
        [result] = [r for r in execute(plan_cases(config), config) if r.metric == "latency"]
        servers = list(forkserver._SERVERS.values())
        assert len(servers) == 1 and servers[0].alive  # three processes, one server
    finally:
        forkserver.close_all()
    # The first process calibrated with its own pid: a forked process, not the server.
    assert result.extra["loops"] != servers[0].proc.pid
    assert not servers[0].alive


def test_a_hung_forked_case_is_stopped_with_every_process_it_started(monkeypatch):
    from test_isolation import escaped_processes

    # another test run on this machine may have an escaped process of its own alive
    tag = f"forkserver-test-{os.getpid()}"
    monkeypatch.setenv("HOSTILE_TAG", tag)
    results = run_forked("support.hostile_suite", "escape~hang", timeout_s=1.5)
    assert results["escape~hang"].status == "timeout"
    assert not [p for p in escaped_processes() if tag in (p.info["cmdline"] or [])]


def test_forked_cases_start_without_tokens(monkeypatch):
    secret = "s3cr3t-value-from-the-runner"
    monkeypatch.setenv("GITHUB_TOKEN", secret)
    monkeypatch.setenv("MY_PAT", "pat-" + secret)
    results = run_forked("support.hostile_suite", "leak", secret_env=("MY_PAT",))
    error = results["leak"].error
    assert "'GITHUB_TOKEN': None" in error and "'MY_PAT': None" in error
    assert secret not in error


def test_a_suite_the_server_cannot_import_falls_back_to_a_fresh_interpreter(tmp_path):
    config = build_run_config(suites=["support.fault_suite"], cli_options={"cases": "ok"},
                              processes=1)
    config = replace(config, isolation=replace(config.isolation, case_start="fork"))
    [planned] = plan_cases(config)
    broken = replace(planned, suite_ref="support.fault_suite_missing")
    from torch_bench.execute.isolation import run_isolated
    from torch_bench.suites.base import CaseContext

    ctx = CaseContext(device="cpu", policy=config.policy)
    try:
        results = run_isolated(broken.case, ctx, config.isolation, broken.suite_ref)
    finally:
        forkserver.close_all()
    # The fresh interpreter fails the same way and says why, as without a server.
    assert results[0].status in ("error", "crash") and "fault_suite_missing" in results[0].error
    assert not [p for p in psutil.process_iter(["cmdline"])
                if "torch_bench.execute.forkserver" in (p.info["cmdline"] or [])
                and p.ppid() == os.getpid()]


def test_a_forked_run_takes_torchs_facts_from_its_server_and_never_imports_torch(tmp_path):
    from test_light_imports import imported_by

    (tmp_path / "ok.yaml").write_text("suites: [support.fault_suite]\n"
                                      "options:\n  support.fault_suite: {cases: ok}\n")
    modules, done = imported_by(tmp_path, "run", "--config", "ok.yaml", "--case-start", "fork",
                                "--processes", "1", "--no-preflight", "--out", "run.json")
    assert done.returncode == 0, done.stderr
    assert "torch" not in modules  # 2-3 s of every A/B round
    env = json.loads((tmp_path / "run.json").read_text())["env"]
    probe = "import json, torch; print(json.dumps([torch.__version__, torch.get_num_threads()]))"
    version, threads = json.loads(subprocess.run([sys.executable, "-c", probe], check=True,
                                                 capture_output=True, text=True).stdout)
    assert (env["torch"], env["threads"], env["cuda_available"]) == (version, threads, False)


def test_without_a_server_torchs_facts_are_read_in_this_process():
    from torch_bench.execute.isolation import IsolationPolicy, case_torch_facts
    from torch_bench.measure.environment import torch_environment

    try:
        facts = case_torch_facts("support.fault_suite_missing",
                                 IsolationPolicy(case_start="fork"))
        assert not forkserver._SERVERS  # the failed server is dropped, not kept for the cases
    finally:
        forkserver.close_all()
    assert facts == torch_environment()


def _started_under(processes, scratch):
    """Those of `processes` started with TMPDIR=`scratch` (this test's: other test runs on
    this machine may have escaped processes of their own)."""
    mine = []
    for process in processes:
        try:
            if process.environ().get("TMPDIR") == str(scratch):
                mine.append(process)
        except psutil.Error:
            continue
    return mine


def test_a_process_left_behind_by_a_finished_forked_case_is_stopped_with_it(tmp_path,
                                                                             monkeypatch):
    from support.hostile_suite import LINGER
    from test_isolation import escaped_processes

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    tempfile.tempdir = None
    try:
        results = run_forked("support.hostile_suite", "escape,linger,ok", timeout_s=300)
        assert all(r.status == "ok" for r in results.values()), results
        # one left the case's session, the other its tree: both outlived their case
        left = _started_under(escaped_processes() + escaped_processes(LINGER), tmp_path)
        assert left == []
    finally:
        for process in _started_under(escaped_processes() + escaped_processes(LINGER),
                                      tmp_path):
            process.kill()
        tempfile.tempdir = None


def test_a_killed_forked_run_takes_its_server_and_cases_along_and_leaves_nothing(tmp_path):
    from test_isolation import _hostile_run, escaped_processes

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch)}
    run = subprocess.Popen(_hostile_run(tmp_path, "escape~hang") + ["--case-start", "fork"],
                           cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        while not _started_under(escaped_processes(), scratch) and \
                time.monotonic() < deadline:
            time.sleep(0.2)
        assert _started_under(escaped_processes(), scratch), "the case never started its child"
        tree = psutil.Process(run.pid).children(recursive=True)
        assert len(tree) >= 3  # the server, the case and the escaped grandchild
        os.kill(run.pid, signal.SIGKILL)  # not its group: only the run itself dies
        run.wait()
        # the server sees its input close, ends the case and all the case started
        assert psutil.wait_procs(tree, timeout=60)[1] == []
        assert not _started_under(escaped_processes(), scratch)
        subprocess.run(_hostile_run(tmp_path, "ok") + ["--case-start", "fork"], cwd=tmp_path,
                       env=env, check=True, capture_output=True, timeout=600)
        assert not list(scratch.iterdir())  # the next run removed the killed run's folders
    finally:
        for process in _started_under(escaped_processes(), scratch):
            process.kill()
