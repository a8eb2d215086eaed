"""The stored runs' identities and the facts a baseline is chosen by (run id, time, commit,
branch, environment with its fingerprint and pre-flight verdict), read without their results;
then, in full, only the runs a comparison uses.

`compare` uses the baseline's runs and the newest runs of history before them (the rule's
window, analyze/evidence.py), yet reading every run in full (store/reader.py) made the
Run objects of the whole history first: at 10,000 runs x 1,000 benchmarks, minutes and
gigabytes before a single verdict. The index reads the part of each run file before its
results (written last) and only the run columns of a Parquet archive; `read_in_full` then
reads just the chosen runs (from a Parquet archive, only their rows). Runs are taken as the
reader takes them: run files first, then archives, each in path order, the first copy of a
run counting, and oldest first after the filter. Legacy JSON archives, run documents of an
older schema and Parquet files torch-bench did not write are read in full right away.

A chosen run that cannot be read in full (a file damaged where the index did not look)
raises `IndexMismatch`: the caller reads the whole history instead, so a damaged file never
changes which runs a comparison uses."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from torch_bench.decoding import MAX_JSON_CHARS
from torch_bench.errors import UserError
from torch_bench.fileio import parse_json, read_bytes, read_text
from torch_bench.results.document import load_run
from torch_bench.results.schema import SCHEMA_VERSION, Run
from torch_bench.store.archive import PARQUET_MAGIC, decode_archive
from torch_bench.store.layout import archive_files, run_files
from torch_bench.store.reader import EVERY_RUN, RunFilter, sort_runs

RESULTS_KEY = '"results":'
FACT_KEYS = {"schema", "run_id", "created_at", "git", "env"}


class IndexMismatch(Exception):
    """A run the index listed could not be read in full."""


@dataclass(frozen=True)
class IndexedRun:
    """What `Run` offers a baseline's choice, without the results (`run`: the whole run,
    when reading its facts already read it)."""
    run_id: str
    created_at: str
    git: Mapping[str, Any]
    env: Mapping[str, Any]
    source: Path
    run: Run | None = None

    # Run's own properties: they read nothing but `env`
    fingerprint = Run.fingerprint
    trusted = Run.trusted


@dataclass(frozen=True)
class RunIndex:
    runs: tuple[IndexedRun, ...]  # oldest first, filtered
    problems: tuple[str, ...] = field(default_factory=tuple)


def index_history(root: str | os.PathLike, where: RunFilter = EVERY_RUN) -> RunIndex:
    folder = Path(root)
    if not folder.is_dir():
        raise UserError(f"{folder}: no such data folder")
    found: list[IndexedRun] = []
    problems: list[str] = []
    for path in run_files(folder):
        try:
            found.append(_run_file_entry(path))
        except UserError as exc:
            problems.append(str(exc))
    for path in archive_files(folder):
        try:
            found.extend(_archive_entries(path, problems))
        except UserError as exc:
            problems.append(str(exc))
    runs, seen = [], set()
    for entry in found:
        if entry.run_id in seen:
            continue
        seen.add(entry.run_id)
        if where.accepts(entry):  # type: ignore[arg-type]  (the facts it reads are there)
            runs.append(entry)
    return RunIndex(tuple(sort_runs(runs)), tuple(problems))  # type: ignore[arg-type]


def _run_file_entry(path: Path) -> IndexedRun:
    source = str(path)
    text = read_text(path)
    facts = _facts(_members_before_results(text, source))
    if facts is None:
        facts = _facts(parse_json(text, source))
    if facts is None:  # another schema version, or not a run: read and checked in full
        return _entry_of(load_run(path), path)
    return IndexedRun(*facts, source=path)


def _members_before_results(text: str, source: str) -> dict | None:
    """The members of a run document before its `results`, which torch-bench writes last:
    its facts without parsing a thousand results. None unless that part parses on its own
    as an object holding every fact (results not last, a file too large to read), and the
    whole text is parsed then. A `"results":` inside a string cannot match (its quotes are
    escaped there); one in a nested object leaves the part before it unbalanced."""
    if len(text) > MAX_JSON_CHARS:
        return None
    start = 0
    while (at := text.find(RESULTS_KEY, start)) >= 0:
        head = text[:at].rstrip()
        if head.endswith(","):
            try:
                members = parse_json(head[:-1] + "}", source)
            except UserError:
                members = None
            if isinstance(members, dict):
                return members if FACT_KEYS <= members.keys() else None
        start = at + len(RESULTS_KEY)
    return None


def _facts(document: Any) -> tuple[str, str, dict, dict] | None:
    if not isinstance(document, dict) or not isinstance(document.get("schema"), dict) or \
            document["schema"].get("version") != SCHEMA_VERSION:
        return None
    run_id, created_at = document.get("run_id"), document.get("created_at")
    git, env = document.get("git", {}), document.get("env", {})
    if not (isinstance(run_id, str) and isinstance(created_at, str)
            and isinstance(git, dict) and isinstance(env, dict)):
        return None
    return run_id, created_at, git, env


def _entry_of(run: Run, source: Path) -> IndexedRun:
    return IndexedRun(run.run_id, run.created_at, run.git, run.env, source, run)


def _archive_entries(path: Path, problems: list[str]) -> list[IndexedRun]:
    data = read_bytes(path)
    if data[:4] == PARQUET_MAGIC:
        from torch_bench.store import columnar
        facts = columnar.run_facts(data, str(path))
        if facts is not None:
            return [IndexedRun(run_id, created_at, _mapping(_mapping(run).get("git")),
                               _mapping(_mapping(run).get("env")), path)
                    for run_id, created_at, run in facts]
    archive, found = decode_archive(data, str(path))
    problems.extend(found)
    return [_entry_of(run, path) for run in archive.runs]


def _mapping(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def read_in_full(chosen: Iterable[IndexedRun | Run]) -> list[Run]:
    """The chosen runs in full, in the order given (index entries read from where the index
    found them, each file once; runs already read as they are); IndexMismatch when one
    cannot be read."""
    chosen = list(chosen)
    read: dict[str, Run] = {}
    from_archives: dict[Path, set[str]] = {}
    for entry in chosen:
        if isinstance(entry, Run) or entry.run is not None or entry.run_id in read:
            continue
        if entry.source.suffix == ".json":
            try:
                run = load_run(entry.source)
            except UserError as exc:
                raise IndexMismatch(str(exc)) from None
            if run.run_id != entry.run_id:
                raise IndexMismatch(f"{entry.source}: holds run {run.run_id}, indexed as "
                                    f"{entry.run_id}")
            read[run.run_id] = run
        else:
            from_archives.setdefault(entry.source, set()).add(entry.run_id)
    for path, wanted in from_archives.items():
        try:
            archive, problems = decode_archive(read_bytes(path), str(path), only=wanted)
        except (UserError, OSError) as exc:
            raise IndexMismatch(str(exc)) from None
        got = {run.run_id: run for run in archive.runs if run.run_id in wanted}
        if problems or set(got) != wanted:
            raise IndexMismatch(f"{path}: the runs indexed there do not all read back")
        read.update(got)
    return [entry if isinstance(entry, Run) else entry.run or read[entry.run_id]
            for entry in chosen]
