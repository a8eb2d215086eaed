"""The dashboard on a branch of its own (`site-branch`), on a real bare repository: one
parentless commit replaced on every publish, the data branch only read, a lost race retried,
a site built from newer data kept, a branch holding files of others refused, and the inputs
that choose it."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from site_history import write_history
from test_site_size import error_lines
from test_store_publish import a_run, bare, commit_files, files_at, site_builder
from torch_bench.errors import UserError
from torch_bench.store.publish import publish_site
from torch_bench.store.remote import Target, store_runs
from torch_bench.store.retry import RetryPolicy
from torch_bench.store.site_branch import publish_site_branch
from torch_bench.store.site_files import ForeignFiles

FAST = RetryPolicy(attempts=3, base_delay=0.01)


def git(remote: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(remote), *args], capture_output=True, text=True,
                          check=True).stdout.strip()


def data_commit_of(remote: Path, branch: str = "gh-pages") -> str:
    """The Data-Commit trailer of the branch's tip."""
    return re.search(r"^Data-Commit: (\S+)$", git(remote, "log", "-1", "--format=%B", branch),
                     re.MULTILINE).group(1)


def data_target(remote: Path) -> Target:
    return Target(str(remote), "benchmark-data", "benchmarks")


def test_the_site_branch_is_one_commit_after_every_publish_and_the_data_is_only_read(tmp_path):
    remote = bare(tmp_path)
    target = data_target(remote)
    seen, published = [], []
    for value in (1.0, 2.0, 3.0):
        store_runs([a_run(value)], target)
        data_tip = git(remote, "rev-parse", "benchmark-data")
        report = publish_site_branch(target, "gh-pages", None, site_builder(tmp_path, seen))
        assert report.commit and git(remote, "rev-parse", "gh-pages") == report.commit
        assert git(remote, "rev-list", "--count", "gh-pages") == "1"
        assert data_commit_of(remote) == data_tip
        assert git(remote, "rev-parse", "benchmark-data") == data_tip  # never written
        published.append(report.commit)
    assert seen == [1, 2, 3]
    assert files_at(remote) == {"index.html", ".nojekyll", ".torch-bench-site.json"}
    assert all(f.startswith("benchmarks/") for f in files_at(remote, "benchmark-data"))
    again = publish_site_branch(target, "gh-pages", None, site_builder(tmp_path, seen))
    assert again.commit is None  # same data, same site: nothing pushed
    # the earlier sites are no longer reachable from any branch: a clone never receives them
    reachable = set(git(remote, "rev-list", "--all").split())
    assert not reachable & set(published[:2])


def test_a_site_branch_that_is_the_data_branch_is_refused(tmp_path):
    remote = bare(tmp_path)
    target = Target(str(remote), "gh-pages", "benchmarks")
    store_runs([a_run(1.0)], target)
    before = git(remote, "rev-parse", "gh-pages")
    with pytest.raises(UserError, match="'gh-pages' is the data branch too.*delete the data"):
        publish_site_branch(target, "gh-pages", None, site_builder(tmp_path, []))
    assert git(remote, "rev-parse", "gh-pages") == before
    for name in ("a..b", "-f", "site.lock", "with space"):
        with pytest.raises(UserError, match=f"'{re.escape(name)}' is not a valid branch name"):
            publish_site_branch(target, name, None, site_builder(tmp_path, []))
    assert list(tmp_path.glob("site-*")) == []  # refused before building


def race_once(remote: Path, branch: str, other: str) -> None:
    """A pre-receive hook on the remote: on the first push to `branch`, another writer's site
    (`other`) lands there first, while the push is under way."""
    hook = remote / "hooks" / "pre-receive"
    hook.write_text(f"""#!/bin/sh
updates=$(cat)
case "$updates" in *" refs/heads/{branch}"*) ;; *) exit 0 ;; esac
[ -e raced ] && exit 0
touch raced
env -u GIT_QUARANTINE_PATH -u GIT_OBJECT_DIRECTORY -u GIT_ALTERNATE_OBJECT_DIRECTORIES \\
    git update-ref refs/heads/{branch} {other}
""")
    hook.chmod(0o755)


def test_a_lost_race_is_retried_and_ends_with_the_newest_datas_site(tmp_path):
    remote = bare(tmp_path)
    target = data_target(remote)
    store_runs([a_run(1.0)], target)
    older = publish_site_branch(target, "other-writer", None, site_builder(tmp_path, []))
    store_runs([a_run(2.0)], target)
    newest = git(remote, "rev-parse", "benchmark-data")
    race_once(remote, "gh-pages", older.commit)
    said, seen = [], []
    report = publish_site_branch(target, "gh-pages", None, site_builder(tmp_path, seen), FAST,
                                 log=said.append, sleep=lambda s: None)
    assert (remote / "raced").exists() and any("lost a race" in line for line in said)
    assert report.attempts == 2 and seen == [2, 2]
    assert git(remote, "rev-parse", "gh-pages") == report.commit
    assert data_commit_of(remote) == newest
    assert git(remote, "rev-list", "--count", "gh-pages") == "1"


