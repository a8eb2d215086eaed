"""Run notes on the data folder: one small file per run and kind, beside the run files.

    <data>/notes/<YYYY>/<MM>/<run_id>.<kind>.json   (results/run_notes.py)

The month is the run's, as for its run file. Notes live outside `runs/` and `archive/`, so
`data compact` leaves them where they are and the dashboard finds them for archived runs too.
"""

from __future__ import annotations

import glob
import json
import re
from collections.abc import Iterable
from pathlib import Path, PurePosixPath
from typing import Any

from torch_bench.errors import UserError
from torch_bench.fileio import parse_json, read_text, write_bytes_atomic
from torch_bench.results.document import load_run
from torch_bench.results.run_notes import KINDS, check_note
from torch_bench.results.schema import Run
from torch_bench.store.layout import RUNS_DIR
from torch_bench.store.scan import scan_folder

NOTES_DIR = "notes"
_NAME = re.compile(r"^(?P<run_id>.+)\.(?P<kind>" + "|".join(map(re.escape, KINDS))
                   + r")\.json$")

Notes = dict[str, dict[str, dict[str, Any]]]  # run id -> kind -> note


def note_path(run: Run, kind: str) -> PurePosixPath:
    return PurePosixPath(NOTES_DIR, run.created_at[:4], run.created_at[5:7],
                         f"{run.run_id}.{kind}.json")


def note_files(root: Path) -> list[Path]:
    return sorted((root / NOTES_DIR).glob("*/*/*.json"))


def note_file(run: Run, note: dict[str, Any]) -> dict[PurePosixPath, bytes]:
    """The file a note adds to the data folder (path -> bytes); an invalid note, or one of
    another run, is refused."""
    check_note(note, f"note of run {run.run_id}")
    if note["run_id"] != run.run_id:
        raise UserError(f"a note of run {note['run_id']} cannot be attached to {run.run_id}")
    return {note_path(run, note["kind"]): (json.dumps(note, indent=1) + "\n").encode()}


def write_note(root: Path, run: Run, note: dict[str, Any]) -> Path:
    """Write (or replace) the run's note of the note's kind."""
    [(path, data)] = note_file(run, note).items()
    return write_bytes_atomic(root / path, data)


def find_run(root: Path, run_id: str) -> Run:
    """The stored run `run_id` of a data folder: its run file, else from an archive."""
    for path in (root / RUNS_DIR).glob(f"*/*/{glob.escape(run_id)}.json"):
        return load_run(path)
    for stored in scan_folder(root).stored:
        if stored.run.run_id == run_id:
            return stored.run
    raise UserError(f"--run: no run {run_id} in {root}")


def read_notes(root: Path) -> tuple[Notes, list[str]]:
    """Every valid note of a data folder, and a line per file that is not one."""
    notes: Notes = {}
    problems = []
    for path in note_files(root):
        try:
            note = check_note(parse_json(read_text(path), str(path)), str(path))
        except UserError as exc:
            problems.append(str(exc))
            continue
        named = _NAME.match(path.name)
        if not named or named["run_id"] != note["run_id"] or named["kind"] != note["kind"]:
            problems.append(f"{path}: its name does not match the note's run and kind")
            continue
        notes.setdefault(note["run_id"], {})[note["kind"]] = note
    return notes, problems


def notes_problems(root: Path) -> list[str]:
    """`data verify`'s lines for the notes: files under notes/ that are not valid notes. (A
    note of a run pruned since is harmless: nothing shows it.)"""
    return read_notes(root)[1]


def notes_of_removed(root: Path, stored: Iterable[Run], kept: Iterable[Run]
                     ) -> frozenset[PurePosixPath]:
    """The note files of the `stored` runs not `kept` (a prune removes them with their run)."""
    keep = {run.run_id for run in kept}
    return frozenset(path for run in stored if run.run_id not in keep for kind in KINDS
                     if (root / (path := note_path(run, kind))).is_file())
