"""A Parquet archive's rows for the dashboard, read column by column.

The general path decodes an archive into Run and Result objects (samples included) and
makes the rows from those (`block_of_runs`): at a million results a month, that is most of
a cold build's time. The dashboard needs no samples and only a few columns, so an archive
torch-bench wrote (its metadata says so; its runs were validated before they were written,
and the general path trusts them the same way) is read here with numpy over the columns'
dictionary codes: each distinct benchmark, status, error and run document is looked at
once. The block is the very one `block_of_runs` makes of the decoded runs (tested);
anything unexpected gives None, and the caller takes the general path.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from torch_bench.render.columns import (
    LOSS_METRIC,
    NO_ERROR,
    ROW_FIELDS,
    TRAINING_SUITE,
    Descriptor,
    RowBlock,
    descriptor_key,
    facts_of,
    successful,
    training_entry,
)
from torch_bench.results.schema import benchmark_id
from torch_bench.store import columnar
from torch_bench.store.archive import PARQUET_MAGIC
from torch_bench.store.columnar import dictionary_codes, numbers_of, valid_of

TEXT = ("run_id", "created_at", "run", "suite", "name", "params", "metric", "unit",
        "direction", "status", "error", "extra")
JSON_TEXT = ("run", "params", "extra")
NUMBERS = ("result", "n", "median", "iqr")
DESCRIBED_BY = ("suite", "name", "metric", "unit", "direction", "params")


class Unexpected(Exception):
    """The archive is not as torch-bench writes it: read it the general way."""


class Codes:
    """A dictionary-encoded column: each row's code into `words` (-1: null)."""

    def __init__(self, column: pa.ChunkedArray, convert: Callable[[str], Any] | None):
        chunk = column.combine_chunks()
        if not pa.types.is_dictionary(chunk.type):
            raise Unexpected("not dictionary-encoded")
        self.codes = dictionary_codes(chunk.indices, -1)
        words = chunk.dictionary.to_pylist()
        self.words = words if convert is None else [convert(word) for word in words]

    def word(self, row: int) -> Any:
        code = self.codes[row]
        if code < 0:
            raise Unexpected("a null where a value is needed")
        return self.words[code]


def block_of_archive(data: bytes, shared: dict[tuple, Descriptor]) -> RowBlock | None:
    """The rows of a Parquet archive torch-bench wrote, as `block_of_runs` makes them of its
    runs (sharing Descriptor objects through `shared` as it does); None for any other file,
    or anything unexpected in this one."""
    if data[:4] != PARQUET_MAGIC:  # a JSON archive (gzip)
        return None
    try:
        file = pq.ParquetFile(pa.BufferReader(data), read_dictionary=list(TEXT),
                              page_checksum_verification=True)
        if not columnar.written_by_us(columnar.metadata_of(file)) \
                or columnar.schema_problem(file.schema_arrow) is not None \
                or columnar.size_problem(file.metadata) is not None:
            return None  # the general path reads it, or reports it by name
        # one thread, as columnar.decode reads (Arrow's pool can abort a process at exit)
        table = file.read(columns=[*TEXT, *NUMBERS], use_threads=False)
        return _block(table.unify_dictionaries(), shared)
    except (Unexpected, pa.ArrowException, OSError, ValueError, TypeError, KeyError,
            AttributeError):
        return None


def _block(table: pa.Table, shared: dict[tuple, Descriptor]) -> RowBlock:
    text = {name: Codes(table.column(name), json.loads if name in JSON_TEXT else None)
            for name in TEXT}
    numbers = {name: table.column(name).combine_chunks() for name in NUMBERS}
    run_codes = text["run_id"].codes
    if (run_codes < 0).any():
        raise Unexpected("a row without a run id")
    run_starts = np.r_[True, run_codes[1:] != run_codes[:-1]] if len(run_codes) else \
        np.zeros(0, bool)
    position = np.cumsum(run_starts) - 1  # each row's run, in reading order
    rows = np.flatnonzero(valid_of(numbers["result"]))  # a run without results has a row too
    descriptors = DescriptorTable(text, shared)
    desc = first_seen_codes(rows, [text[name] for name in DESCRIBED_BY], descriptors.code_of)
    statuses = WordTable(text["status"])
    status = first_seen_codes(rows, [text["status"]], statuses.code_of)
    errors = WordTable(text["error"])
    error = np.full(len(rows), NO_ERROR, np.int64)
    with_error = text["error"].codes[rows] >= 0
    error[with_error] = first_seen_codes(rows[with_error], [text["error"]], errors.code_of)
    summarised = valid_of(numbers["n"])[rows]
    for name in ("median", "iqr"):
        if not valid_of(numbers[name])[rows][summarised].all():
            raise Unexpected(f"a summary without its {name}")
    median = np.where(summarised, numbers_of(numbers["median"])[rows], np.nan)
    half = numbers_of(numbers["iqr"])[rows] / 2
    made = {"run": position[rows], "desc": desc, "status": status, "median": median,
            "q1": np.where(summarised, median - half, np.nan),
            "q3": np.where(summarised, median + half, np.nan),
            "n": np.where(summarised, numbers_of(numbers["n"])[rows], -1), "error": error}
    ok = successful(statuses.words)[status] & summarised
    facts = run_facts(text, np.flatnonzero(run_starts), position[rows], rows, ok)
    return RowBlock(facts, descriptors.table, statuses.words, errors.words,
                    {name: np.asarray(made[name]).astype(dtype) for name, dtype in ROW_FIELDS})


