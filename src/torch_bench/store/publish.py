"""Reading the data branch into a local folder, publishing the dashboard next to the data, and
committing an edit of the data folder (retention).

The dashboard lives at the branch root (GitHub Pages serves it), or in a sub-folder of it,
and the data folder beside it. Publishing replaces the files of the previous dashboard (and
only those: site_files.py) in one commit on top of the tip; if another writer pushed first,
it starts over from the new tip, rebuilding the site from the data as it now is. The data
folder and every file the dashboard did not write are carried over unchanged. (A dashboard
on a branch of its own, replaced rather than added to: site_branch.py.)

Each publish builds only what changed since the dashboard at the tip it commits onto: the
tip's manifest and render keys (its build's content keys, published with it) tell the build
what is there (site_files.tip_site); the files it need not write are carried, and the new
tree takes them from the tip by blob id, never downloading them. A tip whose keys cannot be
read gives a full build.
"""

from __future__ import annotations

import os
import random
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from torch_bench.errors import LeftOutOfCheckout
from torch_bench.store.git import Credentials, Git
from torch_bench.store.previous_site import RENDER_KEYS, PreviousSite
from torch_bench.store.remote import (
    DEFAULT_POLICY,
    GaveUp,
    StoreError,
    Target,
    data_prefix,
    resolve_remote,
    scratch_failures,
)
from torch_bench.store.retry import RetryPolicy, Verdict, classify_push, display_url
from torch_bench.store.scratch import scratch_folder
from torch_bench.store.site_files import (
    MANIFEST,
    Entry,
    TipSite,
    decode_manifest,
    encode_manifest,
    is_legacy_dashboard,
    is_published,
    normalise_site_folder,
    plan_site_change,
    site_path,
    tip_site,
)


@dataclass(frozen=True)
class BuiltSite:
    folder: Path  # the files the build wrote
    carried: frozenset[str] = frozenset()  # files of the previous site it keeps as they are


# (data folder, the site it will be published over, when one can be carried from) -> the
# built site
SiteBuilder = Callable[[Path, "PreviousSite | None"], BuiltSite]


@dataclass(frozen=True)
class PublishReport:
    commit: str | None  # None when the site was already up to date
    attempts: int


def scratch_repository(directory: Path, target: Target, credentials: Credentials | None) -> Git:
    directory.mkdir(parents=True, exist_ok=True)
    git = Git(directory, credentials)
    git.run("init", "-q")
    git.run("remote", "add", "origin", resolve_remote(target.remote))
    return git


def fetch_tip(git: Git, target: Target) -> str | None:
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


def check_out_folder(git: Git, tip: str, folder: str,
                     leave_out: Mapping[str, str] | None = None) -> Path:
    """Check out `folder` of `tip`, but for the files of `leave_out` (path in the folder ->
    "git:<blob id>", as the build cache keys them) whose blob at the tip is that one: a
    build reads those from its cache, and in a partial clone they are then never fetched."""
    if folder:
        patterns = [f"/{folder}/", *(f"!/{folder}/{path}" for path in
                                     _unchanged_files(git, tip, folder, leave_out or {}))]
        git.run("sparse-checkout", "set", "--no-cone", "--stdin",
                input="".join(f"{line}\n" for line in patterns).encode())
    git.run("checkout", "-q", "--detach", tip)
    return git.directory / folder if folder else git.directory


_PLAIN_PATH = re.compile(r"[\w.-]+(?:/[\w.-]+)*")  # nothing a sparse-checkout pattern reads


def _unchanged_files(git: Git, tip: str, folder: str,
                     leave_out: Mapping[str, str]) -> list[str]:
    if not leave_out:
        return []
    tree = git.run("rev-parse", "--verify", "-q", f"{tip}:{folder}", check=False).stdout.strip()
    if not tree:  # no data folder at the tip
        return []
    entries = tree_entries(git, tree)
    return sorted(path for path, (_, oid) in entries.items()
                  if leave_out.get(path) == f"git:{oid}" and _PLAIN_PATH.fullmatch(path))


def checkout_data(target: Target, credentials: Credentials | None, destination: Path) -> Path:
    """The data folder of the branch's tip, checked out under `destination` (an empty folder
    when the branch does not exist yet)."""
    folder = str(data_prefix(target.folder)).strip(".")
    with scratch_failures(f"{display_url(target.remote)} (branch {target.branch})"):
        git = scratch_repository(destination, target, credentials)
        tip = fetch_tip(git, target)
        if tip is None:
            empty = destination / (folder or "")
            empty.mkdir(parents=True, exist_ok=True)
            return empty
        return check_out_folder(git, tip, folder)


def tree_entries(git: Git, tree: str) -> dict[str, Entry]:
    """path -> (mode, oid) of every file under a tree (read from tree objects only)."""
    return _listed_entries(git.raw("ls-tree", "-r", "-z", "--full-tree", tree), oid_field=2)


