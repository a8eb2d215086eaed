"""Appending runs to a data branch on a git remote, safely under concurrent writers.

No checkout at all: a scratch repository fetches the tip of the data branch alone (depth 1,
without file contents where the server allows `--filter=blob:none`); only the trees on the
paths to the new files are read and rewritten (trees.py), and `commit-tree` makes the commit,
so an append costs about the same however long the history is.
Since a run only ever adds files at paths named by its run id, re-applying it on top of a
newer tip cannot conflict: when a push loses the race, the loop fetches the new tip, rebuilds
the commit on it and tries again after a backoff, within a time budget. Any other refusal
(authentication, branch protection, a hook) ends the store at once.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from torch_bench.errors import UserError
from torch_bench.results.schema import Run
from torch_bench.store.documents import run_files_of
from torch_bench.store.git import Credentials, Git, GitError, is_branch_name
from torch_bench.store.notes import note_file
from torch_bench.store.retry import (
    PushOutcome,
    RetryPolicy,
    Verdict,
    classify_failure,
    classify_push,
    display_url,
)
from torch_bench.store.scratch import scratch_folder
from torch_bench.store.trees import Entries, add_files, directories_of, parse_tree


class StoreError(UserError):
    """The runs could not be stored; the message says why and whether anything was retried."""


class GaveUp(StoreError):
    """Other writers kept winning the race for the whole retry budget: an operational
    failure, not bad input (the CLI exits with status 1)."""

    exit_status = 1


DEFAULT_POLICY = RetryPolicy()


@dataclass(frozen=True)
class Target:
    remote: str  # URL or path of any git remote
    branch: str = "gh-pages"
    folder: str = "data"  # data folder inside the branch; "" for its root


@dataclass(frozen=True)
class StoreReport:
    added: tuple[str, ...]  # run ids stored by this call
    present: tuple[str, ...]  # run ids the branch already had
    commit: str | None  # the commit pushed, None when there was nothing to add
    attempts: int


def data_prefix(folder: str) -> PurePosixPath:
    parts = [p for p in PurePosixPath(folder.strip("/")).parts if p not in ("", ".")]
    if ".." in parts:
        raise UserError(f"--folder: {folder!r} must stay inside the branch (no '..')")
    return PurePosixPath(*parts) if parts else PurePosixPath()


def resolve_remote(remote: str) -> str:
    """Local repository paths made absolute (git runs in a scratch directory); URLs as given."""
    if "://" not in remote and Path(remote).exists():
        return str(Path(remote).resolve())
    return remote


def planned_files(runs: Iterable[Run], prefix: PurePosixPath,
                  notes: Iterable[tuple[Run, dict]] = ()) -> dict[str, tuple[str, bytes]]:
    """path in the branch -> (run id, content) for every file the runs and the run notes
    (each with the run it belongs to) add."""
    files = {str(prefix / path): (run.run_id, data)
             for run in runs for path, data in run_files_of(run).items()}
    files.update({str(prefix / path): (run.run_id, data)
                  for run, note in notes for path, data in note_file(run, note).items()})
    return files


def commit_message(run_ids: Sequence[str], what: str = "run") -> str:
    """`what`: "run" when runs are added, "note" when only notes of runs are."""
    shown = ", ".join(run_ids[:3]) + (f" and {len(run_ids) - 3} more" if len(run_ids) > 3 else "")
    runs = f"{len(run_ids)} run{'s' if len(run_ids) != 1 else ''}"
    return f"torch-bench: add {runs}: {shown}\n" if what == "run" \
        else f"torch-bench: add notes of {runs}: {shown}\n"


def store_runs(
    runs: Sequence[Run],
    target: Target,
    credentials: Credentials | None = None,
    policy: RetryPolicy = DEFAULT_POLICY,
    log: Callable[[str], None] = lambda line: None,
    rng: random.Random | None = None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    notes: Sequence[tuple[Run, dict]] = (),
) -> StoreReport:
    """Add the runs' files, and the run notes' (each with its run), in one commit."""
    prefix = data_prefix(target.folder)
    files = planned_files(runs, prefix, notes)
    directories = directories_of([*files])
    rng = rng or random.Random()
    where = f"{display_url(target.remote)} (branch {target.branch})"
    with scratch_failures(where), scratch_folder("torch-bench-store-") as scratch:
        git = _scratch_repository(Path(scratch), target, credentials)
        blobs = _write_blobs(git, Path(scratch) / "files", files)
        (Path(scratch) / "trees").mkdir()
        started = clock()
        attempt = 0
        while True:
            attempt += 1
            try:
                tip = _fetch_tip(git, target.branch, where)
                root, trees, existing = add_files(_read_trees(git, tip, directories), blobs)
            except _Transient as exc:
                outcome = PushOutcome(Verdict.TRANSIENT, str(exc))
            else:
                added = sorted({files[path][0] for path in files if path not in existing})
                present = tuple(sorted({run.run_id for run in runs} - set(added)))
                if not added:
                    return StoreReport((), present, None, attempt)
                commit = _commit(git, tip, trees, root, Path(scratch) / "trees",
                                 commit_message(added, "run" if runs else "note"))
                done = git.run("push", "--porcelain", "--no-verify", "origin",
                               f"{commit}:refs/heads/{target.branch}", check=False)
                outcome = classify_push(done.returncode, done.stdout, done.stderr,
                                        f"refs/heads/{target.branch}")
            if outcome.verdict is Verdict.PUSHED:
                return StoreReport(tuple(added), present, commit, attempt)
            if outcome.verdict is Verdict.REFUSED:
                raise StoreError(f"{where} refused the push: {outcome.reason} "
                                 f"(not retried: this is not a race with another writer)")
            delay = policy.next_delay(attempt, clock() - started, rng)
            if delay is None:
                raise GaveUp(_gave_up(where, outcome, attempt, clock() - started, policy))
            what = ("push lost a race" if outcome.verdict is Verdict.RACE
                    else "a git step failed")
            log(f"{what} ({outcome.reason}); attempt {attempt + 1} in {delay:.2f}s")
            sleep(delay)


def _gave_up(where: str, outcome: PushOutcome, attempts: int, elapsed: float,
             policy: RetryPolicy) -> str:
    why = ("other writers kept pushing first" if outcome.verdict is Verdict.RACE
           else f"the last failure: {outcome.reason}")
    return (f"{where}: gave up after {attempts} attempts in {elapsed:.0f} s (budget "
            f"{policy.describe()}), {why}; nothing was stored, run the store again or raise "
            f"--retry-for")


class _Transient(Exception):
    """A step of one attempt failed for a reason a later attempt may not meet."""


@contextlib.contextmanager
def scratch_failures(where: str) -> Iterator[None]:
    """A full disk or a failing git command in the scratch repository, as one line."""
    try:
        yield
    except OSError as exc:
        raise StoreError(f"cannot write the scratch repository ({exc.strerror or exc}); "
                         f"nothing was pushed (TMPDIR full? point it at a folder with "
                         f"space)") from None
    except GitError as exc:
        raise StoreError(f"{where}: {exc}; nothing was pushed") from None


def _scratch_repository(directory: Path, target: Target,
                        credentials: Credentials | None) -> Git:
    repo = directory / "repo"
    repo.mkdir()
    git = Git(repo, credentials)
    git.run("init", "-q")
    # No background gc or maintenance after a fetch: a detached one rewrites the shallow file
    # while the next attempt's fetch reads it ("shallow file has changed since we read it").
    for key, value in (("gc.auto", "0"), ("maintenance.auto", "false")):
        git.run("config", key, value)
    if not is_branch_name(target.branch):
        raise UserError(f"--branch: {target.branch!r} is not a valid branch name")
    git.run("remote", "add", "origin", resolve_remote(target.remote))
    return git


def _write_blobs(git: Git, directory: Path, files: dict[str, tuple[str, bytes]]) -> dict[str, str]:
    """Store every file's content as a blob once, up front: attempts only rebuild trees."""
    paths = []
    for number, (_, data) in enumerate(files.values()):
        path = directory / f"{number}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        paths.append(str(path))
    shas = git.out("hash-object", "-w", "--stdin-paths", input="\n".join(paths).encode())
    return dict(zip(files, shas.split(), strict=True))


