"""Publishing the dashboard on a branch of its own (Action input `site-branch`, CLI
`--site-branch`): each publish replaces that branch by ONE parentless commit holding only
the site, so the site's history never accumulates in git (on the data branch, every publish
keeps each changed page in the history for good: docs/data-branch.md). The data branch is
only read.

One attempt: read the data branch's tip and the site branch's tip; build the site from the
data, writing only what changed since the site at that tip (the rest is taken from it by
blob id: publish.py); read the site branch's tip again; push with `--force-with-lease` on
the tip read (on its absence when there was none), so a site another writer pushed meanwhile
is never overwritten unseen: the push loses the race and the attempt starts over
(publish.py's retry policy). When the tip read again is not the one the build carried files
from, the attempt starts over as well, as after a lost race: the files carried from a site
that is no longer there may not be on the remote any more.

Each site commit records the data it was built from (`Data-Commit: <sha>` in its message).
A publish whose data is older than that of the site already there (the site's data commit
descends from ours on the data branch) pushes nothing; when that cannot be decided (the
commit is no longer on the data branch), it publishes.

A site branch whose tip holds files the dashboard did not write (the data of a branch that
used to hold both, pages of your own) is refused and nothing is pushed, since the new commit
would delete them; unless its tip is a commit of this publish, which holds nothing else. The
one exception is what GitHub Pages itself writes onto the branch it serves (`CNAME`, for a
custom domain): carried into each new commit as it is.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from torch_bench.errors import UserError
from torch_bench.store.git import Credentials, Git, is_branch_name
from torch_bench.store.publish import (
    PublishReport,
    SiteBuilder,
    blob,
    build_from_tip,
    fetch_tip,
    publish_site,
    push_commit,
    read_tip_site,
    retrying,
    scratch_repository,
    site_tree,
    tree_entries,
)
from torch_bench.store.remote import DEFAULT_POLICY, Target, data_prefix
from torch_bench.store.retry import RetryPolicy, display_url
from torch_bench.store.site_files import (
    MANIFEST,
    ForeignFiles,
    decode_manifest,
    files_outside,
    normalise_site_folder,
    site_path,
)

DATA_BRANCH, DATA_COMMIT = "Data-Branch", "Data-Commit"
_TRAILER = re.compile(rf"^({DATA_BRANCH}|{DATA_COMMIT}): (\S+)$", re.MULTILINE)
# Written onto the branch it serves by GitHub Pages itself (a custom domain), at the root of
# the site folder: carried into each new commit unchanged.
PAGES_FILES = ("CNAME",)
_COMMIT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


@dataclass(frozen=True)
class SiteTip:
    """The site branch's tip, as a publish finds it."""

    commit: str
    tree: str
    ours: bool  # made by this publish: its message carries the Data-Commit trailer
    data_commit: str | None  # the data commit it was built from, when ours and known
    carried: tuple[str, ...] = ()  # PAGES_FILES it holds, to be kept in the next commit


def site_message(data_branch: str, data_commit: str | None) -> str:
    built = f"at {data_commit[:12]}" if data_commit else "(no data yet)"
    return (f"torch-bench: the dashboard, built from {data_branch} {built}\n\n"
            f"{DATA_BRANCH}: {data_branch}\n{DATA_COMMIT}: {data_commit or 'none'}\n")


def trailers(message: str) -> dict[str, str]:
    """The Data-Branch and Data-Commit trailers of a commit message (its last paragraph)."""
    return dict(_TRAILER.findall(message.strip().rsplit("\n\n", 1)[-1]))


def check_branches(site_branch: str, data_branch: str) -> None:
    if not is_branch_name(site_branch):
        raise UserError(f"--site-branch: {site_branch!r} is not a valid branch name")
    if site_branch == data_branch:
        raise UserError(
            f"the site branch {site_branch!r} is the data branch too: each publish replaces "
            f"the site branch by one commit holding only the dashboard, which would delete "
            f"the data. Choose another site branch (Action input site-branch, CLI "
            f"--site-branch) or data branch (data-branch, --branch)")


def _refusal(branch: str, outside: list[str]) -> str:
    shown = ", ".join(outside[:3]) + (f" and {len(outside) - 3} more" if len(outside) > 3
                                      else "")
    return (f"the site branch {branch!r} holds files the dashboard did not write ({shown}); "
            f"publishing replaces that branch by one commit holding only the dashboard, "
            f"which would delete them, so nothing was pushed. Remove them from the branch "
            f"(a data folder: once it is on the data branch, see docs/data-branch.md), or "
            f"choose a site branch of its own")