def _listed_entries(listed: bytes, oid_field: int) -> dict[str, Entry]:
    """path -> (mode, oid) from NUL-separated `mode ... <TAB> path` records, the oid being
    field `oid_field` (2 for `git ls-tree`: mode type oid; 1 for `git ls-files -s`: mode oid
    stage)."""
    entries = {}
    for record in listed.split(b"\0"):
        if record:
            meta, path = record.split(b"\t", 1)
            fields = meta.decode().split()
            entries[path.decode("utf-8", "surrogateescape")] = (fields[0], fields[oid_field])
    return entries


def _site_entries(git: Git, site: Path, index: Path) -> dict[str, Entry]:
    """The built site's files as blobs, path (relative to the site) -> (mode, oid)."""
    env = {"GIT_INDEX_FILE": str(index)}
    index.unlink(missing_ok=True)
    git.run("read-tree", "--empty", env=env)
    git.run("--work-tree", str(site.resolve()), "add", "--sparse", "-A", "--force", ".",
            env=env)
    return _listed_entries(git.raw("ls-files", "-s", "-z", env=env), oid_field=1)


def blob(git: Git, tip: str, path: str) -> bytes:
    return git.raw("cat-file", "blob", f"{tip}:{path}")


def read_tip_site(git: Git, tip: str, site_folder: str) -> TipSite | None:
    """The dashboard at `tip`, read from its tree, manifest and render keys (two blobs); None
    when nothing can be carried from it."""
    files = tree_entries(git, tip)

    def read(relative: str) -> bytes | None:
        path = site_path(site_folder, relative)
        return blob(git, tip, path) if path in files else None

    manifest = read(MANIFEST)
    keys = read(RENDER_KEYS) if manifest is not None else None
    return tip_site(files, site_folder, manifest, keys)


def built_entries(git: Git, built: BuiltSite, previous: TipSite | None,
                  index: Path) -> tuple[dict[str, Entry], dict[str, int]]:
    """The new site's files, path (relative to the site) -> (mode, oid), and their sizes:
    those written hashed (the build cache left out but for its render keys), those carried
    as the previous site has them."""
    entries = {path: entry for path, entry in _site_entries(git, built.folder, index).items()
               if is_published(path)}
    sizes = {path: os.lstat(built.folder / path).st_size for path in entries}
    if built.carried:
        missing = sorted(built.carried - set(previous.entries if previous else ()))
        if missing:
            raise StoreError(f"the build kept {missing[0]!r} from a previous site that does "
                             f"not have it")
        entries.update((path, previous.entries[path]) for path in built.carried)
        sizes.update((path, previous.as_previous.files[path]) for path in built.carried)
    return entries, sizes


def site_tree(git: Git, site: BuiltSite, tip: str | None, folder: str, site_folder: str,
              previous: TipSite | None = None) -> str:
    """The tip's tree with the previous dashboard replaced by `site` (its carried files
    taken from `previous`); files the dashboard does not own (see site_files.py) are kept as
    they are, the data folder by tree id."""
    scratch = git.directory.parent
    built, sizes = built_entries(git, site, previous, scratch / "site.index")
    tip_files = tree_entries(git, tip) if tip else {}
    manifest_path = site_path(site_folder, MANIFEST)
    owned: set[str] = set()
    if manifest_path in tip_files:
        owned = decode_manifest(blob(git, tip, manifest_path)) | {MANIFEST}
    index_path = site_path(site_folder, "index.html")
    legacy = manifest_path not in tip_files and index_path in tip_files and \
        is_legacy_dashboard(blob(git, tip, index_path))
    manifest = git.out("hash-object", "-w", "--stdin", input=encode_manifest(sizes))
    built[MANIFEST] = ("100644", manifest)
    change = plan_site_change(tip_files, built, site_folder, folder, owned, legacy)
    env = {"GIT_INDEX_FILE": str(scratch / "branch.index")}
    (scratch / "branch.index").unlink(missing_ok=True)
    git.run("read-tree", tip if tip else "--empty", env=env)
    lines = [f"0 {'0' * 40}\t{path}" for path in change.removals]
    lines += [f"{mode} {oid}\t{path}" for path, (mode, oid) in change.writes.items()]
    git.run("update-index", "-z", "--index-info", env=env,
            input="".join(line + "\0" for line in lines).encode("utf-8", "surrogateescape"))
    # The carried files' blobs, like the data folder's, are on the remote, not here: without
    # --missing-ok, git would download every one of them to check that it exists.
    return git.out("write-tree", "--missing-ok", env=env)


# Given the scratch repository, the tip (None: no branch yet) and a scratch folder: the tree
# to commit on top of the tip and its message, or None when there is nothing to commit.
Prepare = Callable[[Git, "str | None", Path], "tuple[str, str] | None"]

# One attempt of a publish, given the scratch repository, a scratch folder and the attempt's
# number: its report (pushed, or nothing to push), or None when it lost a race.
Attempt = Callable[[Git, Path, int], "PublishReport | None"]


