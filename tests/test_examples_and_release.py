"""The example workflows are safe to copy, and a release can be cut from a tag."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from torch_bench import __version__

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.yml"))
WORKFLOWS = [*EXAMPLES, *sorted((ROOT / ".github" / "workflows").glob("*.yml"))]
SAME_REPOSITORY = "github.event.pull_request.head.repo.full_name == github.repository"
NOT_SAME_REPOSITORY = "github.event.pull_request.head.repo.full_name != github.repository"


def load(path: Path) -> dict:
    document = yaml.safe_load(path.read_text())
    document["on"] = document.pop(True, document.get("on"))  # YAML 1.1 reads `on` as True
    return document


def flat(text) -> str:
    return " ".join(str(text).split())


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_fork_prs_never_reach_a_self_hosted_runner(path):
    workflow = load(path)
    if "pull_request" not in workflow["on"]:
        return
    for name, job in workflow["jobs"].items():
        runs_on = flat(job["runs-on"])
        if "self-hosted" not in runs_on:
            continue
        guarded = SAME_REPOSITORY in flat(job.get("if", "")) or (
            SAME_REPOSITORY in runs_on and "ubuntu-latest" in runs_on) or \
            flat(job.get("if", "")) == "github.event_name == 'push'"
        assert guarded, f"{path.name}: job {name} runs PR code from forks on self-hosted"


def test_fork_prs_skipped_by_the_main_example_get_a_note():
    jobs = load(ROOT / "examples" / "benchmarks.yml")["jobs"]
    note = [job for job in jobs.values() if NOT_SAME_REPOSITORY in flat(job.get("if", ""))]
    assert note and "::notice" in flat(note[0]["steps"][0]["run"])
    assert "self-hosted" not in flat(note[0]["runs-on"])


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_runs_of_main_are_never_cancelled_or_dropped(path):
    workflow = load(path)
    pushes = "push" in workflow["on"] or "schedule" in workflow["on"]
    concurrency = workflow.get("concurrency")
    if not (pushes and concurrency) or path.name == "ci.yml":
        return
    cancel = flat(concurrency.get("cancel-in-progress", False))
    assert cancel in ("False", "${{ github.event_name == 'pull_request' }}"), path.name
    if "branches" in (workflow["on"].get("push") or {}):
        assert "github.sha" in concurrency["group"], f"{path.name}: one group per commit"


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_permissions_are_granted_per_job(path):
    workflow = load(path)
    assert workflow.get("permissions") in ({}, {"contents": "read"}), path.name
    for name, job in workflow["jobs"].items():
        if "uses" not in job:
            assert "permissions" in job or workflow["permissions"] == {"contents": "read"}, \
                f"{path.name}: job {name}"


def test_every_example_uses_the_published_action_by_its_major_tag():
    for path in EXAMPLES:
        uses = re.findall(r"uses: (\S+torch-bench-action\S*)", path.read_text())
        assert uses, path.name
        assert all(re.fullmatch(r"torch-bench/torch-bench-action(/\w+)?@v1", u) for u in uses)
    assert "org/" not in (ROOT / "README.md").read_text().replace("pytorch.org/", "")


def release_notes(tag: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "release-notes"), tag],
                          capture_output=True, text=True)


def test_the_current_version_can_be_released_with_its_changelog_section():
    done = release_notes(f"v{__version__}")
    assert done.returncode == 0, done.stderr
    assert "### Added" in done.stdout and "## [" not in done.stdout


@pytest.mark.parametrize("tag, message", [("v0.0.1", "package version is"),
                                          ("1.0.0", "not a release tag"),
                                          ("v1.0", "not a release tag")])
def test_a_tag_that_disagrees_is_refused_in_one_line(tag, message):
    done = release_notes(tag)
    assert done.returncode == 2 and message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_release_workflow_moves_the_major_tag_and_publishes_the_notes():
    workflow = load(ROOT / ".github" / "workflows" / "release.yml")
    assert workflow["on"]["push"]["tags"] == ["v[0-9]+.[0-9]+.[0-9]+"]
    scripts = "\n".join(step.get("run", "") for step in workflow["jobs"]["release"]["steps"])
    assert 'scripts/release-notes "$TAG"' in scripts
    assert 'major="${TAG%%.*}"' in scripts and "refs/tags/$major" in scripts
    assert "gh release create" in scripts and "--notes-file" in scripts


def test_the_action_declares_its_branding_and_one_version_everywhere():
    meta = yaml.safe_load((ROOT / "action.yml").read_text())
    assert meta["branding"] == {"icon": "activity", "color": "orange"}
    assert re.fullmatch(r"\d+\.\d+\.\d+", __version__) and int(__version__.split(".")[0]) >= 1
    assert 'dynamic = ["version"]' in (ROOT / "pyproject.toml").read_text()
    assert f"## [{__version__}] - " in (ROOT / "CHANGELOG.md").read_text()


def quick_start() -> dict:
    text = (ROOT / "README.md").read_text()
    block = text.split("## Quick start", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    document = yaml.safe_load(block)
    document["on"] = document.pop(True, document.get("on"))
    return document


@pytest.mark.parametrize("name", ["README quick start", *[p.name for p in EXAMPLES]])
def test_no_job_both_pushes_and_comments(name):
    # least privilege: a job that can push the data branch never comments, and the other way
    workflow = quick_start() if name == "README quick start" else load(ROOT / "examples" / name)
    for job_name, job in workflow["jobs"].items():
        granted = job.get("permissions") or {}
        assert not (granted.get("contents") == "write" and
                    granted.get("pull-requests") == "write"), f"{name}: job {job_name}"


def test_the_quick_start_pushes_only_on_push_and_comments_only_on_prs():
    jobs = quick_start()["jobs"]
    writes = {name: job["permissions"] for name, job in jobs.items()}
    pushing = [name for name, granted in writes.items() if granted.get("contents") == "write"]
    commenting = [name for name, granted in writes.items()
                  if granted.get("pull-requests") == "write"]
    assert [flat(jobs[n]["if"]) for n in pushing] == ["github.event_name == 'push'"]
    assert all(flat(jobs[n]["if"]).startswith("github.event_name == 'pull_request'")
               and SAME_REPOSITORY in flat(jobs[n]["if"]) for n in commenting)
