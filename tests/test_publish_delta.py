"""A publish builds only what changed since the dashboard at the tip it publishes onto and
takes the rest from there by blob id: on a real bare repository, through the Action's publish
stage and the CLI, with the dashboard on the data branch and on a branch of its own. The tree
it pushes is the one a full build of the same data gives, also when the tip's render keys are
missing or damaged, and when the site branch moves during the build."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from test_incremental_build import lstm_only_run, run
from test_site_branch import git, remove_folder
from test_store_publish import bare, commit_files, site_builder
from torch_bench.action import stages
from torch_bench.render import data as render_data
from torch_bench.render import history_cache
from torch_bench.render.history_cache import ROWS_NAME
from torch_bench.render.paths import BUILD_CACHE_DIR, RENDER_KEYS
from torch_bench.store.remote import Target, store_runs
from torch_bench.store.site_branch import publish_site_branch

MODES = {"data branch": "", "site branch": "gh-pages"}


@pytest.fixture(autouse=True)
def small_run_chunks(monkeypatch):
    """Run tables of 20 runs, so that a new run leaves the older chunks unchanged."""
    monkeypatch.setattr(render_data, "RUN_CHUNK", 20)


def remote_repository(tmp_path: Path) -> Path:
    """A bare repository serving partial fetches, as GitHub does: a publish fetches the tip's
    trees without its files."""
    remote = bare(tmp_path)
    git(remote, "config", "uploadpack.allowFilter", "true")
    return remote


def data_target(remote: Path, site_branch: str) -> Target:
    return Target(str(remote), "benchmark-data" if site_branch else "gh-pages", "benchmarks")


def published_tree(remote: Path, site_branch: str) -> str:
    """Every file of the branch the dashboard is on: mode, blob id and path."""
    return git(remote, "ls-tree", "-r", "--full-tree", site_branch or "gh-pages")


def publish(tmp_path: Path, target: Target, site_branch: str, capsys) -> str:
    """The Action's publish stage in a fresh job folder (as on a new job machine); what its
    build printed."""
    jobs = len(list(tmp_path.glob("job-*")))
    stages.publish(target, None, stages.Paths(tmp_path / f"job-{jobs}"),
                   cache=tmp_path / "cache", site_branch=site_branch)
    return capsys.readouterr().err


def unchanged(printed: str) -> list[int]:
    """The file groups each build printed as unchanged since the previous build."""
    return [int(n) for n in re.findall(r"(\d+) unchanged since the previous build", printed)]


def written(printed: str) -> list[int]:
    return [int(n) for n in re.findall(r"(\d+) files written", printed)]


def fresh_tree(tmp_path: Path, runs: list, site_branch: str, capsys) -> str:
    """The tree a full build of `runs`, published once onto a new repository, gives."""
    work = tmp_path / f"fresh-{len(list(tmp_path.glob('fresh-*')))}"
    remote = remote_repository(work)
    target = data_target(remote, site_branch)
    store_runs(runs, target)
    assert unchanged(publish(work, target, site_branch, capsys)) == [0]
    return published_tree(remote, site_branch)


@pytest.fixture
def history():
    return [run(i) for i in range(60)], lstm_only_run(60)


def published_once(tmp_path: Path, older: list, site_branch: str, capsys
                   ) -> tuple[Path, Target, str]:
    """A repository whose data branch holds `older`, published once: (the bare remote, its
    target, what that publish printed)."""
    remote = remote_repository(tmp_path)
    target = data_target(remote, site_branch)
    store_runs(older, target)
    return remote, target, publish(tmp_path, target, site_branch, capsys)


def traced_publish(tmp_path: Path, target: Target, site_branch: str, capsys,
                   monkeypatch) -> tuple[str, set[str]]:
    """A publish, with what it printed and the objects it asked the remote for."""
    packets = tmp_path / "packets.log"
    monkeypatch.setenv("GIT_TRACE_PACKET", str(packets))  # what git asks of the remote
    printed = publish(tmp_path, target, site_branch, capsys)
    monkeypatch.delenv("GIT_TRACE_PACKET")
    return printed, set(re.findall(r"fetch> want ([0-9a-f]{40})",
                                   packets.read_text(errors="replace")))


@pytest.mark.parametrize("site_branch", MODES.values(), ids=MODES.keys())
def test_a_second_publish_writes_only_what_changed_and_equals_a_full_build(
        tmp_path, capsys, history, site_branch, monkeypatch):
    older, newest = history
    remote, target, first = published_once(tmp_path, older, site_branch, capsys)
    assert unchanged(first) == [0]
    cache = [line.split("\t")[1] for line in published_tree(remote, site_branch).splitlines()
             if line.split("\t")[1].startswith(BUILD_CACHE_DIR)]
    assert cache == [RENDER_KEYS]  # the keys go with the site, the rest of the cache does not
    store_runs([newest], target)
    second, asked = traced_publish(tmp_path, target, site_branch, capsys, monkeypatch)
    # the gru benchmark (not in the new run) and the full run chunks are not rendered again
    assert unchanged(second)[0] >= 3 and written(second)[0] < written(first)[0] - 6
    assert not list((tmp_path / "job-1" / "site").glob("bench/rnns-gru-*"))
    # nor downloaded: the new tree names their blobs, which never leave the remote
    carried = json.loads((tmp_path / "job-1" / "carried.json").read_text())
    blobs = {line.split("\t")[1]: line.split()[2]
             for line in published_tree(remote, site_branch).splitlines()}
    assert any(path.startswith("bench/rnns-gru-") for path in carried) and asked
    assert not asked & {blobs[path] for path in carried}
    assert published_tree(remote, site_branch) == fresh_tree(tmp_path, [*older, newest],
                                                             site_branch, capsys)


def data_blobs(remote: Path, branch: str) -> dict[str, str]:
    """Blob id of every run file on the data branch, by path."""
    return {line.split("\t")[1]: line.split()[2]
            for line in git(remote, "ls-tree", "-r", branch, "benchmarks/runs").splitlines()}


@pytest.mark.parametrize("site_branch", MODES.values(), ids=MODES.keys())
def test_a_publish_fetches_only_the_data_files_its_cache_lacks(
        tmp_path, capsys, history, site_branch, monkeypatch):
    older, newest = history
    remote, target, _ = published_once(tmp_path, older, site_branch, capsys)
    known = data_blobs(remote, target.branch)
    store_runs([newest], target)
    printed, asked = traced_publish(tmp_path, target, site_branch, capsys, monkeypatch)
    assert "read 1 data files, 60 from the cache" in printed
    new = set(data_blobs(remote, target.branch).values()) - set(known.values())
    assert new and new <= asked  # the new run file was fetched ...
    assert not asked & set(known.values())  # ... and none of the 60 the cache holds


@pytest.mark.parametrize("git_gives_it", [True, False], ids=["read from git", "checked out"])
@pytest.mark.parametrize("site_branch", MODES.values(), ids=MODES.keys())
def test_a_cache_that_fails_after_its_files_were_left_out_still_gives_the_whole_history(
        tmp_path, capsys, history, site_branch, git_gives_it, monkeypatch):
    """The cache's index lists the files (so the checkout leaves them out) but its rows are
    damaged: the build reads them from git, or, where git cannot give them (a private
    repository: the build has no credentials), the publish checks them out and builds
    again. Either way the tree is the full build's."""
    older, newest = history
    remote, target, _ = published_once(tmp_path, older, site_branch, capsys)
    (tmp_path / "cache" / ROWS_NAME).write_bytes(b"not parquet")
    store_runs([newest], target)
    with monkeypatch.context() as patched:
        if not git_gives_it:
            patched.setattr(history_cache, "blob_content", lambda folder, oid: None)
        printed = publish(tmp_path, target, site_branch, capsys)
    assert "read 61 data files, 0 from the cache" in printed
    assert ("building again from the whole data folder" in printed) is not git_gives_it
    assert published_tree(remote, site_branch) == fresh_tree(tmp_path, [*older, newest],
                                                             site_branch, capsys)


