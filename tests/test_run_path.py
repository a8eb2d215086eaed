"""`torch-bench run` against hostile cases, bad flags, unwritable outputs and signals."""

import argparse
import contextlib
import errno
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable

import psutil
import pytest
from rich.console import Console

from conftest import TESTS_DIR
from support.hostile_suite import ESCAPE
from test_cli import assert_usage_error
from torch_bench.cli import outputs
from torch_bench.measure.case_folders import PREFIX, owner_tag
from torch_bench.results.document import load_run
from torch_bench.results.schema import measured, new_run


@pytest.fixture
def hostile_env(tmp_path):
    """Case processes import tests/support; scratch folders go to a temporary folder of ours."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    path = os.pathsep.join(p for p in (str(TESTS_DIR), os.environ.get("PYTHONPATH", "")) if p)
    return {"PYTHONPATH": path, "TMPDIR": str(scratch), "COLUMNS": "250"}


def hostile_config(tmp_path, cases):
    """A configuration running `cases` of the hostile suite (a test suite has no flags)."""
    (tmp_path / "hostile.yaml").write_text(
        "suites: [support.hostile_suite]\n"
        f"options:\n  support.hostile_suite: {{cases: '{cases}'}}\n")
    return ["--config", "hostile.yaml", "--no-preflight"]


def gone_owner_folder(root):
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    started = psutil.Process(child.pid).create_time()
    child.wait()
    folder = root / f"{PREFIX}{owner_tag(child.pid, started)}-left"
    folder.mkdir()
    return folder


def test_bad_values_and_markup_cost_only_their_own_results(cli, tmp_path, hostile_env):
    stale = gone_owner_folder(tmp_path / "scratch")
    done = cli("run", *hostile_config(tmp_path, "nan,markup,[/some/file],ok"), "--out", "r.json",
               env=hostile_env)
    assert done.returncode == 0, done.stderr
    run = load_run(tmp_path / "r.json")
    latency = {r.name: r for r in run.results if r.metric == "latency"}
    assert latency["ok"].status == "ok" and latency["[/some/file]"].status == "ok"
    assert latency["nan"].status == "error" and "not a finite number" in latency["nan"].error
    assert latency["markup"].error == "ValueError: cannot open [/some/file] [/] [bold red]"
    assert "hostile/[/some/file]" in done.stdout and "[/some/file] [/] [bold red]" in done.stdout
    assert "hostile/markup: error ValueError: cannot open [/some/file] [/] [bold red]" \
        in done.stderr
    assert not stale.exists()
    assert not list((tmp_path / "scratch").iterdir())


@pytest.mark.parametrize("start", ["spawn", "fork"])
def test_an_unstorable_name_and_sys_exit_cost_only_their_own_case(cli, tmp_path, hostile_env,
                                                                   start):
    # a result named "a\nb", a case named "nl\nb" (its error results carry the name too)
    (tmp_path / "hostile.yaml").write_text(
        "suites: [support.hostile_suite]\n"
        'options:\n  support.hostile_suite: {cases: "ok,newline,nl\\nb,exit"}\n')
    done = cli("run", "--config", "hostile.yaml", "--no-preflight", "--processes", "1",
               "--case-start", start, "--out", "r.json", env=hostile_env)
    assert done.returncode == 0, done.stderr
    latency = {r.name: r for r in load_run(tmp_path / "r.json").results
               if r.metric == "latency"}
    assert set(latency) == {"ok", "newline", "nl\\nb", "exit"}
    assert latency["ok"].status == "ok"
    assert latency["newline"].status == "error" and latency["newline"].error.startswith(
        "the case returned a result that cannot be stored: results[0].name: 'a\\nb'")
    assert latency["nl\\nb"].status == "error" and "'nl\\nb'" in latency["nl\\nb"].error
    assert latency["exit"].status == "error"
    assert latency["exit"].error == "the case called sys.exit(0) instead of returning its results"


@pytest.mark.parametrize(("flags", "message"), [
    (["--timeout", "-1"], "--timeout: '-1' is out of range: expected 0.01 to 604,800 s"),
    (["--timeout", "0"], "--timeout: '0' is out of range"),
    (["--timeout", "nan"], "--timeout: 'nan' is not a finite number"),
    (["--memory-limit-mb", "-5"], "--memory-limit-mb: '-5' is out of range"),
    (["--max-time", "nan"], "--max-time: 'nan' is not a finite number"),
    (["--target-spread", "inf"], "--target-spread: 'inf' is not a finite number"),
    (["--warmup", "-2"], "--warmup: '-2' is out of range: expected 0 to 1,000,000 calls"),
    (["--warmup", "1" + "0" * 23], "--warmup: '1" + "0" * 23 + "' is out of range"),
    (["--threads", "1e23"], "--threads: '1e23' is not a whole number"),
    (["--device", ""], "--device: '' is not cpu, cuda or cuda:N"),
    (["--out", "."], "--out: .: is a directory"),
    (["--csv", "r.json/x.csv", "--out", "r.json"], "r.json is not a directory"),
])
def test_nonsense_flags_are_refused_before_any_case_runs(cli, tmp_path, flags, message):
    (tmp_path / "r.json").write_text("{}")
    assert_usage_error(cli("run", "--suite", "rnns", *flags), message)
    assert (tmp_path / "r.json").read_text() == "{}"


def test_a_full_disk_says_where_the_run_document_went(tmp_path, monkeypatch):
    real_save = outputs.save_run

    def full_disk(run, path):
        if str(path) == "r.json":
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_save(run, path)

    monkeypatch.setattr(outputs, "save_run", full_disk)
    run = new_run([measured("s", "case", "latency", [1.0, 2.0])])
    args = argparse.Namespace(out="r.json", export_oss=None, export_aipep=None, export_csv=None,
                              export_all_metrics=False)
    console = Console(record=True, width=300)
    status = outputs.write_outputs(run, args, console, fallback_dir=tmp_path)
    fallback = tmp_path / f"torch-bench-run-{run.run_id}.json"
    assert status == 1
    assert console.export_text().strip() == (
        f"torch-bench: error: cannot write r.json: No space left on device; "
        f"the run document was saved to {fallback} instead")
    assert load_run(fallback).results[0].samples == (1.0, 2.0)


def wait_for(condition, what, limit_s=300):
    deadline = time.monotonic() + limit_s
    while not condition():
        assert time.monotonic() < deadline, f"still waiting for {what}"
        time.sleep(0.2)


def interrupted_run(tmp_path, env, cases: str, args: tuple[str, ...], signum: int,
                    started: Callable[[int], bool], what: str):
    """`torch-bench run` of `cases`, sent `signum` once `started(its pid)`: (the process,
    its stderr, the processes under it when the signal was sent)."""
    # As from a terminal: a run started from a non-interactive shell's background job
    # inherits SIGINT ignored (POSIX) and rightly keeps ignoring it, whatever ran the tests.
    run = subprocess.Popen(
        [sys.executable, "-m", "torch_bench", "run", *hostile_config(tmp_path, cases), *args],
        cwd=tmp_path, env={**os.environ, **env}, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        wait_for(lambda: started(run.pid), what)
        case_tree = psutil.Process(run.pid).children(recursive=True)
        run.send_signal(signum)
        _, stderr = run.communicate(timeout=60)
    finally:
        run.kill()
    return run, stderr, case_tree


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_stops_the_case_and_removes_its_folder(tmp_path, hostile_env, signum, status):
    scratch = tmp_path / "scratch"
    run, stderr, case_tree = interrupted_run(
        tmp_path, hostile_env, "escape~hang", ("--out", "r.json"), signum,
        lambda pid: len(psutil.Process(pid).children(recursive=True)) >= 2,
        "the case and the process it starts")
    assert run.returncode == status, stderr
    assert "Traceback" not in stderr
    assert not list(scratch.iterdir()) and not (tmp_path / "r.json").exists()
    gone, alive = psutil.wait_procs(case_tree, timeout=10)
    assert not alive


def _command_lines_under(pid: int) -> list[str]:
    """The command-line words of every living descendant of `pid`."""
    words = []
    for child in psutil.Process(pid).children(recursive=True):
        with contextlib.suppress(psutil.Error):  # ended meanwhile, or a zombie
            words += child.cmdline()
    return words


@pytest.mark.slow
@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupted_run_writes_the_cases_that_finished(tmp_path, hostile_env, signum,
                                                             status):
    # the second case is running once its worker has started the child it hangs with
    run, stderr, case_tree = interrupted_run(
        tmp_path, hostile_env, "ok,escape~hang",
        ("--processes", "1", "--out", "r.json", "--oss", "oss.json"), signum,
        lambda pid: ESCAPE in _command_lines_under(pid),
        "the second case and the process it starts")
    assert run.returncode == status, stderr
    assert "Traceback" not in stderr
    kept = load_run(tmp_path / "r.json")
    assert {r.name for r in kept.results} == {"ok"} and all(r.ok for r in kept.results)
    assert kept.config["interrupted"] == {"signal": signal.Signals(signum).name,
                                          "cases_finished": 1, "cases_planned": 2}
    assert "ok" in (tmp_path / "oss.json").read_text()
    assert "1 of 2 cases that finished" in stderr
    _, alive = psutil.wait_procs(case_tree, timeout=10)
    assert not alive


def test_nonsense_isolation_values_in_the_configuration_are_refused(cli, tmp_path):
    (tmp_path / "c.yaml").write_text("suites: [rnns]\nisolation: {timeout_s: .nan}\n")
    assert_usage_error(cli("run", "--config", "c.yaml"),
                       "c.yaml: isolation.timeout_s: expected a finite number, got nan")
