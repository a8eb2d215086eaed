"""Reading a data folder into Columns, remembering what each file held, so the next build
into the same site reads only the files that are new or changed.

The cache is two files in the site's build-cache folder: `history.json` lists, per data file
(run files, then archives, in the reader's order) its key, the problems found in it, the
facts of its runs and which descriptor table its rows use (tables are shared: most runs
measure the same benchmarks) and which of two row files holds its rows; `history.parquet`
holds the rows of the files known when it was written, `history-tail.parquet` those of the
files read since, each file's rows one after the other (`rows_parquet`: compressed, the
quartiles as one half width where that is exact, in row groups that end only at a file's
end, read back by a few threads and taken as they are). A build that reads a few new files writes
the tail and the index again, not the whole history's rows; once the tail holds more than
TAIL_SHARE of the rows, or a file of the first part is gone or changed, both are written
anew as one.
A file's key is its git blob id when the data folder is a git checkout and the file is
committed unchanged (so a fresh clone of the data branch, as every CI job makes, still finds
its files in a cache restored from an earlier job), else its size and modification time in
nanoseconds: a file rewritten in place (`data rename`) or replaced (`data compact`) gets a new
key either way. The cache also carries a fingerprint of the tool's version and of the code
that makes rows from run documents (`reader_fingerprint`), so a tool that would read the
files differently never uses it; a change to the pages alone keeps it.

Reading with the cache gives exactly the Columns that reading every file would (tested).
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import importlib.util
import io
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import torch_bench
from torch_bench.errors import LeftOutOfCheckout, UserError
from torch_bench.fileio import write_bytes_atomic
from torch_bench.render.archive_rows import block_of_archive
from torch_bench.render.columns import (
    ROW_FIELDS,
    Columns,
    Descriptor,
    RowBlock,
    block_of_runs,
    join_blocks,
)
from torch_bench.render.packs import json_bytes
from torch_bench.render.workers import on_threads
from torch_bench.results.document import load_run
from torch_bench.store.archive import decode_archive
from torch_bench.store.columnar import arrow_of, numbers_of, valid_of
from torch_bench.store.git import Git
from torch_bench.store.layout import archive_files, is_archive_name, is_data_path, run_files
from torch_bench.store.reader import EVERY_RUN, RunFilter

# Version history: 1 -- rows in a NumPy .npz file; 2 -- rows in Parquet, q1 and q3 as a half
# width around the median; 3 -- the rows in two parts, the second the files read since the
# first was written.
CACHE_FORMAT = 3
# The modules whose code decides what the cache holds.
READER_MODULES = ("torch_bench.render.columns", "torch_bench.render.history_cache",
                  "torch_bench.render.archive_rows",
                  "torch_bench.results.schema", "torch_bench.results.document",
                  "torch_bench.store.archive", "torch_bench.store.columnar")
INDEX_NAME = "history.json"
ROWS_NAME = "history.parquet"
TAIL_NAME = "history-tail.parquet"
CACHE_NAMES = (INDEX_NAME, ROWS_NAME, TAIL_NAME)
BASE, TAIL = 0, 1  # the two parts of the cached rows
TAIL_SHARE = 0.1  # rows of the tail part, at most, before both parts are written as one
ROW_GROUP_ROWS = 1 << 20  # rows of a Parquet row group, at least (but the last)


@dataclass
class FileEntry:
    """What one data file held."""
    path: str  # relative to the data folder
    key: str
    problems: list[str]
    block: RowBlock
    table: str = ""  # digest of block.descriptors
    part: int | None = None  # which part of the cache holds its rows; None: read just now


@dataclass
class CachedHistory:
    columns: Columns
    problems: list[str]
    files_read: int  # data files parsed because the cache did not have them
    files_cached: int
    # The cache to keep with the site: names inside the cache folder -> files written into
    # a temporary folder (moved into the site by the writer); None when it did not change.
    # The names of CACHE_NAMES missing here are kept as they are.
    cache_files: dict[str, Path] | None = None
    scratch: Path | None = None  # the temporary folder, removed by `discard`

    def discard(self) -> None:
        if self.scratch is not None:
            for child in self.scratch.iterdir():
                child.unlink(missing_ok=True)
            self.scratch.rmdir()
            self.scratch = None


@functools.cache
def reader_fingerprint() -> str:
    hasher = hashlib.sha1(torch_bench.__version__.encode())
    for name in READER_MODULES:
        source = importlib.util.find_spec(name)
        if source is None or source.origin is None:
            continue
        hasher.update(name.encode() + b"\0" + Path(source.origin).read_bytes())
    return hasher.hexdigest()[:20]


def file_key(path: Path) -> str:
    stat = path.stat()
    return f"{stat.st_size}:{stat.st_mtime_ns}"


def git_blob_ids(folder: Path) -> dict[str, str]:
    """Blob id of every file under `folder` that git tracks and that is unchanged in the work
    tree (paths relative to `folder`); empty when it is not a git checkout or git fails.
    Git's environment is the project's fixed one, as for `blob_content`."""
    env = Git(folder).env()

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True,
                                  text=True, timeout=120, env=env)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout if done.returncode == 0 else None

    staged = git("ls-files", "--stage", "-z", "--", ".")
    modified = git("ls-files", "--modified", "--deleted", "-z", "--", ".")
    if staged is None or modified is None:
        return {}
    changed = set(modified.split("\0"))
    blobs = {}
    for entry in staged.split("\0"):
        info, _, path = entry.partition("\t")
        fields = info.split()
        if len(fields) == 3 and fields[2] == "0" and path not in changed:
            blobs[path] = f"git:{fields[1]}"
    return blobs


def data_files(root: Path) -> list[Path]:
    """Run files then archives, each in path order: the order the reader takes them in."""
    return [*run_files(root), *archive_files(root)]


def with_files_left_out(folder: Path, on_disk: list[Path], blobs: dict[str, str]) -> list[Path]:
    """The data files of a folder in the reader's order (`data_files`), with those git tracks
    there unchanged but that are not in the work tree: a sparse checkout left them out (a
    publish leaves out what the build cache holds, store/publish.py). Their keys are their
    blob ids, so the cache still finds them; any other is read from git."""
    present = set(on_disk)
    left_out = [folder / relative for relative in blobs
                if is_data_path(PurePosixPath(relative)) and folder / relative not in present]
    if not left_out:
        return on_disk
    return sorted([*on_disk, *left_out], key=lambda path: (is_archive_name(path.name), path))


def read_data_file(folder: Path, path: Path, blob: str | None,
                   shared: dict) -> tuple[list[str], RowBlock]:
    """`read_file`, also for a tracked file the work tree left out (`blob`: its key): read
    from git, which fetches it in a partial clone."""
    if blob is None or path.exists():
        return read_file(path, shared)
    content = blob_content(folder, blob.removeprefix("git:"))
    if content is None:
        raise LeftOutOfCheckout(f"{path}: left out of the work tree (a sparse checkout), and "
                                f"git cannot give it; check it out and build again")
    with tempfile.TemporaryDirectory(prefix=".torch-bench-blob-") as temp:
        copy = Path(temp) / path.name
        copy.write_bytes(content)
        problems, block = read_file(copy, shared)
    return [problem.replace(str(copy), str(path)) for problem in problems], block


def blob_content(folder: Path, oid: str) -> bytes | None:
    """A blob of the repository `folder` is in (fetched, in a partial clone, from a remote
    that needs no credentials); None when git cannot give it. Git's environment is the
    project's fixed one (store/git.py: no prompts, no GIT_DIR from outside)."""
    try:
        done = subprocess.run(["git", "-C", str(folder), "cat-file", "blob", oid],
                              capture_output=True, timeout=600, env=Git(folder).env())
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def read_file(path: Path, shared: dict) -> tuple[list[str], RowBlock]:
    """(problems, block) of one data file; a file that cannot be read gives an empty block."""
    problems: list[str] = []
    runs = []
    try:
        if is_archive_name(path.name):
            data = path.read_bytes()
            block = block_of_archive(data, shared)  # None: not one torch-bench wrote
            if block is not None:
                return problems, block
            archive, found = decode_archive(data, str(path))
            problems.extend(found)
            runs = list(archive.runs)
        else:
            runs = [load_run(path)]
    except UserError as exc:
        problems.append(str(exc))
    except OSError as exc:
        problems.append(f"{path}: cannot read ({exc.strerror or exc})")
    return problems, block_of_runs(runs, shared)


