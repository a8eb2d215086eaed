"""The Action end to end, as a runner runs it: the composite step's script from action.yml,
with its `env:` filled from the inputs, GITHUB_* variables, event payload files, GITHUB_OUTPUT
and GITHUB_STEP_SUMMARY, a local bare repository as the data remote and a local HTTP server
as the GitHub API."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest
import yaml

from action_venv import restored_venv
from fake_github import FakeGitHub
from site_history import make_run
from torch_bench.results.document import save_run
from torch_bench.store.reader import load_history

ROOT = Path(__file__).resolve().parents[1]
ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
TOKEN = "ghs_e2eSECRETtoken0123456789"
# One worker process per case: each process imports torch, seconds that these tests of the
# Action's plumbing do not need three times over.
TINY = ("--threads 1 --variants py --seq-length 4 --input-size 8 --hidden-size 8 --mini-batch 2 "
        "--max-time 0.2 --min-repeats 3 --max-repeats 10 --no-preflight --processes 1")
# A PR's head judged against the stored history alone: by default, with less history, the
# merge-base is measured side by side (A/B, 3 rounds of 2 runs) and what stays undecided
# re-measured for up to 10 minutes, past these tests' time-out on a loaded machine.
# test_action_ab.py and test_confirm.py check those; these tests check what a PR run writes.
HISTORY_ONLY = {"ab": "never", "confirm-budget": "0"}


def git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


class World:
    """A project repository (main and a feature branch), a bare data remote, a fake API, and
    the Action's virtual environment made by its set-up steps."""

    def __init__(self, root: Path, api: FakeGitHub):
        self.root, self.api = root, api
        self.command, self.setup_seconds = restored_venv(root / "tool-cache")
        self.remote = root / "data.git"
        git(root, "init", "-q", "--bare", str(self.remote))
        self.project = root / "project"
        self.project.mkdir()
        git(self.project, "init", "-q", "-b", "main")
        git(self.project, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q",
            "--allow-empty", "-m", "base")
        self.base_sha = git(self.project, "rev-parse", "HEAD")
        git(self.project, "checkout", "-q", "-b", "feature")
        git(self.project, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q",
            "--allow-empty", "-m", "a change </script><script>window.__xss=1</script>")
        self.head_sha = git(self.project, "rev-parse", "HEAD")
        api.pulls[7] = {"number": 7, "head": {"sha": self.head_sha}}
        self.count = 0

    def event(self, kind: str, fork: bool = False) -> dict[str, str]:
        self.count += 1
        folder = self.root / f"event{self.count}"
        folder.mkdir()
        repo = {"full_name": "octo/bench", "default_branch": "main"}
        if kind == "push":
            payload = {"repository": repo, "head_commit": {"message": "base"}}
            env = {"GITHUB_EVENT_NAME": "push", "GITHUB_REF": "refs/heads/main",
                   "GITHUB_REF_NAME": "main", "GITHUB_SHA": self.base_sha}
        else:
            head_repo = {"full_name": "mallory/bench"} if fork else repo
            payload = {"repository": repo, "pull_request": {
                "number": 7, "title": "Faster @everyone <b>",
                "head": {"sha": self.head_sha, "ref": "feature", "repo": head_repo},
                "base": {"sha": self.base_sha, "ref": "main", "repo": repo}}}
            env = {"GITHUB_EVENT_NAME": "pull_request", "GITHUB_REF": "refs/pull/7/merge",
                   "GITHUB_HEAD_REF": "feature", "GITHUB_BASE_REF": "main",
                   "GITHUB_SHA": self.head_sha}
        (folder / "event.json").write_text(json.dumps(payload))
        (folder / "output").write_text("")
        (folder / "summary").write_text("")
        return {**env, "GITHUB_EVENT_PATH": str(folder / "event.json"),
                "GITHUB_OUTPUT": str(folder / "output"),
                "GITHUB_STEP_SUMMARY": str(folder / "summary"),
                "GITHUB_REPOSITORY": "octo/bench", "GITHUB_SERVER_URL": "https://github.com",
                "GITHUB_API_URL": self.api.url, "GITHUB_ACTIONS": "true",
                "GITHUB_JOB": "bench", "GITHUB_WORKSPACE": str(self.project),
                "GITHUB_ACTION_PATH": str(ROOT), "RUNNER_TEMP": str(folder)}

    def runs(self, branch: str = "gh-pages") -> list:
        checkout = Path(tempfile.mkdtemp(dir=self.root, prefix="read-")) / "clone"
        git(self.root, "clone", "-q", "-b", branch, str(self.remote), str(checkout))
        return list(load_history(checkout / "benchmarks").runs)

    def branch_files(self) -> set[str]:
        if not git(self.remote, "branch", "--list", "gh-pages"):
            return set()
        return set(git(self.remote, "ls-tree", "-r", "--name-only", "gh-pages").split())


