"""Reading a YAML file a user wrote, with errors that name the file and the line."""

from __future__ import annotations

from typing import Any

from torch_bench.decoding import parse_yaml
from torch_bench.errors import UserError
from torch_bench.fileio import read_text


def read_yaml(path: str, what: str = "configuration file") -> Any:
    """The decoded document (None for an empty file); UserError for a missing, unreadable,
    binary, too large or too deep file, bad YAML or a key given twice."""
    try:
        text = read_text(path)
    except UserError as exc:
        if str(exc) == f"{path}: no such file":
            raise UserError(f"{path}: no such {what}") from None
        raise
    return parse_yaml(text, path)