def push_commit(git: Git, commit: str, ref: str, where: str, what: str,
                *options: str) -> bool:
    """Push `commit` to `ref` (with git push `options`): True when the remote took it, False
    when another writer moved the ref first or a passing failure stopped it (worth another
    attempt); StoreError for any other refusal."""
    # This clone has none of the tip's files. A thin pack (git's default) leaves out those the
    # remote has, carried ones included (under a commit without parents: as long as this
    # clone is shallow, site_branch.descends); no delta search (pack.window=0) keeps git from
    # downloading the old versions of the changed files to compute deltas against them.
    done = git.run("-c", "pack.window=0", "push", "--porcelain", "--no-verify", "--thin",
                   *options, "origin", f"{commit}:{ref}", check=False)
    outcome = classify_push(done.returncode, done.stdout, done.stderr, ref)
    if outcome.verdict is Verdict.REFUSED:
        raise StoreError(f"{where} refused the {what}: {outcome.reason}")
    return outcome.verdict is Verdict.PUSHED


def retrying(target: Target, credentials: Credentials | None, where: str, what: str,
             attempt: Attempt, policy: RetryPolicy, log: Callable[[str], None],
             sleep: Callable[[float], None],
             clock: Callable[[], float] = time.monotonic) -> PublishReport:
    """Run `attempt` in a fresh scratch repository until it reports, waiting between
    attempts as `policy` says; GaveUp when the budget is spent."""
    rng = random.Random()
    started, count = clock(), 0
    while True:
        count += 1
        with scratch_failures(where), scratch_folder("torch-bench-publish-") as scratch:
            git = scratch_repository(Path(scratch) / "repo", target, credentials)
            report = attempt(git, Path(scratch), count)
            if report is not None:
                return report
        delay = policy.next_delay(count, clock() - started, rng)
        if delay is None:
            raise GaveUp(f"{where}: gave up pushing the {what} after {count} attempts in "
                         f"{clock() - started:.0f} s (budget {policy.describe()})")
        log(f"{what} push lost a race; attempt {count + 1} in {delay:.2f}s")
        sleep(delay)


def _commit_on_tip(target: Target, credentials: Credentials | None, what: str,
                   prepare: Prepare, policy: RetryPolicy, log: Callable[[str], None],
                   sleep: Callable[[float], None],
                   clock: Callable[[], float] = time.monotonic) -> PublishReport:
    """Fetch the tip, prepare a tree from it, commit and push; after a lost race, start over
    from the new tip. A refusal for any other reason fails at once."""
    where = f"{display_url(target.remote)} (branch {target.branch})"
    ref = f"refs/heads/{target.branch}"

    def attempt(git: Git, scratch: Path, count: int) -> PublishReport | None:
        tip = fetch_tip(git, target)
        prepared = prepare(git, tip, scratch)
        if prepared is None:
            return PublishReport(None, count)
        tree, message = prepared
        parents = ["-p", tip] if tip else []
        commit = git.out("commit-tree", tree, *parents, "-m", message)
        return PublishReport(commit, count) if push_commit(git, commit, ref, where, what) \
            else None

    return retrying(target, credentials, where, what, attempt, policy, log, sleep, clock)


def build_from_tip(git: Git, tip: str | None, folder: str, scratch: Path, build: SiteBuilder,
                   previous: PreviousSite | None, leave_out: Mapping[str, str] | None,
                   log: Callable[[str], None]) -> BuiltSite:
    """Build the dashboard from the data folder at `tip`, checked out without the files the
    build cache holds (`leave_out`, check_out_folder); when the build needed one of them
    after all (a cache it could not use), with the whole folder."""
    def checked_out(leave_out: Mapping[str, str] | None) -> Path:
        data = check_out_folder(git, tip, folder, leave_out) if tip else scratch / "empty"
        data.mkdir(parents=True, exist_ok=True)  # a branch with no data folder yet
        return data

    try:
        return build(checked_out(leave_out), previous)
    except LeftOutOfCheckout as exc:
        if not leave_out:
            raise
        log(f"{exc}: building again from the whole data folder")
        return build(checked_out(None), previous)


def publish_site(target: Target, credentials: Credentials | None, build: SiteBuilder,
                 policy: RetryPolicy = DEFAULT_POLICY, site_folder: str = ".",
                 log: Callable[[str], None] = lambda line: None,
                 sleep: Callable[[float], None] = time.sleep,
                 leave_out: Mapping[str, str] | None = None) -> PublishReport:
    """Replace the previous dashboard by a new one built from the data at the tip, in
    `site_folder` of the branch (`.`: its root). Only files the dashboard wrote are replaced
    or removed; ForeignFiles when it would overwrite any other file. `leave_out`: the data
    files the build's cache holds, by key (check_out_folder)."""
    folder = str(data_prefix(target.folder)).strip(".")
    site_folder = normalise_site_folder(site_folder)

    def prepare(git: Git, tip: str | None, scratch: Path):
        previous = read_tip_site(git, tip, site_folder) if tip else None
        built = build_from_tip(git, tip, folder, scratch, build,
                               previous.as_previous if previous else None, leave_out, log)
        tree = site_tree(git, built, tip, folder, site_folder, previous)
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
        edit(check_out_folder(git, tip, folder))
        git.run("add", "--sparse", "-A", "--", folder or ".")
        if not git.run("status", "--porcelain", check=False).stdout.strip():
            return None
        return git.out("write-tree"), message

    return _commit_on_tip(target, credentials, "edit", prepare, policy, log, sleep)