def accepts(where: RunFilter) -> Callable[[dict[str, Any]], bool]:
    return lambda facts: where.accepts_values(
        repository=facts["repository"], branch=facts["branch"],
        fingerprint=facts["fingerprint_filter"], created_at=facts["created_at"])


def load_columns(root: str | os.PathLike, cache_dir: Path | None,
                 where: RunFilter = EVERY_RUN,
                 progress: Callable[[str], None] = lambda message: None,
                 scratch_in: Path | None = None) -> CachedHistory:
    """Columns of every run in the data folder `root` that `where` accepts, reading only the
    files the cache in `cache_dir` (if any) does not already hold. With `scratch_in`, the
    cache to keep next time is written into a new folder there (CachedHistory.cache_files),
    unless it is the one in `cache_dir` unchanged."""
    folder = Path(root)
    if not folder.is_dir():
        raise UserError(f"{folder}: no such data folder")
    cached = read_cache(cache_dir) if cache_dir is not None else {}
    entries: list[FileEntry] = []
    shared: dict = {}
    read = 0
    on_disk = data_files(folder)
    blobs = git_blob_ids(folder)
    paths = with_files_left_out(folder, on_disk, blobs)
    for number, path in enumerate(paths, 1):
        relative = path.relative_to(folder).as_posix()
        try:
            key = blobs.get(relative) or file_key(path)
        except OSError:
            key = ""
        entry = cached.get(relative)
        if entry is None or entry.key != key or not key:
            problems, block = read_data_file(folder, path, blobs.get(relative), shared)
            entry = FileEntry(relative, key, problems, block)
            read += 1
            if read % 500 == 0:
                progress(f"read {read} data files ({number}/{len(paths)})")
        entries.append(entry)
    problems = [p for e in entries for p in e.problems]
    unchanged = cache_dir is not None and read == 0 and len(entries) == len(cached)
    scratch, cache_files = None, None
    # The cache is written before the join, and the files' rows are let go once joined:
    # a whole history's rows are then held at most twice at a time (10,000 x 1,000: 440 MB
    # each), not three times, and the build that follows holds them once.
    if scratch_in is not None and not unchanged:
        scratch_in.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=".torch-bench-history-", dir=scratch_in))
    try:
        if scratch is not None:
            cache_files = write_cache(scratch, entries,
                                      sum(e.part == BASE for e in cached.values()))
        blocks = [e.block for e in entries]
        files = len(blocks)
        del entries, cached
        columns = join_blocks(blocks, keep_run=accepts(where))
        del blocks
    except BaseException:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
        raise
    return_arrow_memory()
    return CachedHistory(columns, problems, read, files - read, cache_files, scratch)


