"""Reading the data branch into a local folder, publishing the dashboard next to the data, and
committing an edit of the data folder (retention).

The dashboard lives at the branch root (GitHub Pages serves it) and the data folder beside it.
Publishing replaces everything at the root except the data folder, in one commit on top of
the tip; if another writer pushed first, it starts over from the new tip, rebuilding the site
from the data as it now is. The data folder is carried over by tree id, never rewritten.
"""

from __future__ import annotations

import random
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from torch_bench.errors import UserError
from torch_bench.store.git import Credentials, Git
from torch_bench.store.remote import DEFAULT_POLICY, StoreError, Target, data_prefix, resolve_remote
from torch_bench.store.retry import RetryPolicy, Verdict, classify_push, display_url

SiteBuilder = Callable[[Path], Path]  # data folder -> folder holding the built site


@dataclass(frozen=True)
class PublishReport:
    commit: str | None  # None when the site was already up to date
    attempts: int


def _repository(directory: Path, target: Target, credentials: Credentials | None) -> Git:
    directory.mkdir(parents=True, exist_ok=True)
    git = Git(directory, credentials)
    git.run("init", "-q")
    git.run("remote", "add", "origin", resolve_remote(target.remote))
    return git


def _fetch_tip(git: Git, target: Target) -> str | None:
    ref = f"refs/heads/{target.branch}"
    listed = git.run("ls-remote", "origin", ref, check=False)
    if listed.returncode != 0:
        raise StoreError(f"{display_url(target.remote)}: cannot read the remote: "
                         f"{listed.stderr.strip().splitlines()[-1:] or ['no message']}")
    if not listed.stdout.strip():
        return None
    git.run("fetch", "-q", "--depth", "1", "--filter=blob:none", "origin",
            f"+{ref}:refs/remotes/origin/{target.branch}")
    return git.out("rev-parse", f"refs/remotes/origin/{target.branch}")


def _check_out_data(git: Git, tip: str, folder: str) -> Path:
    if folder:
        git.run("sparse-checkout", "set", "--no-cone", f"/{folder}/")
    git.run("checkout", "-q", "--detach", tip)
    return git.directory / folder if folder else git.directory


def checkout_data(target: Target, credentials: Credentials | None, destination: Path) -> Path:
    """The data folder of the branch's tip, checked out under `destination` (an empty folder
    when the branch does not exist yet)."""
    folder = str(data_prefix(target.folder)).strip(".")
    git = _repository(destination, target, credentials)
    tip = _fetch_tip(git, target)
    if tip is None:
        empty = destination / (folder or "")
        empty.mkdir(parents=True, exist_ok=True)
        return empty
    return _check_out_data(git, tip, folder)


def _site_tree(git: Git, site: Path, tip: str | None, folder: str) -> str:
    index = git.directory.parent / "site.index"
    env = {"GIT_INDEX_FILE": str(index)}
    index.unlink(missing_ok=True)
    git.run("read-tree", "--empty", env=env)
    if folder and (site / folder.split("/")[0]).exists():
        raise UserError(f"the site has a top-level {folder.split('/')[0]!r}, the data folder's "
                        "name; choose another --folder")
    git.run("--work-tree", str(site), "add", "--sparse", "-A", "--force", ".", env=env)
    if tip is not None and folder:
        has_data = git.run("cat-file", "-e", f"{tip}:{folder}", check=False).returncode == 0
        if has_data:
            git.run("read-tree", f"--prefix={folder}/", f"{tip}:{folder}", env=env)
    return git.out("write-tree", env=env)


# Given the scratch repository, the tip (None: no branch yet) and a scratch folder: the tree
# to commit on top of the tip and its message, or None when there is nothing to commit.
Prepare = Callable[[Git, "str | None", Path], "tuple[str, str] | None"]


def _commit_on_tip(target: Target, credentials: Credentials | None, what: str,
                   prepare: Prepare, policy: RetryPolicy, log: Callable[[str], None],
                   sleep: Callable[[float], None]) -> PublishReport:
    """Fetch the tip, prepare a tree from it, commit and push; after a lost race, start over
    from the new tip. A refusal for any other reason fails at once."""
    where = f"{display_url(target.remote)} (branch {target.branch})"
    ref = f"refs/heads/{target.branch}"
    rng = random.Random()
    for attempt in range(1, policy.attempts + 1):
        with tempfile.TemporaryDirectory(prefix="torch-bench-publish-") as scratch:
            git = _repository(Path(scratch) / "repo", target, credentials)
            tip = _fetch_tip(git, target)
            prepared = prepare(git, tip, Path(scratch))
            if prepared is None:
                return PublishReport(None, attempt)
            tree, message = prepared
            parents = ["-p", tip] if tip else []
            commit = git.out("commit-tree", tree, *parents, "-m", message)
            done = git.run("push", "--porcelain", "--no-verify", "origin", f"{commit}:{ref}",
                           check=False)
            outcome = classify_push(done.returncode, done.stdout, done.stderr, ref)
            if outcome.verdict is Verdict.PUSHED:
                return PublishReport(commit, attempt)
            if outcome.verdict is Verdict.REFUSED:
                raise StoreError(f"{where} refused the {what}: {outcome.reason}")
        if attempt < policy.attempts:
            delay = policy.delay(attempt, rng)
            log(f"{what} push lost a race; attempt {attempt + 1} of {policy.attempts} "
                f"in {delay:.2f}s")
            sleep(delay)
    raise StoreError(f"{where}: gave up pushing the {what} after {policy.attempts} attempts")


def publish_site(target: Target, credentials: Credentials | None, build: SiteBuilder,
                 policy: RetryPolicy = DEFAULT_POLICY,
                 log: Callable[[str], None] = lambda line: None,
                 sleep: Callable[[float], None] = time.sleep) -> PublishReport:
    folder = str(data_prefix(target.folder)).strip(".")

    def prepare(git: Git, tip: str | None, scratch: Path):
        data = _check_out_data(git, tip, folder) if tip else scratch / "empty"
        data.mkdir(parents=True, exist_ok=True)
        tree = _site_tree(git, build(data), tip, folder)
        if tip is not None and git.out("rev-parse", f"{tip}^{{tree}}") == tree:
            return None
        return tree, "torch-bench: rebuild the dashboard"

    return _commit_on_tip(target, credentials, "dashboard", prepare, policy, log, sleep)


DataEdit = Callable[[Path], None]  # changes the checked-out data folder in place


def edit_data(target: Target, credentials: Credentials | None, edit: DataEdit, message: str,
              policy: RetryPolicy = DEFAULT_POLICY,
              log: Callable[[str], None] = lambda line: None,
              sleep: Callable[[float], None] = time.sleep) -> PublishReport:
    """Check out the data folder, let `edit` change it, and commit whatever changed on top of
    the tip; after a lost race, start over from the new tip (so nothing another writer added
    in the meantime is lost or left out of the edit)."""
    folder = str(data_prefix(target.folder)).strip(".")

    def prepare(git: Git, tip: str | None, scratch: Path):
        if tip is None:
            return None
        edit(_check_out_data(git, tip, folder))
        git.run("add", "--sparse", "-A", "--", folder or ".")
        if not git.run("status", "--porcelain", check=False).stdout.strip():
            return None
        return git.out("write-tree"), message

    return _commit_on_tip(target, credentials, "edit", prepare, policy, log, sleep)
