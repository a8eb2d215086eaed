"""Archive files: many runs of one month in one file, written by `torch-bench data compact`
and read back by the history reader.

Compaction writes Apache Parquet (store/columnar.py: one row per result, zstd). Older
versions wrote one gzip-compressed JSON document, still read, and converted to Parquet by
the next compaction:

    {"schema": {"name": "torch-bench/archive", "version": 1},
     "month": "2026/01", "samples": "kept" | "summarised",
     "runs_sha256": <hex digest of the compact JSON of "runs">, "runs": [<run document>, ...]}

With `"samples": "summarised"` every result keeps its summary statistics (n, median, mean,
std, IQR, min, max, p90) but not its raw samples.

Every run was validated before it was archived, so a reader may trust an archive whose runs
still match `runs_sha256` and skip validating them again (most of the cost of loading); a
mismatch (an edit by hand) means every run in it is validated as usual. `data verify`
validates everything regardless.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import zlib
from collections.abc import Iterable
from dataclasses import dataclass

from torch_bench.errors import InvalidDocument
from torch_bench.fileio import decode_text, parse_json
from torch_bench.results.document import parse_run
from torch_bench.results.schema import SCHEMA_VERSION, Run

ARCHIVE_NAME = "torch-bench/archive"
# Version history:
#   1 -- torch-bench 0.1.0: first version.
ARCHIVE_VERSION = 1
PARQUET_MAGIC = b"PAR1"  # the first bytes of a Parquet file

# store/columnar.py (and pyarrow, slow to import) is imported by the functions that need it,
# so commands that never meet a Parquet archive do not wait for it.


@dataclass(frozen=True)
class Archive:
    month: str  # "YYYY/MM"
    runs: tuple[Run, ...]
    summarised: bool


def drop_samples(run: Run) -> Run:
    return run.with_results(r.without_samples() for r in run.results)


def archive_rows(runs: Iterable[Run]) -> int:
    """The rows the runs take in a Parquet archive: one a result, one for a run without."""
    return sum(max(1, len(run.results)) for run in runs)


def digest(run_ids: Iterable[str]) -> str:
    """A short name for an archive from the runs it holds, so a new archive never overwrites
    an old one and the same runs always give the same name."""
    return hashlib.sha256("\n".join(sorted(run_ids)).encode()).hexdigest()[:12]


def _archived_runs(archive: Archive) -> list[Run]:
    runs = sorted(archive.runs, key=lambda run: (run.created_at, run.run_id))
    return [drop_samples(run) for run in runs] if archive.summarised else runs


def encode_archive(archive: Archive) -> bytes:
    """The archive as Parquet, the format compaction writes."""
    from torch_bench.store import columnar
    return columnar.encode(_archived_runs(archive), {
        "month": archive.month, "samples": "summarised" if archive.summarised else "kept"})


def encode_json_archive(archive: Archive) -> bytes:
    """The archive as gzip-compressed JSON, as torch-bench wrote it before Parquet."""
    runs = _archived_runs(archive)
    entries = [run.to_dict() for run in runs]
    document = {
        "schema": {"name": ARCHIVE_NAME, "version": ARCHIVE_VERSION},
        "month": archive.month,
        "samples": "summarised" if archive.summarised else "kept",
        "runs_sha256": _runs_digest(entries),
        "runs": entries,
    }
    text = json.dumps(document, separators=(",", ":")).encode()
    return gzip.compress(text, compresslevel=9, mtime=0)


def _runs_digest(entries: list) -> str:
    return hashlib.sha256(json.dumps(entries, separators=(",", ":")).encode()).hexdigest()


def decode_archive(data: bytes, source: str, trust: bool = True,
                   only: set[str] | None = None) -> tuple[Archive, list[str]]:
    """The archive (Parquet or JSON) and the problems of runs inside it (each named
    `<file>: runs[i]: ...`, skipped). A file that cannot be read at all raises
    InvalidDocument naming it. With `trust`, runs of an archive torch-bench wrote and nobody
    changed (a JSON archive matching its digest, a Parquet archive with its metadata) are not
    validated again. `only`: the ids of the runs wanted (default: all); a Parquet archive
    decodes no other run's rows."""
    if data[:4] == PARQUET_MAGIC:
        return _decode_parquet(data, source, trust, only)
    try:
        text = gzip.decompress(data)
    except (OSError, EOFError, zlib.error):
        raise InvalidDocument(f"{source}: not a readable gzip archive") from None
    document = parse_json(decode_text(text, source), source)
    if not isinstance(document, dict) or document.get("schema") != {
            "name": ARCHIVE_NAME, "version": ARCHIVE_VERSION}:
        raise InvalidDocument(f"{source}: not a torch-bench archive (version "
                              f"{ARCHIVE_VERSION}): schema is {document.get('schema')!r}"
                              if isinstance(document, dict) else f"{source}: not an object")
    entries = document.get("runs")
    if not isinstance(entries, list):
        raise InvalidDocument(f"{source}: runs: expected a list")
    trusted = trust and document.get("runs_sha256") == _runs_digest(entries)
    runs, problems = [], []
    for index, entry in enumerate(entries):
        try:
            if trusted and isinstance(entry, dict) and \
                    entry.get("schema", {}).get("version") == SCHEMA_VERSION:
                runs.append(Run.from_dict(entry))
            else:
                runs.append(parse_run(entry, f"{source}: runs[{index}]"))
        except InvalidDocument as exc:
            problems.append(str(exc))
    if only is not None:
        runs = [run for run in runs if run.run_id in only]
    archive = Archive(str(document.get("month", "")), tuple(runs),
                      document.get("samples") == "summarised")
    return archive, problems


def _decode_parquet(data: bytes, source: str, trust: bool,
                    only: set[str] | None) -> tuple[Archive, list[str]]:
    from torch_bench.store import columnar
    metadata, documents, runs = columnar.decode(data, source, only)
    problems = []
    if documents is None and not trust:
        documents = [run.to_dict() for run in runs]
    if documents is not None:
        runs = []
        for index, document in enumerate(documents):
            try:
                runs.append(parse_run(document, f"{source}: runs[{index}]"))
            except InvalidDocument as exc:
                problems.append(str(exc))
    # A file another tool rewrote may have lost the metadata: its runs tell the month.
    month = metadata.get("month") or (runs[0].created_at[:7].replace("-", "/") if runs else "")
    archive = Archive(str(month), tuple(runs), metadata.get("samples") == "summarised")
    return archive, problems