def damage_keys(remote: Path, branch: str, how: str, tmp_path: Path) -> None:
    """A commit on top of the branch (as its owner would push) removing the published render
    keys, or replacing them by JSON that is not an object."""
    if how == "missing":
        remove_folder(remote, branch, BUILD_CACHE_DIR, tmp_path)
    else:
        commit_files(remote, {RENDER_KEYS: "[1, 2]\n"}, tmp_path, branch)


@pytest.mark.parametrize("how", ["missing", "not an object"])
@pytest.mark.parametrize("site_branch", MODES.values(), ids=MODES.keys())
def test_missing_or_damaged_keys_at_the_tip_give_a_full_build_and_the_right_tree(
        tmp_path, capsys, history, site_branch, how):
    older, newest = history
    remote, target, _ = published_once(tmp_path, older, site_branch, capsys)
    damage_keys(remote, site_branch or "gh-pages", how, tmp_path / "owner")
    store_runs([newest], target)
    assert unchanged(publish(tmp_path, target, site_branch, capsys)) == [0]
    assert published_tree(remote, site_branch) == fresh_tree(tmp_path, [*older, newest],
                                                             site_branch, capsys)
    # that full build published keys again: the next publish builds only what changed
    later = lstm_only_run(61)
    store_runs([later], target)
    assert unchanged(publish(tmp_path, target, site_branch, capsys))[0] > 0
    assert published_tree(remote, site_branch) == fresh_tree(
        tmp_path, [*older, newest, later], site_branch, capsys)


