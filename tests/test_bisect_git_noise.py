"""`torch-bench bisect` over a range where nothing changed, on the real git repository of
`test_bisect_git.py` (in a file of its own, so that test workers taking whole files can
measure it beside the other bisections)."""

from __future__ import annotations

import json

import pytest

from fake_github import FakeGitHub
from test_bisect_git import RUN_ARGS, bisect_cli, project, worktrees


@pytest.mark.slow
def test_a_range_of_noise_only_ends_as_no_single_commit_found(tmp_path):
    repo, shas = project(tmp_path, slow_at=None)
    with FakeGitHub() as github:
        done = bisect_cli(tmp_path, "--good", shas[0], "--bad", shas[-1], "--repo",
                          str(repo), "--rounds", "2", "--min-effect", "0.3", "--json",
                          "bisect.json", "--no-github", "--issue", "12", *RUN_ARGS,
                          env={"GITHUB_TOKEN": "t0ken", "GITHUB_API_URL": github.url,
                               "GITHUB_REPOSITORY": "octo/bench"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("no single commit found")
    found = json.loads((tmp_path / "bisect.json").read_text())
    assert found["ending"] == "not found" and len(found["steps"]) == 1
    assert worktrees(repo) == [f"worktree {repo}"]
    [comment] = github.comments[12]  # the report, posted on the issue
    assert "**no single commit found" in comment["body"]
    assert "created the comment on issue 12" in done.stderr
