"""`torch-bench bisect` on a real git repository of 8 commits, measuring a real torch model
in every commit's own worktree. (Each run of a step starts processes that import torch, so a
step costs seconds: 8 commits, 3 steps when nothing is ambiguous, show the search as well as
16 would.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from test_action_ab import git

# A linear layer timed by torch-bench's timer (the process CPU clock on one thread: other
# processes' load is not counted). From the slow commit on, the layer is 4 times wider: 16
# times the work. (A smaller layer's time varies by tens of percent from process to process.)
SUITE = '''
import torch
from torch_bench.measure.timer import measure
from torch_bench.results.schema import measured
from torch_bench.suites.base import CaseSpec, Output, Suite

WIDTH, ROWS = {width}, {rows}


def plan(options, device):
    return [CaseSpec(suite="tinymm", name="linear", params={{}}, outputs=(Output("latency"),))]


def run_case(case, ctx):
    torch.manual_seed(0)
    layer = torch.nn.Linear(WIDTH, WIDTH)
    x = torch.randn(ROWS, WIDTH)
    with torch.no_grad():
        timing = measure(lambda: layer(x), ctx.policy, ctx.clock(), metric="latency")
    return [measured(case.suite, case.name, "latency", timing.samples_ms,
                     extra=timing.extra())]


SUITE = Suite(name="tinymm", description="a linear layer", options=(), plan=plan,
              run_case=run_case, record_memory=False)
'''
FAST, SLOW = {"width": 128, "rows": 64}, {"width": 512, "rows": 64}
RUN_ARGS = ["--", "--suite", "tinymm.suite", "--no-preflight", "--threads", "1",
            "--max-time", "0.05", "--min-repeats", "5"]


def commit(repo, message, author="Dev <dev@example.com>", suite=None, note=None):
    if suite is not None:
        (repo / "tinymm").mkdir(exist_ok=True)
        (repo / "tinymm" / "__init__.py").write_text("")
        (repo / "tinymm" / "suite.py").write_text(SUITE.format(**suite))
    if note is not None:
        (repo / "NOTES.md").write_text(note)
    name, email = author[:-1].split(" <")
    git(repo, "add", "-A")
    git(repo, "-c", f"user.name={name}", "-c", f"user.email={email}", "commit", "-q",
        "-m", message)
    return git(repo, "rev-parse", "HEAD")


def project(tmp_path, slow_at, commits=8):
    """`commits` commits: the first with the fast layer, then notes, and the wide layer at
    `slow_at` (None: never). The commits, oldest first."""
    repo = tmp_path / "project"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    shas = [commit(repo, "The suite", suite=FAST)]
    for i in range(1, commits):
        if i == slow_at:
            shas.append(commit(repo, "Widen the layer | <b>@team</b>",
                               author="Ada Lovelace <ada@example.com>", suite=SLOW))
        else:
            shas.append(commit(repo, f"Note {i}", note=f"note {i}\n"))
    return repo, shas


def bisect_cli(cwd, *args, env=None):
    """`torch-bench bisect` in a subprocess; a search of several steps on a loaded 2-core
    machine can take longer than the `cli` fixture waits."""
    return subprocess.run([sys.executable, "-m", "torch_bench", "bisect", *args], cwd=cwd,
                          capture_output=True, text=True, env={**os.environ, **(env or {})},
                          timeout=3600)


def worktrees(repo):
    listed = git(repo, "worktree", "list", "--porcelain")
    return [line for line in listed.splitlines() if line.startswith("worktree ")]


@pytest.mark.slow
def test_the_slow_commit_of_eight_is_found_in_at_most_four_steps(tmp_path):
    repo, shas = project(tmp_path, slow_at=5)
    # 7 candidates: 3 steps (log2 8) when nothing is ambiguous, one more allowed for noise.
    done = bisect_cli(tmp_path, "--good", shas[0], "--bad", shas[-1], "--repo", str(repo),
                      "--rounds", "2", "--max-steps", "4", "--min-effect", "0.3",
                      "--json", "bisect.json", "--markdown", "bisect.md", "--out-dir", "steps",
                      *RUN_ARGS, env={"GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md")})
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"first bad commit {shas[5][:10]} (found in ")
    assert "Widen the layer" in done.stdout and "Ada Lovelace" in done.stdout
    found = json.loads((tmp_path / "bisect.json").read_text())
    assert found["ending"] == "found" and found["first_bad"] == shas[5]
    assert found["first_bad_commit"]["author"] == "Ada Lovelace <ada@example.com>"
    assert len(found["steps"]) <= 4
    assert [line for line in done.stderr.splitlines() if line.startswith("step ")
            and ": measuring " not in line]  # a progress line per step
    summary = (tmp_path / "summary.md").read_text()
    assert summary == (tmp_path / "bisect.md").read_text()
    assert "&lt;b&gt;@\u200dteam&lt;/b&gt;" in summary and "<b>" not in summary
    assert worktrees(repo) == [f"worktree {repo}"]  # every commit's worktree removed
    assert not any((tmp_path / "steps" / "worktrees").iterdir())


@pytest.mark.slow
def test_a_failing_run_removes_the_worktrees_and_names_the_commit(cli, tmp_path):
    repo, shas = project(tmp_path, slow_at=3)
    done = cli("bisect", "--good", shas[0], "--bad", shas[5], "--repo", str(repo),
               "--rounds", "2", "--no-github", "--", "--suite", "no_such_suite",
               "--no-preflight")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1].startswith("torch-bench: error: torch-bench "
                                                           "run in ")
    assert worktrees(repo) == [f"worktree {repo}"]


@pytest.mark.slow
def test_endpoints_that_are_not_a_range_are_one_line_errors(cli, tmp_path):
    repo, shas = project(tmp_path, slow_at=None)
    for good, bad, more, said in (
            (shas[5], shas[2], [], "is not an ancestor of --bad"),
            (shas[3], shas[3], [], "are the same commit"),
            ("nope", shas[3], [], "'nope': not a commit"),
            (shas[0], shas[3], ["--json", str(repo / "NOTES.md" / "x")], "--json: "),
            (shas[0], shas[3], ["--json", "r", "--markdown", "r"], "both name r")):
        done = cli("bisect", "--good", good, "--bad", bad, "--repo", str(repo), "--no-github",
                   *more)
        assert done.returncode == 2 and said in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
    assert subprocess.run(["git", "-C", str(repo), "status", "--short"], capture_output=True,
                          text=True).stdout == ""


@pytest.mark.slow
def test_a_terminated_bisection_removes_its_worktrees(tmp_path):
    import signal
    import time

    repo, shas = project(tmp_path, slow_at=3)
    checkouts = tmp_path / "steps" / "worktrees"
    command = [sys.executable, "-m", "torch_bench", "bisect", "--good", shas[0], "--bad",
               shas[5], "--repo", str(repo), "--out-dir", str(tmp_path / "steps"),
               "--no-github", *RUN_ARGS]
    bisecting = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, env=os.environ.copy())
    deadline = time.monotonic() + 300
    while not (checkouts.is_dir() and len(list(checkouts.iterdir())) == 3):
        assert bisecting.poll() is None and time.monotonic() < deadline
        time.sleep(0.2)
    assert len(worktrees(repo)) == 4  # the repository and three commits being measured
    bisecting.send_signal(signal.SIGTERM)
    _, err = bisecting.communicate(timeout=120)
    assert bisecting.returncode == 128 + signal.SIGTERM, err
    assert "bisect stopped by SIGTERM" in err
    assert worktrees(repo) == [f"worktree {repo}"]
    assert not any(checkouts.iterdir())


@pytest.mark.slow
def test_worktrees_of_a_killed_bisection_are_removed_by_the_next_and_the_users_are_kept(
        tmp_path):
    import signal
    import time

    repo, shas = project(tmp_path, slow_at=1, commits=2)  # one step: the endpoints alone
    mine = tmp_path / "my-worktree"
    git(repo, "worktree", "add", "-q", "--detach", str(mine), shas[0])
    (mine / "draft.txt").write_text("work in progress\n")
    scratch = tmp_path / "tmp"  # where each bisection makes its scratch folder
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch)}
    options = ["--good", shas[0], "--bad", shas[1], "--repo", str(repo), "--rounds", "2",
               "--min-effect", "0.3", "--no-github"]
    run_args = [*RUN_ARGS, "--case-start", "spawn"]
    killed = subprocess.Popen([sys.executable, "-m", "torch_bench", "bisect", *options,
                               *run_args], cwd=tmp_path, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, env=env, start_new_session=True)
    deadline = time.monotonic() + 300
    while len(worktrees(repo)) < 3:  # the repository, mine, and one being measured
        assert killed.poll() is None and time.monotonic() < deadline
        time.sleep(0.2)
    os.killpg(killed.pid, signal.SIGKILL)  # the bisection and the run it started
    killed.wait()
    assert len(worktrees(repo)) >= 3 and any(scratch.iterdir())

    done = bisect_cli(tmp_path, *options, *run_args, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"first bad commit {shas[1][:10]}")
    assert sorted(worktrees(repo)) == sorted([f"worktree {repo}", f"worktree {mine}"])
    assert (mine / "draft.txt").read_text() == "work in progress\n"
    assert not list(scratch.glob("torch-bench-bisect-*"))


def test_a_worktree_stopped_while_git_added_it_is_removed_with_its_registration(tmp_path):
    """A bisection stopped while `git worktree add` ran leaves that worktree locked
    ("initializing"): removing it must override the lock, or it stays registered."""
    from torch_bench.analyze.bisect_runs import worktrees as worktree_pool

    repo, shas = project(tmp_path, slow_at=None, commits=2)
    with worktree_pool(repo, tmp_path / "steps") as pool:
        half_made = pool.path(shas[1])
        git(repo, "worktree", "lock", "--reason", "initializing", str(half_made))
        assert len(worktrees(repo)) == 2
    assert worktrees(repo) == [f"worktree {repo}"]
    assert not half_made.exists()


@pytest.mark.slow
def test_the_range_can_come_from_the_stored_history(cli, tmp_path):
    from support.runs import make_run, ok
    from torch_bench.results.document import save_run
    from torch_bench.store.layout import run_path

    repo, shas = project(tmp_path, slow_at=None, commits=16)
    for i, sha in enumerate(shas):  # one stored run per commit, 40% slower from commit 9 on
        run = make_run([ok("linear", 1.4 if i >= 9 else 1.0, suite="tinymm", seed=i)],
                       sha=sha, created_at=f"2026-01-{i + 1:02d}T00:00:00Z", run_id=f"r{i}")
        save_run(run, tmp_path / "data" / run_path(run))
    done = cli("bisect", "--from-history", "data", "--benchmark", "tinymm/linear", "--branch",
               "main", "--repo", str(repo), "--no-github", "--", "--suite", "no_such_suite",
               "--no-preflight")
    assert f"between {shas[8][:10]} and {shas[9][:10]}" in done.stderr
    assert "bisecting 2 commits" in done.stderr
    assert done.returncode == 2  # the suite does not exist: measuring stops at once
    for wrong, said in ((["--benchmark", "x", "--good", shas[0]],
                         "give it instead of --good and --bad"),
                        ([], "needs --benchmark NAME")):
        done = cli("bisect", "--from-history", "data", *wrong, "--repo", str(repo))
        assert done.returncode == 2 and said in done.stderr
