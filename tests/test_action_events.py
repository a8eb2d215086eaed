"""The events besides push and pull_request, as GitHub sends them: a schedule (whose payload
names no repository), a merge group (compared with the queue's target branch, never stored)
and a manual run on a feature branch (compared with the default branch until the branch has
runs of its own; stored only when asked). Each gets a verdict or says why not, and its run is
stored where docs/action.md says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fake_github import FakeGitHub
from test_action_e2e import World, run_action
from torch_bench.action.context import read_context

REPOSITORY = {"full_name": "octo/bench", "default_branch": "main"}
QUEUE_REF = "refs/heads/gh-readonly-queue/main/pr-7-" + "a" * 40


def as_event(github: dict[str, str], name: str, ref: str, payload: dict) -> dict[str, str]:
    """`github` (a push's variables) turned into those of another event."""
    Path(github["GITHUB_EVENT_PATH"]).write_text(json.dumps(payload))
    return {**github, "GITHUB_EVENT_NAME": name, "GITHUB_REF": ref,
            "GITHUB_REF_NAME": ref.removeprefix("refs/heads/")}


def context(tmp_path, name, ref, payload):
    event = tmp_path / "event.json"
    event.write_text(json.dumps(payload))
    return read_context({"GITHUB_EVENT_NAME": name, "GITHUB_REF": ref,
                         "GITHUB_EVENT_PATH": str(event)})


def test_a_schedule_without_a_repository_in_its_payload_is_on_the_default_branch(tmp_path):
    ctx = context(tmp_path, "schedule", "refs/heads/trunk", {"schedule": "0 3 * * *"})
    assert ctx.on_default_branch and ctx.should_push("auto")
    assert ctx.compare_branch() == "trunk" and ctx.not_stored_reason("auto") is None


def test_a_merge_group_is_compared_with_its_target_and_never_stored(tmp_path):
    payload = {"repository": REPOSITORY, "merge_group": {"base_ref": "refs/heads/release/2"}}
    ctx = context(tmp_path, "merge_group", QUEUE_REF, payload)
    assert ctx.compare_branch() == "release/2" and not ctx.should_push("auto")
    assert "merge-queue runs" in ctx.not_stored_reason("auto")
    # an older payload without base_ref: the target is read from the queue's ref
    assert context(tmp_path, "merge_group", QUEUE_REF, {}).compare_branch() == "main"


def test_a_manual_run_on_a_feature_branch_says_how_to_store_it(tmp_path):
    ctx = context(tmp_path, "workflow_dispatch", "refs/heads/feature",
                  {"repository": REPOSITORY, "ref": "refs/heads/feature"})
    assert not ctx.should_push("auto") and ctx.should_push("true")
    assert "set push: true" in ctx.not_stored_reason("auto")


@pytest.mark.slow
def test_schedule_merge_group_and_manual_runs_end_to_end(tmp_path):
    with FakeGitHub() as api:
        world = World(tmp_path / "world", api)
        quiet = {"build-site": "false", "explain": "never"}

        github = as_event(world.event("push"), "schedule", "refs/heads/main",
                          {"schedule": "0 3 * * *"})
        done, outputs, _ = run_action(world, github, **quiet)
        assert done.returncode == 0, done.stdout + done.stderr
        assert outputs["verdict"] == "no-baseline" and "starts the history" in done.stderr
        assert len(world.runs()) == 1  # a nightly run is stored

        github = as_event(world.event("push"), "merge_group", QUEUE_REF, {
            "repository": REPOSITORY, "merge_group": {
                "head_sha": world.head_sha, "head_ref": QUEUE_REF,
                "base_sha": world.base_sha, "base_ref": "refs/heads/main"}})
        done, outputs, _ = run_action(world, github, **quiet)
        assert done.returncode == 0, done.stdout + done.stderr
        assert outputs["verdict"] != "no-baseline", done.stderr
        assert "not stored: merge-queue runs are compared with main" in done.stderr
        assert len(world.runs()) == 1

        dispatch = {"repository": REPOSITORY, "ref": "refs/heads/feature"}
        github = as_event(world.event("push"), "workflow_dispatch", "refs/heads/feature",
                          dispatch)
        done, outputs, _ = run_action(world, github, **quiet)
        assert done.returncode == 0, done.stdout + done.stderr
        assert outputs["verdict"] != "no-baseline", done.stderr
        assert "comparing with the default branch, 'main'" in done.stderr
        assert "set push: true to keep the runs of feature" in done.stderr
        assert len(world.runs()) == 1

        github = as_event(world.event("push"), "workflow_dispatch", "refs/heads/feature",
                          dispatch)
        done, outputs, _ = run_action(world, github, push="true", **quiet)
        assert done.returncode == 0, done.stdout + done.stderr
        stored = world.runs()
        assert sorted(run.git["branch"] for run in stored) == ["feature", "main"]
