"""Reading every stored run of a data folder, with where each one lives: a run file of its
own or an archive. Bad files are reported by name and skipped."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from torch_bench.errors import UserError
from torch_bench.fileio import read_bytes
from torch_bench.results.document import load_run
from torch_bench.results.schema import Run
from torch_bench.store.archive import Archive, decode_archive
from torch_bench.store.layout import archive_files, run_files


@dataclass(frozen=True)
class Stored:
    run: Run
    source: PurePosixPath  # relative to the data folder: the run file or the archive
    archived: bool


@dataclass(frozen=True)
class Scan:
    stored: tuple[Stored, ...]  # run files first, then archives, each in path order
    archives: dict[PurePosixPath, Archive] = field(default_factory=dict)
    problems: tuple[str, ...] = ()


def scan_folder(root: Path, trust_archives: bool = True) -> Scan:
    """`trust_archives=False` validates every archived run even when its archive is intact."""
    if not root.is_dir():
        raise UserError(f"{root}: no such data folder")
    stored, problems, archives = [], [], {}
    for path in run_files(root):
        try:
            run = load_run(path)
        except UserError as exc:
            problems.append(str(exc))
            continue
        stored.append(Stored(run, _relative(root, path), archived=False))
    for path in archive_files(root):
        try:
            archive, found = decode_archive(read_bytes(path), str(path), trust_archives)
        except UserError as exc:
            problems.append(str(exc))
            continue
        problems.extend(found)
        archives[_relative(root, path)] = archive
        stored.extend(Stored(run, _relative(root, path), archived=True) for run in archive.runs)
    return Scan(tuple(stored), archives, tuple(problems))


def _relative(root: Path, path: Path) -> PurePosixPath:
    return PurePosixPath(path.relative_to(root).as_posix())
