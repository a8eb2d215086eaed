"""Runs as an Apache Parquet table, one row per result: the format `data compact` writes
archives in and `data export --parquet` writes the whole history in, readable as it is by
pandas, polars, DuckDB and ClickHouse.

Columns (each row repeats its run's columns; Parquet's dictionary encoding stores each
distinct value once per column chunk, so the repetition costs little on disk):

    run_id, created_at, repository, branch, sha, fingerprint    the run's identity and facts
    run          JSON object {"git", "ci", "env", "config"}: the rest of the run document
    result       position of the result in its run; null in the one row of a run without
                 results (whose result columns are all null)
    suite, group, name, params (JSON object), benchmark_id, metric, unit, direction, status
    n, median, mean, std, iqr, min, max, p90                   the summary (null: none)
    samples      list of float64 (empty when the archive keeps summaries only)
    error        text or null
    extra        JSON object

Rows are ordered by run (created_at, run_id) then result. The file's key-value metadata
`torch-bench` holds {"schema": {"name", "version"}, "month", "samples"}. Compressed with zstd.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from torch_bench.errors import InvalidDocument
from torch_bench.results.schema import SCHEMA_NAME, SCHEMA_VERSION, Result, Run
from torch_bench.results.stats import Summary
from torch_bench.store.archive_bounds import MAX_ARCHIVE_DATA_BYTES, MAX_ARCHIVE_ROWS

METADATA_KEY = b"torch-bench"
FORMAT_NAME = "torch-bench/archive"
# Version history (the JSON archive of store/archive.py is version 1):
#   2 -- Parquet, one row per result.
FORMAT_VERSION = 2

SUMMARY_FIELDS = tuple(Summary.__dataclass_fields__)
RUN_FACTS = ("repository", "branch", "sha")
TEXT_COLUMNS = ("run_id", "created_at", *RUN_FACTS, "fingerprint", "run", "suite", "group",
                "name", "params", "benchmark_id", "metric", "unit", "direction", "status",
                "error", "extra")
SCHEMA = pa.schema([
    *((name, pa.string()) for name in ("run_id", "created_at", *RUN_FACTS, "fingerprint",
                                       "run")),
    ("result", pa.int32()),
    *((name, pa.string()) for name in ("suite", "group", "name", "params", "benchmark_id",
                                       "metric", "unit", "direction", "status")),
    ("n", pa.int64()),
    *((name, pa.float64()) for name in SUMMARY_FIELDS[1:]),
    ("samples", pa.list_(pa.float64())),
    ("error", pa.string()),
    ("extra", pa.string()),
])
# Written with a dictionary and read back as dictionary arrays: few distinct values each.
DICTIONARY_COLUMNS = ["run_id", "created_at", *RUN_FACTS, "fingerprint", "run", "suite",
                      "group", "name", "params", "benchmark_id", "metric", "unit",
                      "direction", "status", "error", "extra"]
# Floats stored byte plane by byte plane compress better (their sign and exponent bytes
# repeat); pandas, polars, DuckDB and ClickHouse all read this encoding.
SPLIT_COLUMNS = [*SUMMARY_FIELDS[1:], "samples"]
# A month's run documents (environment, configuration) must fit one dictionary page, or
# Parquet falls back to writing each row's copy.
DICTIONARY_PAGE_LIMIT = 64 << 20
ROW_GROUP_ROWS = 1 << 20
WRITE_OPTIONS = {"compression": "zstd", "use_dictionary": DICTIONARY_COLUMNS,
                 "use_byte_stream_split": SPLIT_COLUMNS,
                 "dictionary_pagesize_limit": DICTIONARY_PAGE_LIMIT,
                 "write_page_checksum": True}
# What one archive may hold to be read at all, judged from its footer before any decoding
# (compaction writes none over MAX_ROWS).
MAX_ROWS = MAX_ARCHIVE_ROWS
MAX_DATA_BYTES = MAX_ARCHIVE_DATA_BYTES


def _text(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), allow_nan=False)


def runs_table(runs: Iterable[Run], metadata: dict[str, Any]) -> pa.Table:
    """The runs, in the order given, as a table of SCHEMA carrying `metadata`."""
    columns: dict[str, list] = {name: [] for name in SCHEMA.names}
    for run in runs:
        facts = {"run_id": run.run_id, "created_at": run.created_at,
                 **{key: run.git.get(key) for key in RUN_FACTS},
                 "fingerprint": run.fingerprint,
                 "run": _text({"git": dict(run.git), "ci": dict(run.ci), "env": dict(run.env),
                               "config": dict(run.config)})}
        for index, result in enumerate(run.results or (None,)):
            for key, value in facts.items():
                columns[key].append(value)
            _add_result(columns, None if result is None else index, result)
    table = pa.table(columns, schema=SCHEMA)
    return table.replace_schema_metadata({METADATA_KEY: _text(
        {"schema": {"name": FORMAT_NAME, "version": FORMAT_VERSION}, **metadata})})


def _add_result(columns: dict[str, list], index: int | None, result: Result | None) -> None:
    columns["result"].append(index)
    if result is None:
        for name in SCHEMA.names[SCHEMA.get_field_index("suite"):]:
            columns[name].append([] if name == "samples" else None)
        return
    for name in ("suite", "group", "name", "metric", "unit", "direction", "status", "error"):
        columns[name].append(getattr(result, name))
    columns["params"].append(_text(dict(result.params)))
    columns["benchmark_id"].append(result.benchmark_id)
    summary = result.summary
    for name in SUMMARY_FIELDS:
        columns[name].append(None if summary is None else getattr(summary, name))
    columns["samples"].append(list(result.samples))
    columns["extra"].append(_text(dict(result.extra)))


def write_table(table: pa.Table, where: Any) -> None:
    """Write `table` to a path or a pyarrow stream."""
    pq.write_table(table, where, row_group_size=ROW_GROUP_ROWS, **WRITE_OPTIONS)


def encode(runs: Sequence[Run], metadata: dict[str, Any]) -> bytes:
    sink = pa.BufferOutputStream()
    write_table(runs_table(runs, metadata), sink)
    return sink.getvalue().to_pybytes()


def decode(data: bytes, source: str, only: set[str] | None = None
           ) -> tuple[dict[str, Any], list[dict[str, Any]] | None, list[Run]]:
    """(metadata, None, runs) of a Parquet archive torch-bench wrote (its runs were validated
    before they were written), or (metadata, documents, []) of one it did not: its runs as
    run documents, to be validated. `only`: the ids of the runs wanted (default: all); the
    other runs' rows are not decoded. Raises InvalidDocument naming `source` as `open_archive`
    does, or when its rows are not as SCHEMA says."""
    file = open_archive(data, source, DICTIONARY_COLUMNS)
    try:
        # One thread: a process that started Arrow's thread pool can abort as it exits
        # (std::terminate on a worker still running), which would turn a CLI's success into
        # exit status 134. Decoding is Python-bound anyway.
        table = file.read(use_threads=False)
    except (pa.ArrowException, OSError) as exc:
        raise InvalidDocument(f"{source}: not a readable Parquet archive ({exc})") from None
    metadata = metadata_of(file)
    try:
        if only is not None:
            table = table.filter(pa.array(_rows_of_runs(table.column("run_id"), only)))
        rows = _rows(table)
    except (pa.ArrowException, ValueError, TypeError) as exc:
        raise InvalidDocument(f"{source}: not a torch-bench archive ({exc})") from None
    if written_by_us(metadata):
        try:
            return metadata, None, _runs(rows)
        except (KeyError, TypeError, ValueError, AttributeError):
            pass  # not as written: validate every run instead
    return metadata if isinstance(metadata, dict) else {}, _documents(rows), []


def open_archive(data: bytes, source: str, read_dictionary: Sequence[str]) -> pq.ParquetFile:
    """The Parquet file in `data`, its footer read and nothing decoded yet, with the
    `read_dictionary` columns to be read as dictionary arrays. Raises InvalidDocument naming
    `source` when it is not a readable Parquet file, lacks a column of SCHEMA (a file some
    other tool left under archive/) or holds more than MAX_ROWS rows or MAX_DATA_BYTES."""
    try:
        file = pq.ParquetFile(pa.BufferReader(data), page_checksum_verification=True)
        wrong = schema_problem(file.schema_arrow)
        if wrong:
            raise InvalidDocument(f"{source}: not a torch-bench archive: {wrong}")
        too_big = size_problem(file.metadata)
        if too_big:
            raise InvalidDocument(f"{source}: not read: {too_big}")
        # Asking for a dictionary column the file lacks raises KeyError: only now it has them.
        return pq.ParquetFile(pa.BufferReader(data), read_dictionary=list(read_dictionary),
                              page_checksum_verification=True)
    except (pa.ArrowException, OSError) as exc:
        raise InvalidDocument(f"{source}: not a readable Parquet archive ({exc})") from None


def size_problem(metadata: pq.FileMetaData) -> str | None:
    """Why a file is too big to be read as an archive, from its footer alone; None if not."""
    rows = metadata.num_rows
    if rows > MAX_ROWS:
        return f"{rows:,} rows, over the cap of {MAX_ROWS:,} an archive is read with"
    size = sum(metadata.row_group(i).total_byte_size for i in range(metadata.num_row_groups))
    if size > MAX_DATA_BYTES:
        return (f"{size:,} bytes of column data, over the cap of {MAX_DATA_BYTES:,} an "
                f"archive is read with")
    return None


def _rows_of_runs(run_ids: pa.ChunkedArray, only: set[str]) -> np.ndarray:
    """Which rows belong to the runs `only` names, judged once per distinct run id."""
    masks = [np.zeros(0, bool)]
    for chunk in run_ids.chunks:
        if not pa.types.is_dictionary(chunk.type):
            chunk = chunk.dictionary_encode()
        words = chunk.dictionary.to_pylist()
        wanted = np.asarray([word in only for word in words] + [False], bool)
        masks.append(wanted[dictionary_codes(chunk.indices, len(words))])
    return np.concatenate(masks)


def run_facts(data: bytes, source: str) -> list[tuple[str, str, Any]] | None:
    """(run id, created_at, the run's git, ci, env and config) of each run of a Parquet
    archive torch-bench wrote, in the order stored, read from those columns alone (each run's
    first row); None for one it did not write (its runs are to be read and validated in
    full). Raises InvalidDocument naming `source` as `open_archive` does."""
    names = ["run_id", "created_at", "run"]
    file = open_archive(data, source, names)
    if not written_by_us(metadata_of(file)):
        return None
    try:
        table = file.read(columns=names, use_threads=False)
        found: dict[Any, tuple[Any, Any]] = {}
        for batch in table.to_batches():
            run_ids = batch.column(0)
            if not pa.types.is_dictionary(run_ids.type):
                run_ids = run_ids.dictionary_encode()
            codes = dictionary_codes(run_ids.indices, -1)
            _, first = np.unique(codes, return_index=True)
            for row in np.sort(first).tolist():
                run_id = run_ids[row].as_py()
                if run_id not in found:
                    found[run_id] = (batch.column(1)[row].as_py(), batch.column(2)[row].as_py())
        facts = [(run_id, created, json.loads(run) if isinstance(run, str) else None)
                 for run_id, (created, run) in found.items()]
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise InvalidDocument(f"{source}: not a readable Parquet archive ({exc})") from None
    if any(not isinstance(run_id, str) or not isinstance(created, str)
           for run_id, created, _ in facts):
        return None
    return facts


def metadata_of(file: pq.ParquetFile) -> Any:
    """The file's torch-bench metadata as JSON ({} when it has none or it is not JSON)."""
    raw = (file.schema_arrow.metadata or {}).get(METADATA_KEY)
    try:
        return json.loads(raw) if raw else {}
    except ValueError:
        return {}


def written_by_us(metadata: Any) -> bool:
    """Whether the metadata says torch-bench wrote the file in this format."""
    return isinstance(metadata, dict) and metadata.get("schema") == {
        "name": FORMAT_NAME, "version": FORMAT_VERSION}


def schema_problem(schema: pa.Schema) -> str | None:
    for expected in SCHEMA:
        if expected.name not in schema.names:
            return f"no column {expected.name!r}"
        found = schema.field(expected.name).type
        if pa.types.is_dictionary(found):
            found = found.value_type
        if found != expected.type:
            return f"column {expected.name!r} is {found}, expected {expected.type}"
    return None


def _rows(table: pa.Table) -> dict[str, list]:
    """Every column as a Python list; a JSON column's distinct values are parsed once."""
    table = table.select(SCHEMA.names)
    columns = {}
    for name in SCHEMA.names:
        convert = json.loads if name in ("run", "params", "extra") else None
        if name == "samples":
            columns[name] = _lists(table.column(name))
        else:
            columns[name] = _values(table.column(name), convert)
    return columns


def _values(column: pa.ChunkedArray, convert: Callable[[str], Any] | None) -> list:
    values: list = []
    for chunk in column.chunks:
        if pa.types.is_dictionary(chunk.type):
            words = chunk.dictionary.to_pylist()
            if convert is not None:
                words = [convert(word) for word in words]
            words.append(None)
            values.extend(map(words.__getitem__,
                              dictionary_codes(chunk.indices, len(words) - 1).tolist()))
        else:
            plain = chunk.to_pylist()
            values.extend(plain if convert is None else
                          [None if v is None else convert(v) for v in plain])
    return values


def dictionary_codes(indices: pa.Array, null: int) -> np.ndarray:
    """A dictionary array's indices, `null` where there is none."""
    data = numbers_of(indices)
    return np.where(valid_of(indices), data, null) if indices.null_count else data


def numbers_of(array: pa.Array) -> np.ndarray:
    """The values of an integer or float array, read from its buffer with numpy (pyarrow's
    own conversions import pandas, slow to import); where `valid_of` is False the value
    is whatever the buffer holds."""
    kind = "f" if pa.types.is_floating(array.type) else "i"
    dtype = np.dtype(f"<{kind}{array.type.bit_width // 8}")
    if not len(array):
        return np.zeros(0, dtype)
    data = np.frombuffer(array.buffers()[1], dtype=dtype, count=array.offset + len(array))
    return data[array.offset:]


def arrow_of(values: np.ndarray, null: np.ndarray | None = None) -> pa.Array:
    """A numpy array of numbers as an Arrow array, null where `null` is True, made from its
    buffer (pa.array on numpy imports pandas, slow to import)."""
    values = np.ascontiguousarray(values)
    validity = None
    if null is not None and null.any():
        validity = pa.py_buffer(np.packbits(~null, bitorder="little"))
    return pa.Array.from_buffers(pa.from_numpy_dtype(values.dtype), len(values),
                                 [validity, pa.py_buffer(values)])


def valid_of(array: pa.Array) -> np.ndarray:
    """Which entries of `array` are not null, as a numpy bool array."""
    if not array.null_count:
        return np.ones(len(array), bool)
    bits = np.unpackbits(np.frombuffer(array.buffers()[0], np.uint8), bitorder="little")
    return bits[array.offset:array.offset + len(array)].astype(bool)


def _lists(column: pa.ChunkedArray) -> list[tuple[float, ...]]:
    values: list[tuple[float, ...]] = []
    for chunk in column.chunks:
        if chunk.null_count or chunk.values.null_count:
            raise ValueError("samples: null values")
        offsets = numbers_of(chunk.offsets).tolist()
        flat = numbers_of(chunk.values).tolist()
        values.extend(tuple(flat[offsets[i]:offsets[i + 1]]) for i in range(len(chunk)))
    return values


def _spans(run_ids: list) -> Iterable[tuple[int, int]]:
    """(start, end) of each run's consecutive rows."""
    start = 0
    for i in range(1, len(run_ids) + 1):
        if i == len(run_ids) or run_ids[i] != run_ids[start]:
            yield start, i
            start = i


def _runs(rows: dict[str, list]) -> list[Run]:
    runs = []
    for start, end in _spans(rows["run_id"]):
        rest = rows["run"][start]
        results = tuple(_result(rows, i) for i in range(start, end)
                        if rows["result"][i] is not None)
        runs.append(Run(run_id=rows["run_id"][start], created_at=rows["created_at"][start],
                        results=results, git=dict(rest["git"]), ci=dict(rest["ci"]),
                        env=dict(rest["env"]), config=dict(rest["config"])))
    return runs


def _result(rows: dict[str, list], i: int) -> Result:
    summary = None if rows["n"][i] is None else Summary(
        *(rows[name][i] for name in SUMMARY_FIELDS))
    return Result(suite=rows["suite"][i], name=rows["name"][i], metric=rows["metric"][i],
                  unit=rows["unit"][i], direction=rows["direction"][i],
                  params=dict(rows["params"][i]), status=rows["status"][i],
                  samples=rows["samples"][i], summary=summary, group=rows["group"][i],
                  error=rows["error"][i], extra=dict(rows["extra"][i]))


def _documents(rows: dict[str, list]) -> list[dict[str, Any]]:
    """Run documents rebuilt from rows as they are, for validation; a file another tool
    wrote may hold a run's rows apart or its results out of order."""
    places: dict[Any, list[int]] = {}
    for i, run_id in enumerate(rows["run_id"]):
        places.setdefault(run_id, []).append(i)
    documents = []
    for indexes in places.values():
        first = indexes[0]
        rest = rows["run"][first]
        rest = rest if isinstance(rest, dict) else {}
        results = sorted((i for i in indexes if rows["result"][i] is not None),
                         key=lambda i: rows["result"][i])
        documents.append({
            "schema": {"name": SCHEMA_NAME, "version": SCHEMA_VERSION},
            "run_id": rows["run_id"][first], "created_at": rows["created_at"][first],
            **{key: rest.get(key, {}) for key in ("git", "ci", "env", "config")},
            "results": [_result_document(rows, i) for i in results]})
    return documents


def _result_document(rows: dict[str, list], i: int) -> dict[str, Any]:
    return {
        **{name: rows[name][i] for name in ("suite", "group", "name", "params", "metric",
                                            "unit", "direction", "status")},
        "samples": list(rows["samples"][i]),
        "summary": None if rows["n"][i] is None else
        {name: rows[name][i] for name in SUMMARY_FIELDS},
        "error": rows["error"][i], "extra": rows["extra"][i]}


def encode_many(batches: Iterable[Sequence[Run]], metadata: dict[str, Any]) -> bytes:
    """Several batches of runs (a month each, say) as one Parquet file, a batch at a time."""
    sink = pa.BufferOutputStream()
    with pq.ParquetWriter(sink, runs_table((), metadata).schema, **WRITE_OPTIONS) as writer:
        for runs in batches:
            writer.write_table(runs_table(runs, metadata), row_group_size=ROW_GROUP_ROWS)
    return sink.getvalue().to_pybytes()