def test_a_site_branch_replaced_during_the_build_starts_the_attempt_over(
        tmp_path, capsys, history, monkeypatch):
    """Another writer replaces the site this build carries files from, and the remote
    collects the replaced site's files: the tree must not name them. The attempt starts over
    from the new tip (a one-page site without keys: a full build)."""
    older, newest = history
    remote = remote_repository(tmp_path)
    target = data_target(remote, "gh-pages")
    store_runs(older, target)
    publish(tmp_path, target, "gh-pages", capsys)
    store_runs([newest], target)
    real_cli, other = stages.cli, []

    def cli_then_another_writer(*args):
        done = real_cli(*args)
        if args[0] == "site" and not other:
            other.append(publish_site_branch(target, "gh-pages", None,
                                             site_builder(tmp_path, [])).commit)
            git(remote, "gc", "-q", "--prune=now")
        return done

    monkeypatch.setattr(stages, "cli", cli_then_another_writer)
    printed = publish(tmp_path, target, "gh-pages", capsys)
    assert other[0] and "lost a race" in printed
    assert len(unchanged(printed)) == 2 and unchanged(printed)[0] > 0  # built twice
    assert published_tree(remote, "gh-pages") == fresh_tree(tmp_path, [*older, newest],
                                                            "gh-pages", capsys)


def test_the_cli_publish_writes_only_what_changed(tmp_path, cli, history):
    older, newest = history
    remote = remote_repository(tmp_path)
    target = data_target(remote, "")
    store_runs(older, target)
    command = ("site", "--publish", "--remote", str(remote), "--out")
    cli(*command, "built", check=True)
    store_runs([newest], target)
    second = cli(*command, "elsewhere", check=True).stderr  # as on another machine
    assert unchanged(second)[0] > 0
    files = {line.split("\t")[1]: line.split()[2]
             for line in published_tree(remote, "").splitlines()}
    fresh = remote_repository(tmp_path / "fresh-0")
    store_runs([*older, newest], data_target(fresh, ""))
    cli("site", "--publish", "--remote", str(fresh), "--out", "fresh-built", check=True)
    expected = {line.split("\t")[1]: line.split()[2]
                for line in published_tree(fresh, "").splitlines()}
    assert files == expected