def test_an_older_data_publisher_keeps_the_site_built_from_newer_data(tmp_path):
    remote = bare(tmp_path)
    target = data_target(remote)
    store_runs([a_run(1.0)], target)
    seen, newer = [], []
    build = site_builder(tmp_path, seen)

    def slow_build(data, previous):
        if not newer:  # while this site builds, a run is stored and its site published
            store_runs([a_run(2.0)], target)
            newer.append(publish_site_branch(target, "gh-pages", None, build).commit)
        return build(data, previous)

    said = []
    report = publish_site_branch(target, "gh-pages", None, slow_build, FAST, log=said.append)
    assert report.commit is None and seen == [2, 1]
    assert git(remote, "rev-parse", "gh-pages") == newer[0]
    assert data_commit_of(remote) == git(remote, "rev-parse", "benchmark-data")
    assert any("built from newer data" in line for line in said)


def test_a_site_branch_holding_files_of_others_is_refused_before_building(tmp_path):
    remote = bare(tmp_path)
    # A branch that used to hold the data and the dashboard, now moving to a site branch.
    store_runs([a_run(1.0)], Target(str(remote), "gh-pages", "benchmarks"))
    publish_site(Target(str(remote), "gh-pages", "benchmarks"), None,
                 site_builder(tmp_path, []))
    git(remote, "branch", "benchmark-data", "gh-pages")
    target = data_target(remote)
    before, seen = git(remote, "rev-parse", "gh-pages"), []
    with pytest.raises(ForeignFiles, match=r"'gh-pages' holds files the dashboard did not "
                                           r"write \(benchmarks/.*nothing was pushed"):
        publish_site_branch(target, "gh-pages", None, site_builder(tmp_path, seen))
    assert seen == [] and git(remote, "rev-parse", "gh-pages") == before
    # Once the data folder is gone from it, only the dashboard's own files are left.
    remove_folder(remote, "gh-pages", "benchmarks", tmp_path)
    report = publish_site_branch(target, "gh-pages", None, site_builder(tmp_path, seen))
    assert report.commit and git(remote, "rev-list", "--count", "gh-pages") == "1"
    # A file added on top of the site's commit would be deleted: refused.
    commit_files(remote, {"notes.txt": "mine\n"}, tmp_path)
    with pytest.raises(ForeignFiles, match="notes.txt"):
        publish_site_branch(target, "gh-pages", None, site_builder(tmp_path, seen))
    assert "notes.txt" in files_at(remote)


def test_the_custom_domain_pages_writes_onto_the_site_branch_is_kept(tmp_path):
    remote = bare(tmp_path)
    target = data_target(remote)
    store_runs([a_run(1.0)], target)
    publish_site_branch(target, "gh-pages", None, site_builder(tmp_path, []))
    # Setting a custom domain, GitHub Pages commits a CNAME onto the branch it serves.
    commit_files(remote, {"CNAME": "bench.example.com\n"}, tmp_path)
    for value in (2.0, 3.0):
        store_runs([a_run(value)], target)
        report = publish_site_branch(target, "gh-pages", None, site_builder(tmp_path, []))
        assert report.commit and git(remote, "rev-list", "--count", "gh-pages") == "1"
        assert git(remote, "show", "gh-pages:CNAME") == "bench.example.com"
        assert data_commit_of(remote) == git(remote, "rev-parse", "benchmark-data")


def remove_folder(remote: Path, branch: str, folder: str, tmp_path: Path) -> None:
    """Push a commit removing `folder` from the branch, as its owner would."""
    work = tmp_path / "owner"
    subprocess.run(["git", "clone", "-q", "-b", branch, str(remote), str(work)], check=True)
    subprocess.run(["git", "-C", str(work), "rm", "-r", "-q", folder], check=True)
    subprocess.run(["git", "-C", str(work), "-c", "user.name=u", "-c", "user.email=u@e",
                    "commit", "-qm", f"remove {folder}"], check=True)
    subprocess.run(["git", "-C", str(work), "push", "-q", "origin", branch], check=True)