def return_arrow_memory() -> None:
    """Give the memory Arrow's allocator kept after reading or writing Parquet back to the
    system. mimalloc, its default, keeps what was freed for later use: after reading the
    cache of 10,000 runs x 1,000 benchmarks, about 790 MB that the build, which does not use
    Arrow again, would have carried to its end."""
    pa.default_memory_pool().release_unused()


# -- The cache files ---------------------------------------------------------------------------


def cached_keys(folder: Path) -> dict[str, str]:
    """Data file (path in the data folder) -> key, of every file the cache in `folder` holds
    rows of, when this reader can use it; empty otherwise. Files whose keys are blob ids can
    be left out of a checkout (`with_files_left_out`)."""
    try:
        index = json.loads((folder / INDEX_NAME).read_text(encoding="utf-8"))
        if index.get("format") != CACHE_FORMAT or index.get("reader") != reader_fingerprint():
            return {}
        return {str(item["path"]): str(item["key"]) for item in index["files"]}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def table_digest(descriptors: Iterable[Descriptor]) -> str:
    text = json.dumps([d.to_json() for d in descriptors], separators=(",", ":"))
    return hashlib.sha1(text.encode()).hexdigest()[:20]


def write_cache(folder: Path, entries: list[FileEntry], base_files: int = 0) -> dict[str, Path]:
    """Write the cache of `entries` into `folder`; returns the files written (name -> path).
    `base_files`: how many files the first part of the cache read held. When every one of
    them is still in `entries` unchanged and the rest is a small share of the rows, only the
    index and the tail are written: the first part stays as it is."""
    kept_base = [e for e in entries if e.part == BASE]
    rest = [e for e in entries if e.part != BASE]
    reuse = (bool(kept_base) and len(kept_base) == base_files
             and sum(e.block.size for e in rest)
             <= TAIL_SHARE * sum(e.block.size for e in entries))
    for entry in rest:  # the first part's entries are already marked BASE
        entry.part = TAIL if reuse else BASE
    tables: dict[str, list] = {}
    digests: dict[tuple, str] = {}
    files = []
    for entry in entries:
        if not entry.table:
            same = tuple(map(id, entry.block.descriptors))
            if same not in digests:
                digests[same] = table_digest(entry.block.descriptors)
            entry.table = digests[same]
        tables.setdefault(entry.table, [d.to_json() for d in entry.block.descriptors])
        files.append({"path": entry.path, "key": entry.key, "problems": entry.problems,
                      "runs": entry.block.runs, "table": entry.table,
                      "statuses": entry.block.statuses, "errors": entry.block.errors,
                      "rows": entry.block.size, "part": entry.part})
    index = {"format": CACHE_FORMAT, "reader": reader_fingerprint(), "tables": tables,
             "files": files}
    written = {INDEX_NAME: folder / INDEX_NAME}
    write_bytes_atomic(folder / INDEX_NAME, json_bytes(index))
    for name, part in ((ROWS_NAME, BASE), (TAIL_NAME, TAIL)):
        if reuse and part == BASE:
            continue
        held = [e for e in entries if e.part == part]
        ends = np.cumsum([e.block.size for e in held]).tolist()
        write_bytes_atomic(folder / name, rows_parquet(joined_rows(held), ends))
        written[name] = folder / name
    return written


