"""A/B rounds that measure the same thing on both sides: one calibration for every run,
one worker process per case, and base documents that name the base's own commit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from test_action_ab import commit_package, git
from torch_bench.analyze.ab import labelled_as_base, round_arguments
from torch_bench.results.schema import new_run

# A suite timed by torch-bench's own timer: its calls per sample are calibrated, and a
# call on the head side costs twice as much, so calibrating each side would give each
# its own loop.
SPIN_SUITE = '''
from torch_bench.measure.timer import measure
from torch_bench.results.schema import measured
from torch_bench.suites.base import CaseSpec, Output, Suite

WORK = {work}


def plan(options, device):
    return [CaseSpec(suite="abspin", name="spin", params={{}}, outputs=(Output("latency"),))]


def run_case(case, ctx):
    timing = measure(lambda: sum(range(WORK)), ctx.policy, ctx.clock(), metric="latency")
    return [measured(case.suite, case.name, "latency", timing.samples_ms,
                     extra=timing.extra())]


SUITE = Suite(name="abspin", description="A/B spin", options=(), plan=plan,
              run_case=run_case, record_memory=False)
'''


def commit(repo: Path, work: int, message: str) -> str:
    return commit_package(repo, "abspin", SPIN_SUITE.format(work=work), message)


@pytest.fixture
def checkouts(tmp_path):
    """main, and a feature branch (checked out) whose call does twice the work; the
    merge-base in a detached worktree, as the Action checks it out."""
    repo = tmp_path / "project"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    base = commit(repo, 20_000, "base work")
    git(repo, "checkout", "-q", "-b", "feature")
    head = commit(repo, 40_000, "twice the work")
    git(repo, "worktree", "add", "-q", "--detach", str(tmp_path / "base"), base)
    return {"base": (tmp_path / "base", base), "head": (repo, head)}


@pytest.mark.slow
def test_every_round_of_both_sides_times_the_same_loop_and_names_its_own_commit(
        cli, tmp_path, checkouts):
    (base_dir, base_sha), (head_dir, head_sha) = checkouts["base"], checkouts["head"]
    # In a job, the environment describes the head: the base side must not take it on.
    job = {"GITHUB_SHA": head_sha, "GITHUB_HEAD_REF": "feature", "GITHUB_BASE_REF": "main"}
    done = cli("ab", "--base", str(base_dir), "--head", str(head_dir), "--rounds", "2",
               "--confirm-rounds", "0", "--out-dir", "rounds", "--json", "v.json",
               "--no-github", "--", "--suite", "abspin.suite", "--no-preflight",
               "--threads", "1", "--max-time", "0.2", "--min-repeats", "5", env=job)
    assert done.returncode == 0, done.stderr
    rounds = tmp_path / "rounds"
    documents = {path.stem: json.loads(path.read_text())
                 for path in rounds.glob("*-round*.json")}
    assert sorted(documents) == ["base-round1", "base-round2", "head-round1", "head-round2"]
    [calibrated] = json.loads((rounds / "calibration.json").read_text())["results"]
    for name, document in documents.items():
        [result] = document["results"]
        assert result["extra"]["loops"] == calibrated["extra"]["loops"], name
        assert "process_sizes" not in result["extra"]  # one worker process per round
        side_sha, branch = (base_sha, "main") if name.startswith("base") \
            else (head_sha, "feature")
        assert (document["git"]["sha"], document["git"]["branch"]) == (side_sha, branch)
    [verdict] = json.loads((tmp_path / "v.json").read_text())["verdicts"]
    assert verdict["verdict"] != "not comparable"


def test_round_arguments_add_one_forked_process_and_the_calibration_unless_given(tmp_path):
    calibration = tmp_path / "calibration.json"
    assert round_arguments(["--suite", "x"], calibration) == [
        "--suite", "x", "--processes", "1", "--case-start", "fork"]
    calibration.write_text("{}")
    assert round_arguments(["--suite", "x"], calibration)[-2:] == ["--calibration",
                                                                    str(calibration)]
    mine = ["--processes=3", "--calibration", "data", "--case-start", "spawn"]
    assert round_arguments(mine, calibration) == mine


def test_a_base_document_names_the_base_commit_and_no_pull_request(checkouts):
    base_dir, base_sha = checkouts["base"]
    head_run = new_run([], git={"repository": "octo/bench", "sha": "f" * 40,
                                "branch": "feature", "pr_number": 7, "base_sha": base_sha})
    run = labelled_as_base(head_run, base_dir, environ={"GITHUB_BASE_REF": "main"})
    assert run.git["sha"] == base_sha and run.git["branch"] == "main"
    assert run.git["message"] == "base work" and run.git["pr_number"] is None
    assert run.git["url"] == f"https://github.com/octo/bench/commit/{base_sha}"
    named = labelled_as_base(head_run, base_dir, "release", environ={})
    assert named.git["branch"] == "release" and named.git["ref"] == "refs/heads/release"