def test_a_site_over_the_size_limit_is_not_pushed_to_the_site_branch(tmp_path, cli):
    remote = bare(tmp_path)
    store_runs(write_history(tmp_path / "history"), data_target(remote))
    refused = cli("site", "--publish", "--remote", str(remote), "--branch", "benchmark-data",
                  "--site-branch", "gh-pages", "--out", "built", "--size-limit", "0.05")
    assert refused.returncode == 2 and len(error_lines(refused)) == 1
    assert "over the" in refused.stderr
    assert git(remote, "branch", "--list", "gh-pages") == ""
    published = cli("site", "--publish", "--remote", str(remote), "--branch", "benchmark-data",
                    "--site-branch", "gh-pages", "--out", "built", check=True)
    assert "published" in published.stderr and "index.html" in files_at(remote)


def test_a_site_whose_data_commit_cannot_be_found_is_replaced(tmp_path):
    remote = bare(tmp_path)
    target = data_target(remote)
    store_runs([a_run(1.0)], target)
    first = publish_site_branch(target, "gh-pages", None, site_builder(tmp_path, []))
    unknown = git(remote, "commit-tree", f"{first.commit}^{{tree}}", "-m",
                  f"torch-bench: the dashboard\n\nData-Commit: {'0123456789' * 4}")
    git(remote, "update-ref", "refs/heads/gh-pages", unknown)
    report = publish_site_branch(target, "gh-pages", None, site_builder(tmp_path, []))
    assert report.commit and data_commit_of(remote) == git(remote, "rev-parse",
                                                           "benchmark-data")


def test_the_site_branch_input_is_checked_and_is_never_the_data_branch():
    from torch_bench.action.inputs import SITE_INPUTS, read_inputs

    assert read_inputs({})["site-branch"] == ""
    chosen = read_inputs({"TB_SITE_BRANCH": "gh-pages", "TB_DATA_BRANCH": "benchmark-data"})
    assert (chosen["site-branch"], chosen["data-branch"]) == ("gh-pages", "benchmark-data")
    with pytest.raises(UserError, match=re.escape("Invalid value for 'site-branch' input: "
                                                  "'a..b'")):
        read_inputs({"TB_SITE_BRANCH": "a..b"})
    for table in ({}, {"table": SITE_INPUTS}):
        with pytest.raises(UserError, match="'site-branch' input: 'gh-pages' is the "
                                            "'data-branch' input too"):
            read_inputs({"TB_SITE_BRANCH": "gh-pages"}, **table)


def test_the_dashboard_sub_action_publishes_on_the_site_branch(tmp_path):
    from torch_bench.action.pipeline import run_site

    remote = bare(tmp_path)
    target = data_target(remote)
    store_runs(write_history(tmp_path / "history"), target)
    data_tip = git(remote, "rev-parse", "benchmark-data")
    outputs = tmp_path / "outputs"
    outputs.write_text("")
    assert run_site({"TB_DATA_REMOTE": str(remote), "TB_DATA_BRANCH": "benchmark-data",
                     "TB_SITE_BRANCH": "gh-pages", "TB_OUTPUT_DIR": str(tmp_path / "out"),
                     "GITHUB_OUTPUT": str(outputs), "GITHUB_REPOSITORY": "octo/bench"}) == 0
    assert "index.html" in files_at(remote) and git(remote, "rev-list", "--count",
                                                    "gh-pages") == "1"
    assert git(remote, "rev-parse", "benchmark-data") == data_tip
    assert not any(f.endswith(".html") for f in files_at(remote, "benchmark-data"))
    assert "dashboard-url=https://octo.github.io/bench/\n" in outputs.read_text()


def test_a_site_pushed_between_our_last_read_and_our_push_is_not_overwritten(tmp_path,
                                                                             monkeypatch):
    """The lease: another writer's newer site lands after this publish last read the branch
    and before its push; the push is refused, and the next attempt keeps that site."""
    from torch_bench.store import site_branch

    remote = bare(tmp_path)
    target = data_target(remote)
    store_runs([a_run(1.0)], target)
    publish_site_branch(target, "gh-pages", None, site_builder(tmp_path, []))
    store_runs([a_run(2.0)], target)
    real_push, newer = site_branch.push_commit, []

    def push_after_another_writer(*args, **kwargs):
        if not newer:
            newer.append("pushing")
            store_runs([a_run(3.0)], target)
            newer[0] = publish_site_branch(target, "gh-pages", None,
                                           site_builder(tmp_path, [])).commit
        return real_push(*args, **kwargs)

    monkeypatch.setattr(site_branch, "push_commit", push_after_another_writer)
    said, seen = [], []
    report = publish_site_branch(target, "gh-pages", None, site_builder(tmp_path, seen), FAST,
                                 log=said.append, sleep=lambda s: None)
    assert newer[0] and any("lost a race" in line for line in said)
    assert report.attempts == 2 and seen == [2, 3]
    assert data_commit_of(remote) == git(remote, "rev-parse", "benchmark-data")
    assert git(remote, "rev-list", "--count", "gh-pages") == "1"
