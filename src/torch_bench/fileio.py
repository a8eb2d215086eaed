"""Reading the files a user names without ever crashing on them, and writing files so that
a reader never sees half of one."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from torch_bench.errors import InvalidDocument, UserError


def read_bytes(path: str | os.PathLike) -> bytes:
    """The bytes of a file the user named; UserError (one line, naming it) when it is missing,
    a folder or unreadable."""
    source = str(path)
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise UserError(f"{source}: no such file") from None
    except IsADirectoryError:
        raise UserError(f"{source}: is a folder, expected a file") from None
    except OSError as exc:
        raise UserError(f"{source}: cannot read it ({exc.strerror or exc})") from None


def decode_text(data: bytes, source: str) -> str:
    """UTF-8 text (a BOM is dropped); InvalidDocument for binary or otherwise encoded data."""
    if b"\0" in data:
        raise InvalidDocument(f"{source}: a binary file, not text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InvalidDocument(f"{source}: not UTF-8 text (byte 0x{data[exc.start]:02x} at "
                              f"offset {exc.start})") from None


def read_text(path: str | os.PathLike) -> str:
    return decode_text(read_bytes(path), str(path))


def parse_json(text: str | bytes, source: str) -> Any:
    """Decoded JSON; InvalidDocument for every way that can fail: bad syntax, bad encoding,
    nesting too deep for the parser, an integer too long to read."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidDocument(f"{source}: not valid JSON (line {exc.lineno}: {exc.msg})") \
            from None
    except UnicodeDecodeError:
        raise InvalidDocument(f"{source}: not UTF-8 text") from None
    except RecursionError:
        raise InvalidDocument(f"{source}: JSON nested too deeply to read") from None
    except ValueError as exc:  # e.g. an integer of more digits than Python converts
        raise InvalidDocument(f"{source}: not readable JSON ({exc})") from None


def write_text_atomic(path: str | os.PathLike, text: str) -> Path:
    """Write `text` (UTF-8) to a temporary file beside `path`, then rename it into place."""
    return write_bytes_atomic(path, text.encode("utf-8"))


def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> Path:
    """Write `data` to a temporary file beside `path`, then rename it into place."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def write_json_atomic(path: str | os.PathLike, data: Any) -> Path:
    return write_text_atomic(path, json.dumps(data, indent=1, sort_keys=False) + "\n")