def joined_rows(entries: list[FileEntry]) -> dict[str, np.ndarray]:
    return {name: np.concatenate([e.block.rows[name] for e in entries] or
                                 [np.zeros(0, dtype)]).astype(dtype)
            for name, dtype in ROW_FIELDS}


def rows_parquet(rows: dict[str, np.ndarray], file_ends: Sequence[int] = ()) -> bytes:
    """The rows as Parquet (zstd; floats byte-stream-split, which lets zstd shrink their
    sign and exponent bytes). q1 and q3 are stored as the half width of the interquartile
    range around the median, as every summary has them; the few rows where median -/+ half
    does not give back the very same bits also keep their q1 and q3 (nulls cost nothing).
    `file_ends`: where each data file's rows end; row groups end only there, once they hold
    ROW_GROUP_ROWS rows, so each file's rows lie in one row group (`read_cache` takes them
    as they are read, without joining groups)."""
    median, q1, q3 = rows["median"], rows["q1"], rows["q3"]
    with np.errstate(invalid="ignore", over="ignore"):
        half = (q3 - q1) / 2
        exact = same_bits(median - half, q1) & same_bits(median + half, q3)
    columns = {name: arrow_of(rows[name]) for name, _ in ROW_FIELDS
               if name not in ("q1", "q3")}
    columns["half"] = arrow_of(half)
    for name, values in (("q1", q1), ("q3", q3)):
        columns[name] = arrow_of(values, null=exact)
    table = pa.table(columns)
    out = io.BytesIO()
    with pq.ParquetWriter(out, table.schema, compression="zstd",
                          use_dictionary=["desc", "status", "error", "n"],
                          use_byte_stream_split=["median", "half", "q1", "q3"]) as writer:
        for start, end in row_group_spans(len(median), file_ends):
            writer.write_table(table.slice(start, end - start),
                               row_group_size=max(1, end - start))
    return out.getvalue()


def row_group_spans(total: int, file_ends: Sequence[int]) -> list[tuple[int, int]]:
    """(start, end) of each row group: cut at the first file end after ROW_GROUP_ROWS rows
    (the last group takes the rest); one empty group for no rows."""
    spans, start = [], 0
    for end in file_ends:
        if end - start >= ROW_GROUP_ROWS and end < total:
            spans.append((start, end))
            start = end
    spans.append((start, total))
    return spans


def rows_of_parquet(path: Path) -> dict[str, np.ndarray]:
    """The rows `rows_parquet` wrote, bit for bit."""
    rows = RowGroups(row_groups_of_parquet(path))
    return rows.span(0, rows.total)


