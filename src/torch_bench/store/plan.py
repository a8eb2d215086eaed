"""What a history edit does to the files of a data folder, decided without touching them:
files to write (path -> bytes) and files to delete. `apply_plan` is the only writer."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from torch_bench.fileio import write_bytes_atomic
from torch_bench.results.schema import Run
from torch_bench.store.archive import (
    Archive,
    archive_rows,
    digest,
    encode_archive,
)
from torch_bench.store.archive_bounds import MAX_ARCHIVE_ROWS
from torch_bench.store.documents import run_files_of
from torch_bench.store.layout import (
    archive_path,
    export_paths,
    is_json_archive,
    month_of,
    run_path,
)
from torch_bench.store.scan import Scan


@dataclass(frozen=True)
class Plan:
    writes: Mapping[PurePosixPath, bytes] = field(default_factory=dict)
    deletes: frozenset[PurePosixPath] = frozenset()
    left: tuple[str, ...] = ()  # what was left as it is, and why

    @property
    def empty(self) -> bool:
        return not self.writes and not self.deletes

    def lines(self) -> list[str]:
        return [*(f"write  {path}" for path in sorted(self.writes)),
                *(f"delete {path}" for path in sorted(self.deletes))]


def _loose_paths(run: Run) -> set[PurePosixPath]:
    return {run_path(run), *export_paths(run).values()}


def plan_edit(scan: Scan, edited: Iterable[Run]) -> Plan:
    """Files to change so the folder holds `edited` instead of the scanned runs: a run absent
    from `edited` is removed, a changed run rewritten where it lives (its run file and exports,
    or its archive, which gets a new name)."""
    after = {run.run_id: run for run in edited}
    writes: dict[PurePosixPath, bytes] = {}
    deletes: set[PurePosixPath] = set()
    for stored in scan.stored:
        if stored.archived:
            continue
        new = after.get(stored.run.run_id)
        if new is None:
            deletes |= _loose_paths(stored.run)
        elif new != stored.run:
            writes.update(run_files_of(new))
    for path, archive in scan.archives.items():
        runs = [after[run.run_id] for run in archive.runs if run.run_id in after]
        if runs == list(archive.runs):
            continue
        deletes.add(path)
        if runs:
            new_path = archive_path(archive.month, digest(run.run_id for run in runs))
            writes[new_path] = encode_archive(Archive(archive.month, tuple(runs),
                                                      archive.summarised))
    return Plan(writes, frozenset(deletes - set(writes)))


def plan_compact(scan: Scan, before_month: str, summarise: bool) -> Plan:
    """Fold the run files of every month before `before_month` ("YYYY/MM") and that month's
    earlier archives into one Parquet archive per month; the run files and their exports go
    away. A month kept in JSON archives (older versions) is converted to Parquet too."""
    loose: dict[str, list[Run]] = defaultdict(list)
    for stored in scan.stored:
        if not stored.archived and month_of(stored.run) < before_month:
            loose[month_of(stored.run)].append(stored.run)
    old_archives: dict[str, list[PurePosixPath]] = defaultdict(list)
    for path, archive in scan.archives.items():
        old_archives[archive.month].append(path)
    legacy = {archive.month for path, archive in scan.archives.items()
              if is_json_archive(path) and archive.month}
    writes: dict[PurePosixPath, bytes] = {}
    deletes: set[PurePosixPath] = set()
    left: list[str] = []
    for month in sorted(set(loose) | legacy):
        runs = loose.get(month, [])
        merged = {run.run_id: run for path in old_archives[month]
                  for run in scan.archives[path].runs}
        merged.update({run.run_id: run for run in runs})
        rows = archive_rows(merged.values())
        if rows > MAX_ARCHIVE_ROWS:  # readers would refuse the archive: keep the files
            left.append(f"{month}: not compacted: {rows:,} results, over the cap of "
                        f"{MAX_ARCHIVE_ROWS:,} an archive is read with")
            continue
        summarised = (summarise and bool(runs)) or any(scan.archives[p].summarised
                                                      for p in old_archives[month])
        new_path = archive_path(month, digest(merged))
        writes[new_path] = encode_archive(Archive(month, tuple(merged.values()), summarised))
        deletes.update(old_archives[month])
        for run in runs:
            deletes |= _loose_paths(run)
    return Plan(writes, frozenset(deletes - set(writes)), tuple(left))


def apply_plan(root: Path, plan: Plan) -> None:
    """New files first (each atomically), deletions after: a crash half way leaves a run in
    two places (the reader counts it once), never in none."""
    for path, data in plan.writes.items():
        write_bytes_atomic(root / path, data)
    for path in plan.deletes:
        (root / path).unlink(missing_ok=True)
    for directory in sorted({(root / path).parent for path in plan.deletes}, reverse=True):
        _remove_empty(directory, root)


def _remove_empty(directory: Path, root: Path) -> None:
    while directory != root and directory.is_dir() and not any(directory.iterdir()):
        directory.rmdir()
        directory = directory.parent
