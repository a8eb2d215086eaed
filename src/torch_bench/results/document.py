"""Loading and saving run documents. Loading migrates and validates; saving is atomic."""

from __future__ import annotations

import os
from pathlib import Path

from torch_bench.errors import InvalidDocument
from torch_bench.fileio import decode_text, parse_json, read_text, write_json_atomic
from torch_bench.results.migrate import MigrationError, migrate
from torch_bench.results.schema import Run
from torch_bench.results.validate import problems


def parse_run(data: object, source: str) -> Run:
    """A Run from decoded JSON; InvalidDocument names `source` and the first bad field."""
    if not isinstance(data, dict):
        raise InvalidDocument(f"{source}: (document): expected a JSON object")
    try:
        data = migrate(data)
    except MigrationError as exc:
        raise InvalidDocument(f"{source}: {exc}") from None
    found = problems(data)
    if found:
        more = f" (and {len(found) - 1} more problems)" if len(found) > 1 else ""
        raise InvalidDocument(f"{source}: {found[0]}{more}")
    return Run.from_dict(data)


def load_run(path: str | os.PathLike) -> Run:
    """A run document from a file; UserError naming the file for anything wrong with it."""
    source = str(path)
    return parse_run(parse_json(read_text(path), source), source)


def loads_run(data: bytes, source: str) -> Run:
    """A run document from the bytes of a file."""
    return parse_run(parse_json(decode_text(data, source), source), source)


def save_run(run: Run, path: str | os.PathLike) -> Path:
    """Validate, then write atomically. A run that fails validation is never written."""
    data = run.to_dict()
    found = problems(data)
    if found:
        raise InvalidDocument(f"{path}: refusing to write an invalid document: {found[0]}")
    return write_json_atomic(path, data)