def bench_step() -> dict:
    return next(step for step in ACTION["runs"]["steps"] if step.get("id") == "bench")


def run_action(world: World, github: dict[str, str], **inputs: str):
    """Run the main composite step as the runner would: its script, its env."""
    given = {"device": "cpu", "run-args": TINY, "data-remote": str(world.remote),
             "github-token": TOKEN, **inputs}
    step = bench_step()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GITHUB_", "TB_", "RUNNER_"))}
    for variable, expression in step["env"].items():
        if expression == "${{ steps.setup.outputs.command }}":
            env[variable] = str(world.command)
            continue
        name = re.fullmatch(r"\$\{\{ inputs\.([a-z-]+) \}\}", expression).group(1)
        default = ACTION["inputs"][name].get("default", "")
        env[variable] = given.get(name, "" if name == "github-token" else default)
    env.update(github)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    out_dir = Path(github["RUNNER_TEMP"]) / "out"
    env["TB_OUTPUT_DIR"] = str(out_dir)
    done = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=world.project, env=env,
                          capture_output=True, text=True, timeout=600)
    assert TOKEN not in done.stdout + done.stderr
    outputs = dict(line.split("=", 1) for line in
                   Path(github["GITHUB_OUTPUT"]).read_text().splitlines() if "=" in line)
    return done, outputs, out_dir


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    with FakeGitHub() as api:
        yield World(tmp_path_factory.mktemp("action"), api)


@pytest.mark.slow
def test_install_step_builds_the_action_from_its_checkout(tmp_path):
    step = ACTION["runs"]["steps"][0]
    assert "$ACTION_PATH" in step["run"] and step["env"]["ACTION_PATH"] == \
        "${{ github.action_path }}"
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                           str(tmp_path), str(ROOT)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert list(tmp_path.glob("torch_bench_action-*.whl"))


@pytest.mark.slow
def test_push_to_main_appends_and_rebuilds_the_dashboard(world):
    done, outputs, out = run_action(world, world.event("push"))
    assert done.returncode == 0, done.stdout + done.stderr
    runs = world.runs()
    assert len(runs) == 1 and runs[0].git["sha"] == world.base_sha
    files = world.branch_files()
    assert "index.html" in files and any(f.startswith("benchmarks/runs/") for f in files)
    # of the build cache, only the render keys (the next publish builds from them)
    assert [f for f in files if f.startswith(".torch-bench-cache/")] == [
        ".torch-bench-cache/render-keys.json"]
    assert outputs["verdict"] == "no-baseline"
    assert outputs["results-path"] == str(out / "results.json")
    assert outputs["dashboard-url"] == "https://octo.github.io/bench/"


@pytest.mark.slow
def test_pr_gets_one_comment_updated_in_place(world):
    if not world.runs():
        pytest.skip("needs the push test's history")
    for attempt in (1, 2):
        github = world.event("pull_request")
        done, outputs, out = run_action(world, github, **HISTORY_ONLY)
        assert done.returncode == 0, done.stdout + done.stderr
        comments = world.api.comments[7]
        assert len(comments) == 1, f"attempt {attempt}: {len(comments)} comments"
        assert outputs["comment-url"] == comments[0]["html_url"]
        assert outputs["verdict"] in ("unchanged", "inconclusive", "improvement", "regression")
        summary = Path(github["GITHUB_STEP_SUMMARY"]).read_text()
        assert "rnns/py" in summary and "forward&#95;time" in summary
    body = world.api.comments[7][0]["body"]
    assert "@everyone" not in body and "<script>" not in body
    assert len(world.runs()) == 1  # PR results are not appended to the history