def _fetch_tip(git: Git, branch: str, where: str) -> str | None:
    """The commit at the branch tip, fetched alone and without blobs; None when no branch."""
    done = git.run("fetch", "-q", "--no-tags", "--depth=1", "--filter=blob:none", "origin",
                   f"+refs/heads/{branch}:refs/remotes/origin/{branch}", check=False)
    if done.returncode == 0:
        return git.out("rev-parse", f"refs/remotes/origin/{branch}^{{commit}}")
    if "couldn't find remote ref" in done.stderr:
        return None
    if classify_failure(done.stderr) is Verdict.TRANSIENT:
        raise _Transient(f"could not fetch: {_last_line(done.stderr)}")
    raise StoreError(f"could not fetch from {where}: {_last_line(done.stderr)}")


def _read_trees(git: Git, tip: str | None, directories: list[str]) -> dict[str, Entries]:
    """Entries of each directory that exists at the tip, read in one `cat-file --batch`."""
    if tip is None:
        return {}
    specs = "".join(f"{tip}:{d}\n" if d else f"{tip}^{{tree}}\n" for d in directories)
    try:
        output = git.raw("cat-file", "--batch", input=specs.encode())
    except GitError as exc:  # e.g. a tree the shallow fetch did not bring, read lazily
        raise _Transient(f"could not read the tip's folders: {exc}") from None
    trees, position = {}, 0
    for directory in directories:
        end = output.index(b"\n", position)
        header = output[position:end].split()
        position = end + 1
        if header[-1] == b"missing":
            continue
        size = int(header[2])
        if header[1] != b"tree":
            raise StoreError(f"{directory} is a {header[1].decode()} on the data branch, "
                             f"not a folder; choose another --folder")
        trees[directory] = parse_tree(output[position:position + size])
        position += size + 1
    return trees


def _commit(git: Git, tip: str | None, trees: dict[str, bytes], root: str, directory: Path,
            message: str) -> str:
    """Write the new tree objects and a commit of `root` on top of `tip`."""
    paths = []
    for oid, content in trees.items():
        path = directory / oid
        path.write_bytes(content)
        paths.append(str(path))
    written = git.out("hash-object", "-w", "-t", "tree", "--stdin-paths",
                      input="\n".join(paths).encode()).split()
    if written != list(trees):
        raise StoreError("internal error: git disagrees with the tree ids computed for the "
                         "new commit; nothing was pushed")
    parents = ["-p", tip] if tip else []
    try:
        return git.out("commit-tree", root, *parents, input=message.encode())
    except GitError as exc:
        raise StoreError(f"could not make the commit: {exc}") from None


def _last_line(text: str) -> str:
    """git's reason: its first `fatal:` or `error:` line other than the generic "Could not
    read from remote repository" (whose next lines, "...and the repository exists.", would
    mislead), else its last line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    specific = [line for line in lines if line.startswith(("fatal:", "error:"))
                and "could not read from remote repository" not in line.lower()]
    if specific:
        return specific[0]
    return lines[-1] if lines else "git failed without a message"
