"""Reading the history: every run in a data folder (run files and the archives `data compact`
writes), filtered, with bad files reported by name and skipped (a corrupt file never stops the
dashboard or a comparison). A run found twice (re-stored after it was compacted) counts once."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from torch_bench.errors import UserError
from torch_bench.results.schema import Run
from torch_bench.store.scan import scan_folder


@dataclass(frozen=True)
class RunFilter:
    repository: str | None = None
    branch: str | None = None
    fingerprint: str | None = None
    since: str | None = None  # ISO-8601, inclusive, compared as text (UTC "Z" timestamps)
    until: str | None = None

    def accepts(self, run: Run) -> bool:
        return self.accepts_values(repository=run.git.get("repository"),
                                   branch=run.git.get("branch"), fingerprint=run.fingerprint,
                                   created_at=run.created_at)

    def accepts_values(self, *, repository, branch, fingerprint, created_at: str) -> bool:
        return (
            (self.repository is None or repository == self.repository)
            and (self.branch is None or branch == self.branch)
            and (self.fingerprint is None or fingerprint == self.fingerprint)
            and (self.since is None or created_at >= self.since)
            and (self.until is None or created_at <= self.until)
        )


EVERY_RUN = RunFilter()


@dataclass(frozen=True)
class History:
    runs: tuple[Run, ...]  # oldest first
    problems: tuple[str, ...] = field(default_factory=tuple)  # "<file>: <what is wrong>"


def load_history(root: str | os.PathLike, where: RunFilter = RunFilter()) -> History:
    folder = Path(root)
    if not folder.is_dir():
        raise UserError(f"{folder}: no such data folder")
    scan = scan_folder(folder)
    runs, seen = [], set()
    for stored in scan.stored:
        if stored.run.run_id in seen:
            continue
        seen.add(stored.run.run_id)
        if where.accepts(stored.run):
            runs.append(stored.run)
    return History(tuple(sort_runs(runs)), scan.problems)


def sort_runs(runs: Iterable[Run]) -> list[Run]:
    return sorted(runs, key=lambda run: (run.created_at, run.run_id))