def read_site_tip(git: Git, site: Target, site_folder: str) -> SiteTip | None:
    """The site branch's tip (None when there is no branch yet); ForeignFiles when it holds
    files other than a dashboard's and was not made by this publish."""
    tip = fetch_tip(git, site)
    if tip is None:
        return None
    found = trailers(git.out("log", "-1", "--format=%B", tip))
    files = tree_entries(git, tip)
    carried = tuple(name for name in PAGES_FILES if site_path(site_folder, name) in files)
    if DATA_COMMIT not in found:
        manifest = site_path(site_folder, MANIFEST)
        owned = decode_manifest(blob(git, tip, manifest)) if manifest in files else set()
        outside = files_outside(files, owned | set(carried), site_folder)
        if outside:
            raise ForeignFiles(_refusal(site.branch, outside))
    data = found.get(DATA_COMMIT, "")
    return SiteTip(tip, git.out("rev-parse", f"{tip}^{{tree}}"), DATA_COMMIT in found,
                   data if _COMMIT_ID.fullmatch(data) else None, carried)


def descends(git: Git, data: Target, commit: str, ancestor: str) -> bool | None:
    """Whether `commit` descends from `ancestor` on the data branch, its commits fetched
    (without trees or files); None when git cannot tell (a commit not on the branch).

    Fetched into a repository of their own beside `git`'s: the publish's stays shallow, which
    is what makes git, pushing a commit without parents, leave out every file the site
    branch's tip already has (pack-objects' aggressive edges) instead of downloading the
    carried ones to send them back."""
    history = scratch_repository(git.directory.parent / "history", data, git.credentials)
    ref = f"refs/heads/{data.branch}"
    fetched = history.run("fetch", "-q", "--no-tags", "--filter=tree:0", "origin",
                          f"+{ref}:refs/remotes/origin/{data.branch}", check=False)
    if fetched.returncode != 0:
        return None
    done = history.run("merge-base", "--is-ancestor", ancestor, commit, check=False)
    return {0: True, 1: False}.get(done.returncode)


def built_from_newer(git: Git, data: Target, ours: str | None, there: SiteTip | None) -> bool:
    """Whether the site there was built from newer data than `ours` (False when unknown)."""
    theirs = there.data_commit if there else None
    if not (ours and theirs) or theirs == ours:
        return False
    return descends(git, data, theirs, ours) is True


def publish_site_branch(target: Target, site_branch: str, credentials: Credentials | None,
                        build: SiteBuilder, policy: RetryPolicy = DEFAULT_POLICY,
                        site_folder: str = ".",
                        log: Callable[[str], None] = lambda line: None,
                        sleep: Callable[[float], None] = time.sleep,
                        clock: Callable[[], float] = time.monotonic,
                        leave_out: Mapping[str, str] | None = None) -> PublishReport:
    """Build the dashboard from the data at the tip of `target`'s branch and make it, in
    `site_folder`, the one commit of `site_branch`. The report's commit is None when the
    site there is the same, or was built from newer data. `leave_out`: the data files the
    build's cache holds, by key (publish.check_out_folder)."""
    check_branches(site_branch, target.branch)
    folder = str(data_prefix(target.folder)).strip(".")
    site_folder = normalise_site_folder(site_folder)
    site = replace(target, branch=site_branch)
    where = f"{display_url(target.remote)} (branch {site_branch})"
    ref = f"refs/heads/{site_branch}"

    def attempt(git: Git, scratch: Path, count: int) -> PublishReport | None:
        data_tip = fetch_tip(git, target)
        before = read_site_tip(git, site, site_folder)  # refuses a branch of others
        previous = read_tip_site(git, before.commit, site_folder) if before else None
        built = build_from_tip(git, data_tip, folder, scratch, build,
                               previous.as_previous if previous else None, leave_out, log)
        there = read_site_tip(git, site, site_folder)  # another writer may have published
        if built_from_newer(git, target, data_tip, there):
            log(f"the dashboard on {site_branch} was built from newer data "
                f"({there.data_commit[:12]}); it is kept")
            return PublishReport(None, count)
        if built.carried and (there.commit if there else None) != before.commit:
            log(f"the dashboard on {site_branch} changed while this one was built from it")
            return None
        for name in there.carried if there else ():
            (built.folder / name).write_bytes(
                blob(git, there.commit, site_path(site_folder, name)))
        tree = site_tree(git, built, None, "", site_folder, previous)
        if there and there.ours and there.tree == tree and there.data_commit == data_tip:
            return PublishReport(None, count)
        commit = git.out("commit-tree", tree, "-m", site_message(target.branch, data_tip))
        lease = f"--force-with-lease={ref}:{there.commit if there else ''}"
        pushed = push_commit(git, commit, ref, where, "dashboard", lease)
        return PublishReport(commit, count) if pushed else None

    return retrying(target, credentials, where, "dashboard", attempt, policy, log, sleep,
                    clock)


def publish_dashboard(target: Target, credentials: Credentials | None, build: SiteBuilder, *,
                      site_branch: str = "", site_folder: str = ".",
                      log: Callable[[str], None] = lambda line: None,
                      leave_out: Mapping[str, str] | None = None) -> PublishReport:
    """The dashboard published as the one commit of `site_branch` when one is given
    (`publish_site_branch`), else in `site_folder` of the data branch (publish_site)."""
    if site_branch:
        return publish_site_branch(target, site_branch, credentials, build,
                                   site_folder=site_folder, log=log, leave_out=leave_out)
    return publish_site(target, credentials, build, site_folder=site_folder, log=log,
                        leave_out=leave_out)