@pytest.mark.slow
def test_two_matrix_shards_at_once_both_land(world):
    before = len(world.runs())
    events = [world.event("push"), world.event("push")]
    outcomes = [None, None]

    def shard(index):
        outcomes[index] = run_action(world, events[index], **{"build-site": "false"})

    threads = [threading.Thread(target=shard, args=(i,)) for i in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for done, _, _ in outcomes:
        assert done.returncode == 0, done.stdout + done.stderr
    assert len(world.runs()) == before + 2


@pytest.mark.slow
def test_fork_pr_gets_a_report_artifact_and_writes_nothing(world):
    before_files, before_comments = world.branch_files(), len(world.api.comments.get(7, []))
    github = world.event("pull_request", fork=True)
    done, outputs, out = run_action(world, github, push="true", comment="always")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (out / "pr-report" / "report.md").read_text().strip()
    assert (out / "pr-report" / "pr-number.txt").read_text().strip() == "7"
    assert world.branch_files() == before_files
    assert len(world.api.comments.get(7, [])) == before_comments
    assert outputs["comment-url"] == ""
    assert "::notice title=torch-bench comment::no PR comment" in done.stdout
    assert "comes from a fork" in Path(github["GITHUB_STEP_SUMMARY"]).read_text()


def run_sub_action(world: World, folder: str, github: dict[str, str], env_vars: dict[str, str]):
    meta = yaml.safe_load((ROOT / folder / "action.yml").read_text())
    step = meta["runs"]["steps"][-1]
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GITHUB_", "TB_", "RUNNER_"))}
    env.update({**github, **env_vars, "GITHUB_TOKEN": TOKEN,
                "TB_COMMAND": str(world.command)})
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    done = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=world.project, env=env,
                          capture_output=True, text=True, timeout=600)
    assert TOKEN not in done.stdout + done.stderr
    return done


def test_site_sub_action_rebuilds_the_dashboard_once(world):
    if not world.branch_files():
        pytest.skip("needs the push test's history")
    before = git(world.remote, "rev-parse", "gh-pages")
    github = world.event("push")
    done = run_sub_action(world, "dashboard", github, {
        "TB_DATA_REMOTE": str(world.remote), "TB_DATA_BRANCH": "gh-pages",
        "TB_DATA_FOLDER": "benchmarks", "TB_OUTPUT_DIR": str(Path(github["RUNNER_TEMP"]))})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "index.html" in world.branch_files()
    assert git(world.remote, "rev-parse", "gh-pages") != before or "up to date" in done.stderr


def test_comment_sub_action_posts_a_fork_report_only_to_the_measured_pr(world, tmp_path):
    report = tmp_path / "pr-report"
    report.mkdir()
    (report / "report.md").write_text("## torch-bench\n\nping @everyone\n")
    (report / "pr-number.txt").write_text("7\n")
    github = world.event("pull_request")
    before = len(world.api.comments.get(7, []))
    moved_on = run_sub_action(world, "comment", github, {
        "TB_REPORT_DIR": str(report), "TB_HEAD_SHA": world.base_sha})
    # The PR has a newer head than the measured commit: nothing posted, and not a red run.
    assert moved_on.returncode == 0, moved_on.stdout + moved_on.stderr
    assert "::notice" in moved_on.stdout and "refusing to post" in moved_on.stdout
    assert len(world.api.comments.get(7, [])) == before
    done = run_sub_action(world, "comment", github, {
        "TB_REPORT_DIR": str(report), "TB_HEAD_SHA": world.head_sha,
        "TB_CONFIG_NAME": "fork"})
    assert done.returncode == 0, done.stdout + done.stderr
    posted = world.api.comments[7]
    assert len(posted) == before + 1
    assert "@\u200deveryone" in posted[-1]["body"] and "@everyone" not in posted[-1]["body"]
    (report / "pr-number.txt").write_text("7; rm -rf /\n")
    bad = run_sub_action(world, "comment", github, {
        "TB_REPORT_DIR": str(report), "TB_HEAD_SHA": world.head_sha})
    assert bad.returncode == 2 and "not a PR number" in bad.stdout


