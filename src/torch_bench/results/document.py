"""Loading and saving run documents. Loading migrates and validates; saving is atomic."""

from __future__ import annotations

import json
import os
from pathlib import Path

from torch_bench.errors import InvalidDocument, UserError
from torch_bench.fileio import write_json_atomic
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
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"{source}: no such file") from None
    except IsADirectoryError:
        raise UserError(f"{source}: is a directory, expected a results file") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidDocument(f"{source}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
    return parse_run(data, source)


def save_run(run: Run, path: str | os.PathLike) -> Path:
    """Validate, then write atomically. A run that fails validation is never written."""
    data = run.to_dict()
    found = problems(data)
    if found:
        raise InvalidDocument(f"{path}: refusing to write an invalid document: {found[0]}")
    return write_json_atomic(path, data)
