"""`data verify`: everything wrong with a data folder, as one line per problem. Pure: the
caller passes the scan and the set of files present."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from pathlib import PurePosixPath

from torch_bench.store.edits import duplicate_series
from torch_bench.store.layout import (
    ARCHIVE_DIR,
    EXPORTS_DIR,
    RUNS_DIR,
    export_paths,
    is_archive_name,
    run_path,
)
from torch_bench.store.scan import Scan


def find_problems(scan: Scan, present: Iterable[PurePosixPath]) -> list[str]:
    files = set(present)
    found = list(scan.problems)
    places: dict[str, list[PurePosixPath]] = defaultdict(list)
    for stored in scan.stored:
        places[stored.run.run_id].append(stored.source)
        for bid in duplicate_series(stored.run):
            found.append(f"{stored.source}: run {stored.run.run_id} has {bid} more than once "
                         f"(two series merged, e.g. by a rename)")
        if stored.archived:
            continue
        if stored.source != run_path(stored.run):
            found.append(f"{stored.source}: run {stored.run.run_id} created at "
                         f"{stored.run.created_at} belongs at {run_path(stored.run)}")
        for name, path in export_paths(stored.run).items():
            if path not in files:
                found.append(f"{stored.source}: its {name} export {path} is missing")
    for run_id, sources in places.items():
        if len(sources) > 1:
            found.append(f"run {run_id} is stored {len(sources)} times: "
                         f"{', '.join(map(str, sources))}")
    exported = {path for stored in scan.stored for path in export_paths(stored.run).values()}
    for path in sorted(files):
        top = path.parts[0] if path.parts else ""
        if top == EXPORTS_DIR and path not in exported and path.suffix in (".json", ".txt"):
            found.append(f"{path}: export of a run that is not stored")
        elif top in (RUNS_DIR, ARCHIVE_DIR) and not _expected_name(path):
            found.append(f"{path}: not a run file or archive (ignored by readers)")
    return found


def _expected_name(path: PurePosixPath) -> bool:
    if path.parts[0] == RUNS_DIR:
        return len(path.parts) == 4 and path.suffix == ".json"
    return len(path.parts) == 3 and is_archive_name(path.name)