def row_groups_of_parquet(path: Path) -> list[dict[str, np.ndarray]]:
    """The rows `rows_parquet` wrote, bit for bit, one dict per row group, read on a few
    threads (Parquet decoding lets go of the GIL). Arrow's own thread pool (`use_threads`)
    is not used: a process that started it can abort as it exits."""
    # ParquetFile, not read_table: read_table imports pyarrow.dataset, and pyarrow's own
    # conversions to numpy import pandas; both cost more than reading a whole history's rows
    with pq.ParquetFile(path) as rows_file:
        count = rows_file.num_row_groups
        if count < 2:
            return [rows_of_table(rows_file.read(use_threads=False))]

    def read_group(index: int) -> dict[str, np.ndarray]:
        with pq.ParquetFile(path) as rows_file:
            return rows_of_table(rows_file.read_row_group(index, use_threads=False))
    return on_threads(read_group, range(count))


def rows_of_table(table: pa.Table) -> dict[str, np.ndarray]:
    def column(name: str) -> pa.Array:
        chunked = table.column(name)  # one chunk as a rule: joining it would copy it
        return chunked.chunk(0) if chunked.num_chunks == 1 else chunked.combine_chunks()
    rows = {name: numbers_of(column(name)).astype(dtype, copy=False)
            for name, dtype in ROW_FIELDS if name not in ("q1", "q3")}
    half = numbers_of(column("half"))
    for name, sign in (("q1", -1.0), ("q3", 1.0)):
        kept = column(name)
        remade = rows["median"] + sign * half
        valid = valid_of(kept)
        remade[valid] = numbers_of(kept)[valid]
        rows[name] = remade
    return rows


def same_bits(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a.view(np.int64) == b.view(np.int64)


def read_cache(folder: Path) -> dict[str, FileEntry]:
    """The entries of the cache in `folder`; empty when it is missing, of another format or
    version, or damaged in any way (the cache is only ever a shortcut)."""
    try:
        index = json.loads((folder / INDEX_NAME).read_text(encoding="utf-8"))
        if index.get("format") != CACHE_FORMAT or index.get("reader") != reader_fingerprint():
            return {}
        parts = [RowGroups(row_groups_of_parquet(folder / ROWS_NAME)),
                 RowGroups(row_groups_of_parquet(folder / TAIL_NAME))]
        tables = {digest: [Descriptor.from_json(item) for item in items]
                  for digest, items in index["tables"].items()}
        entries: dict[str, FileEntry] = {}
        starts = [0, 0]
        for item in index["files"]:
            part = item["part"]
            if part not in (BASE, TAIL):
                return {}
            rows, start = parts[part], starts[part]
            end = start + int(item["rows"])
            block = RowBlock(item["runs"], tables[item["table"]], item["statuses"],
                             item["errors"], rows.span(start, end), table_id=item["table"])
            entries[item["path"]] = FileEntry(item["path"], item["key"], item["problems"],
                                              block, item["table"], part)
            starts[part] = end
        if starts != [rows.total for rows in parts]:
            return {}
        return entries
    except (OSError, EOFError, ValueError, KeyError, TypeError, IndexError, pa.ArrowException):
        return {}


class RowGroups:
    """A cache part's rows as read, one dict of columns per row group."""

    def __init__(self, groups: list[dict[str, np.ndarray]]) -> None:
        self.groups = groups
        self.starts = np.cumsum([0, *(len(g["run"]) for g in groups)]).tolist()
        self.total = self.starts[-1]

    def span(self, start: int, end: int) -> dict[str, np.ndarray]:
        """Rows start..end: views of one row group's columns (as `rows_parquet` writes
        them), else their pieces joined."""
        if not 0 <= start <= end <= self.total:
            raise IndexError(f"rows {start}..{end} of {self.total}")
        first = bisect.bisect_right(self.starts, start) - 1
        pieces = []
        for index in range(min(first, len(self.groups) - 1), len(self.groups)):
            lo, hi = self.starts[index], self.starts[index + 1]
            group = self.groups[index]
            pieces.append({name: column[max(start, lo) - lo:min(end, hi) - lo]
                           for name, column in group.items()})
            if end <= hi:
                break
        if len(pieces) == 1:
            return pieces[0]
        return {name: np.concatenate([piece[name] for piece in pieces]) for name in pieces[0]}