@pytest.mark.slow
def test_retention_keeps_the_newest_runs_after_storing(world):
    if len(world.runs()) < 2:
        pytest.skip("needs the earlier tests' history")
    done, outputs, _ = run_action(world, world.event("push"), **{"keep-runs": "1",
                                                                "baseline": "latest"})
    assert done.returncode == 0, done.stdout + done.stderr
    runs = world.runs()
    assert len(runs) == 1 and outputs["verdict"] != "no-baseline"


def test_a_shadowing_workspace_cannot_replace_the_action_code(world, tmp_path):
    """A checkout holding `json.py` or a `torch_bench/` package (a PR can add either) must not
    be imported by the process that holds the token."""
    results = tmp_path / "results.json"
    save_run(make_run(0), results)
    package = world.project / "torch_bench"
    package.mkdir()
    shadows = [world.project / "json.py", package / "__init__.py"]
    for shadow in shadows:
        shadow.write_text("open(__file__ + '.imported', 'w').close()\nraise SystemExit(99)\n")
    try:
        done, outputs, _ = run_action(world, world.event("push"), **{
            "results-file": str(results), "push": "false", "build-site": "false"})
        imported = [s.name for s in shadows if Path(f"{s}.imported").exists()]
    finally:
        shutil.rmtree(package)
        for path in world.project.glob("json.py*"):
            path.unlink()
    assert done.returncode == 0, done.stdout + done.stderr
    assert imported == [] and outputs["results-path"]


def test_set_up_step_time_with_a_restored_environment(world):
    # A figure, not a check: the time depends on the machine and its load.
    print(f"\nset-up step (install.py create) on a restored environment: "
          f"{world.setup_seconds:.1f} s")
    assert world.command.is_file()


@pytest.mark.slow
def test_same_repository_pr_leaves_the_hand_off_for_the_comment_workflow(world, tmp_path):
    github = world.event("pull_request")
    done, _, out = run_action(world, github, comment="never", push="false",
                              **{"build-site": "false", **HISTORY_ONLY})
    assert done.returncode == 0, done.stdout + done.stderr
    assert (out / "pr-report" / "report.md").read_text().strip()
    assert (out / "pr-report" / "pr-number.txt").read_text().strip() == "7"


def test_comment_sub_action_with_no_report_is_a_notice_not_a_failure(world, tmp_path):
    empty = tmp_path / "pr-report"
    empty.mkdir()
    before = len(world.api.comments.get(7, []))
    done = run_sub_action(world, "comment", world.event("pull_request"), {
        "TB_REPORT_DIR": str(empty), "TB_HEAD_SHA": world.head_sha})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "::notice" in done.stdout and "nothing to post" in done.stdout
    assert len(world.api.comments.get(7, [])) == before


def test_a_second_torch_bench_step_in_the_same_job_stores_too(world, tmp_path):
    """Two steps of one job share `output-dir` (the default): the second finds the first
    one's checkout of the data branch, and must still read and push."""
    before = len(world.runs()) if world.branch_files() else 0
    github = world.event("push")
    for index in (0, 1):
        results = tmp_path / f"results-{index}.json"
        save_run(make_run(index), results)
        done, _, _ = run_action(world, github, **{"results-file": str(results), "push": "true",
                                                  "build-site": "false"})
        assert done.returncode == 0, f"step {index + 1}: {done.stdout + done.stderr}"
    assert len(world.runs()) == before + 2


@pytest.mark.slow
def test_the_config_file_chooses_suites_and_device_when_the_inputs_are_not_set(world):
    config = world.project / "bench.yml"
    config.write_text("suites: [rnns]\ndevice: cpu\n")
    try:
        done, outputs, out = run_action(world, world.event("push"), device="", suites="",
                                        config=str(config), push="false",
                                        **{"build-site": "false"})
    finally:
        config.unlink()
    assert done.returncode == 0, done.stdout + done.stderr
    run = json.loads((out / "results.json").read_text())
    assert {r["params"].get("device") for r in run["results"]} == {"cpu"}
    assert {r["suite"] for r in run["results"]} == {"rnns"}
