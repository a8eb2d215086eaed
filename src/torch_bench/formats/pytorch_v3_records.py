"""Reading v3 records from text: JSON lines (as PyTorch's dynamo runner and the upload action
write them), or one JSON list or object; each record paired with where it is in the file,
so that an error names its line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from torch_bench.decoding import parse_json
from torch_bench.errors import UserError


def read_records(text: str, source: str) -> list[tuple[str, dict[str, Any]]]:
    """[(where, record)], `where` being `line N` (JSON lines) or `record N` (a JSON list).
    Blank lines are skipped; anything else that is not a JSON object is an error."""
    whole = _whole_document(text, source)
    if whole is not None:
        items = whole if isinstance(whole, list) else [whole]
        found = [(f"{source}: record {n}", item) for n, item in enumerate(items, start=1)]
    else:
        found = list(_lines(text, source))
    for where, item in found:
        if not isinstance(item, dict):
            raise UserError(f"{where}: expected a v3 record (a JSON object), "
                            f"found {_kind(item)}")
    if not found:
        raise UserError(f"{source}: no v3 records (expected JSON objects, one per line)")
    return found


def _whole_document(text: str, source: str) -> Any:
    """The text as one JSON document, or None when it is not one (JSON lines)."""
    try:
        json.loads(text)
    except ValueError:
        return None
    except RecursionError:
        pass  # parse_json says it is too deep
    return parse_json(text, source)


def _lines(text: str, source: str) -> Iterator[tuple[str, Any]]:
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{source}: line {number}"
        parsed = parse_json(line, where)
        # the upload action also takes a line holding a list of records
        for item in parsed if isinstance(parsed, list) else [parsed]:
            yield where, item


def _kind(value: Any) -> str:
    names = {list: "a list", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")
