"""The worktrees torch-bench adds to a repository are registered in its git folder, so that
those of a process killed outright are removed by the next one, and no other worktree is."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from torch_bench.analyze import worktree_registry
from torch_bench.measure.case_folders import owner_tag

HOLD = """
import sys, time
from pathlib import Path
from torch_bench.analyze import worktree_registry
assert worktree_registry.add(sys.argv[1], Path(sys.argv[2]), sys.argv[3]) is None
print("added", flush=True)
time.sleep(600)
"""


def git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


def listed(repo):
    return [line.removeprefix("worktree ") for line in
            git(repo, "worktree", "list", "--porcelain").splitlines()
            if line.startswith("worktree ")]


def repository(tmp_path):
    repo = tmp_path / "project"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("hello\n")
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "first")
    return repo, git(repo, "rev-parse", "HEAD")


def killed_while_holding(repo, where, commit):
    """A process that adds a worktree at `where`, killed with SIGKILL while it holds it."""
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(repo), str(where), commit],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "added"
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()


def test_a_killed_owners_worktree_is_removed_and_the_users_and_a_live_ones_are_kept(tmp_path):
    repo, commit = repository(tmp_path)
    mine = tmp_path / "users-own"
    git(repo, "worktree", "add", "-q", "--detach", str(mine), commit)
    (mine / "work.txt").write_text("uncommitted work\n")
    gone = tmp_path / "scratch" / "left-by-a-killed-bisect"
    killed_while_holding(repo, gone, commit)
    live = tmp_path / "scratch" / "held-by-this-process"
    assert worktree_registry.add(repo, live, commit) is None
    assert len(listed(repo)) == 4

    assert worktree_registry.sweep_stale(repo) == [gone]
    assert sorted(listed(repo)) == sorted([str(repo), str(mine), str(live)])
    assert not gone.exists() and (mine / "work.txt").read_text() == "uncommitted work\n"
    worktree_registry.remove(repo, live)
    assert listed(repo) == [str(repo), str(mine)] and not live.exists()
    assert not any(worktree_registry.registry(repo).iterdir())


def test_a_registration_whose_worktree_folder_was_deleted_still_goes(tmp_path):
    """A killed bisection's scratch folder may be swept (by the next bisection, elsewhere)
    before its repository is: git still lists the worktree, and it is still removed."""
    repo, commit = repository(tmp_path)
    gone = tmp_path / "scratch" / "deleted-folder"
    killed_while_holding(repo, gone, commit)
    subprocess.run(["rm", "-rf", str(tmp_path / "scratch")], check=True)
    assert len(listed(repo)) == 2
    assert worktree_registry.sweep_stale(repo) == [gone]
    assert listed(repo) == [str(repo)]


def test_a_path_no_longer_a_worktree_is_not_deleted_by_the_sweep(tmp_path):
    """Only git removes what a registration names: a folder that is no longer a worktree of
    the repository (the user removed it and put something else there) stays."""
    repo, commit = repository(tmp_path)
    where = tmp_path / "reused"
    killed_while_holding(repo, where, commit)
    git(repo, "worktree", "remove", "--force", str(where))
    where.mkdir()
    (where / "precious.txt").write_text("keep\n")
    worktree_registry.sweep_stale(repo)
    assert (where / "precious.txt").read_text() == "keep\n"
    assert not any(worktree_registry.registry(repo).iterdir())


def test_a_worktree_that_cannot_be_added_leaves_nothing(tmp_path):
    repo, _ = repository(tmp_path)
    where = tmp_path / "never"
    failed = worktree_registry.add(repo, where, "0" * 40)
    assert failed == f"fatal: invalid reference: {'0' * 40}"
    assert listed(repo) == [str(repo)] and not where.exists()
    assert not any(worktree_registry.registry(repo).iterdir())


def test_worktrees_of_a_linked_worktree_are_registered_with_its_repository(tmp_path):
    repo, commit = repository(tmp_path)
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "--detach", str(linked), commit)
    assert worktree_registry.registry(linked) == worktree_registry.registry(repo)
    assert worktree_registry.registry(tmp_path / "not-a-repo-" / "x") is None


@given(st.text(max_size=60))
def test_any_file_name_reads_as_an_owner_or_none(name):
    owner = worktree_registry.owner_of(name)
    assert owner is None or all(isinstance(part, int) for part in owner)


@given(st.integers(1, 2**22), st.floats(0, 2e9, allow_nan=False),
       st.text(st.characters(blacklist_categories=("Cs",)), min_size=1))
def test_a_registrations_name_records_its_owner(pid, started, path):
    name = worktree_registry.entry_name(owner_tag(pid, started), os.path.join("/", path))
    assert worktree_registry.owner_of(name) == (pid, int(started))
    assert worktree_registry.owner_of(name + worktree_registry.STAGED) == (pid, int(started))


def test_registrations_of_two_paths_of_one_owner_differ():
    tag = owner_tag(os.getpid(), time.time())
    assert worktree_registry.entry_name(tag, Path("/a/b")) != \
        worktree_registry.entry_name(tag, Path("/a/c"))


def test_the_actions_base_worktree_removes_a_killed_jobs_first(tmp_path):
    """A/B, confirmation and explain in the Action check the merge-base out the same way."""
    from torch_bench.action import ab_stage

    repo, commit = repository(tmp_path)
    gone = tmp_path / "out" / "confirm-base"
    killed_while_holding(repo, gone, commit)
    with ab_stage.base_worktree(str(repo), commit, tmp_path / "out2" / "confirm-base") as base:
        assert sorted(listed(repo)) == sorted([str(repo), str(base)])
    assert listed(repo) == [str(repo)]