class WordTable:
    """Codes given to a column's distinct words in the order they are first met."""

    def __init__(self, column: Codes):
        self.column = column
        self.words: list[str] = []
        self.codes: dict[str, int] = {}

    def code_of(self, row: int) -> int:
        word = self.column.word(row)
        if word not in self.codes:
            self.codes[word] = len(self.words)
            self.words.append(word)
        return self.codes[word]


class DescriptorTable:
    """Codes given to the distinct benchmarks (columns.descriptor_key) in the order they are
    first met, each with its Descriptor (shared between blocks through `shared`)."""

    def __init__(self, text: dict[str, Codes], shared: dict[tuple, Descriptor]):
        self.text = text
        self.shared = shared
        self.codes: dict[tuple, int] = {}
        self.table: list[Descriptor] = []

    def code_of(self, row: int) -> int:
        suite, name, metric, unit, direction, params = (self.text[column].word(row)
                                                        for column in DESCRIBED_BY)
        if not isinstance(params, dict):
            raise Unexpected("params is not an object")
        key = descriptor_key(suite, name, metric, unit, direction, params)
        if key not in self.codes:
            found = self.shared.get(key)
            if found is None:
                found = self.shared[key] = Descriptor(suite, name, metric, unit, direction,
                                                      dict(params),
                                                      benchmark_id(suite, name, params, metric))
            self.codes[key] = len(self.table)
            self.table.append(found)
        return self.codes[key]


def first_seen_codes(rows: np.ndarray, columns: Sequence[Codes],
                     code_of: Callable[[int], int]) -> np.ndarray:
    """A code per row of `rows`: `code_of(row)` is asked once per distinct combination of
    the columns' codes, in the order the combinations first appear (as a pass row by row
    would number them), and its answer given to every row of that combination."""
    if not len(rows):
        return np.zeros(0, np.int64)
    combined = np.zeros(len(rows), np.int64)
    for column in columns:
        size = len(column.words) + 1
        if int(combined.max()) >= (2**62) // size:
            raise Unexpected("too many distinct values to combine")
        combined = combined * size + (column.codes[rows] + 1)
    distinct, first, inverse = np.unique(combined, return_index=True, return_inverse=True)
    codes = np.zeros(len(distinct), np.int64)
    for index in np.argsort(first, kind="stable"):
        codes[index] = code_of(int(rows[first[index]]))
    return codes[inverse.reshape(-1)]


def run_facts(text: dict[str, Codes], starts: np.ndarray, run_of_row: np.ndarray,
              rows: np.ndarray, ok: np.ndarray) -> list[dict[str, Any]]:
    """columns.run_facts of each run, from its first row and its results' rows."""
    results = np.bincount(run_of_row, minlength=len(starts))
    failures = np.bincount(run_of_row, weights=~ok, minlength=len(starts)).astype(int)
    training: dict[int, list] = {}
    suite, metric = text["suite"], text["metric"]
    loss = np.flatnonzero(np.isin(suite.codes[rows], _codes_of(suite, TRAINING_SUITE))
                          & np.isin(metric.codes[rows], _codes_of(metric, LOSS_METRIC)))
    extras = np.unique(text["extra"].codes[rows])
    if (extras < 0).any() or not all(isinstance(text["extra"].words[code], dict)
                                     for code in extras.tolist()):
        raise Unexpected("a result's extra is not an object")
    for index in loss:
        row = int(rows[index])
        params, extra = text["params"].word(row), text["extra"].word(row)
        training.setdefault(int(run_of_row[index]), []).append(
            training_entry(text["name"].word(row), params, extra))
    facts = []
    for position, start in enumerate(starts.tolist()):
        git, env = run_parts(text["run"].word(start))
        facts.append(facts_of(text["run_id"].word(start), text["created_at"].word(start),
                              git, env, int(results[position]), int(failures[position]),
                              training.get(position, [])))
    return facts


def run_parts(rest: Any) -> tuple[dict, dict]:
    """A run's git and env from its "run" column, refused where columnar.decode would not
    make a Run of it (each of the four parts goes through dict())."""
    git, _, env, _ = (dict(rest[part]) for part in ("git", "ci", "env", "config"))
    return git, env


def _codes_of(column: Codes, word: str) -> list[int]:
    return [code for code, found in enumerate(column.words) if found == word]
