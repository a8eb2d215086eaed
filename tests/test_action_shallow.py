"""A shallow checkout (actions/checkout's default) misses the commits A/B, confirmation,
explain and bisection need: they are fetched from its origin once, or one warning says to
check out with fetch-depth: 0."""

from __future__ import annotations

import subprocess

import pytest

from support.runs import make_run, ok
from torch_bench.action import ab_stage, shallow


def git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


def commit(repo, message):
    (repo / "file.txt").write_text(message)
    git(repo, "add", "file.txt")
    git(repo, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def shallow_pr(tmp_path, monkeypatch):
    """An origin with main (3 commits) and a PR branch, checked out as actions/checkout
    does by default: the PR's head alone."""
    monkeypatch.setattr(shallow, "_FETCHED", {})
    origin = tmp_path / "origin"
    origin.mkdir()
    git(origin, "init", "-q", "-b", "main")
    first = commit(origin, "one")
    commit(origin, "two")
    base = commit(origin, "three")
    git(origin, "checkout", "-q", "-b", "feature")
    head = commit(origin, "four")
    workspace = tmp_path / "workspace"
    git(tmp_path, "clone", "-q", "--depth", "1", "--branch", "feature",
        f"file://{origin}", str(workspace))
    assert shallow.is_shallow(str(workspace)) and not shallow.has_commit(str(workspace), base)
    return origin, workspace, {"first": first, "base": base, "head": head}


def test_the_merge_base_of_a_shallow_checkout_is_fetched(shallow_pr, capsys):
    _, workspace, commits = shallow_pr
    run = make_run([ok("lstm", 1.0)], sha=commits["head"], branch="feature",
                   base_branch="main", pr=7)
    assert ab_stage.merge_base(str(workspace), run, "main") == commits["base"]
    assert not shallow.is_shallow(str(workspace))
    assert "fetching the history of the shallow checkout" in capsys.readouterr().err
    # the previous measured commit of a push (explain, bisect): there too
    with ab_stage.base_worktree(str(workspace), commits["first"],
                                workspace.parent / "base") as base:
        assert (base / "file.txt").read_text() == "one"


def test_without_an_origin_to_fetch_from_it_is_said_once_with_the_fix(shallow_pr, capsys):
    origin, workspace, commits = shallow_pr
    git(workspace, "remote", "set-url", "origin", str(origin.parent / "gone"))
    run = make_run([ok("lstm", 1.0)], sha=commits["head"], base_branch="main", pr=7)
    for _ in range(2):
        with pytest.raises(ab_stage.NoMergeBase, match="fetch-depth: 0"):
            ab_stage.merge_base(str(workspace), run, "main")
    with pytest.raises(Exception, match="fetch-depth: 0"):
        with ab_stage.base_worktree(str(workspace), commits["first"], workspace.parent / "b"):
            pass
    err = capsys.readouterr().err
    assert err.count("::warning title=torch-bench::cannot fetch the checkout's history") == 1
    assert "check out with `fetch-depth: 0`" in err
