"""Reading the files a user names without ever crashing on them, and writing files so that
a reader never sees half of one."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

from torch_bench.decoding import parse_json  # noqa: F401 (kept importable from here)
from torch_bench.errors import InvalidDocument, UserError
from torch_bench.redact import scrub

MAX_INPUT_BYTES = 1 << 30  # a file the user names is read whole: at most this much
MAX_STREAM_BYTES = 64 << 20  # from a pipe or a device (/dev/stdin, /dev/zero)


def read_bytes(path: str | os.PathLike) -> bytes:
    """The bytes of a file the user named; UserError (one line, naming it) when it is missing,
    a folder or unreadable."""
    source = str(path)
    try:
        with open(path, "rb") as handle:
            info = os.fstat(handle.fileno())
            if stat.S_ISDIR(info.st_mode):
                raise IsADirectoryError
            limit = MAX_INPUT_BYTES if stat.S_ISREG(info.st_mode) else MAX_STREAM_BYTES
            data = handle.read(limit + 1)
            if len(data) > limit:
                raise UserError(f"{source}: more than {limit // 2**20} MiB; inputs are read "
                                f"up to that (a device such as /dev/zero never ends)")
            return data
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


NAME_MAX = 255  # bytes in one file or folder name (Linux, macOS, most file systems)
PATH_MAX = 4096
# Failures of the machine rather than of the name the user gave: exit status 1, not 2.
_OPERATIONAL = {errno.ENOSPC, errno.EROFS, errno.EDQUOT, errno.EIO}
_REASONS = {
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EROFS: "a read-only file system",
    errno.EIO: "an input/output error of the device",
    errno.EACCES: "permission denied",
    errno.EPERM: "not permitted",
    errno.ENAMETOOLONG: f"a name is too long (at most {NAME_MAX} bytes per name)",
    errno.EISDIR: "is a directory; give a file name",
    errno.ENOTDIR: "a part of the path is a file, not a folder",
}


class OutputError(UserError, OSError):
    """An output file that could not be written; one line naming it and why. Also an OSError,
    so that callers with a fallback for a full disk keep working."""

    def __init__(self, path: str | os.PathLike, reason: str, code: int = 0) -> None:
        OSError.__init__(self, code, reason, str(path))
        self.message = f"cannot write {path}: {reason}; nothing was written there"
        self.exit_status = 1 if code in _OPERATIONAL else 2

    def __str__(self) -> str:
        return self.message


def output_path_problem(path: str | os.PathLike) -> str | None:
    """Why no file can be written at `path` (no name, a folder, under a file, a name too long,
    a folder we may not write to), or None; checked before any work is done."""
    text = os.fspath(path)
    if not str(text).strip():
        return "no file name given"
    if "\0" in str(text):
        return "a NUL character in the name"
    target = Path(text)
    encoded = os.fsencode(target)
    if len(encoded) >= PATH_MAX or any(len(os.fsencode(part)) > NAME_MAX for part in target.parts):
        return _REASONS[errno.ENAMETOOLONG]
    try:
        if target.is_dir():
            return _REASONS[errno.EISDIR]
        parent = target.parent
        while not parent.exists() and parent != parent.parent:
            if parent.is_symlink():
                return f"{parent} is a dangling link"
            parent = parent.parent
        if not parent.is_dir():
            return f"{parent} is not a directory"
        if os.statvfs(parent).f_flag & os.ST_RDONLY:
            return f"{parent} is on {_REASONS[errno.EROFS]}"
        if not os.access(parent, os.W_OK | os.X_OK):
            return f"cannot write in {parent} (permission denied)"
    except OSError as exc:
        return _describe(exc)
    return None


def same_file(first: str | os.PathLike, second: str | os.PathLike) -> bool:
    """Whether two output paths name one file (through links, `..` or a relative path)."""
    try:
        return os.path.samefile(first, second)
    except OSError:
        return Path(first).resolve() == Path(second).resolve()


def refuse_shared_outputs(outputs: dict[str, str | os.PathLike | None],
                          stdout: str = "-") -> None:
    """UserError when two output flags ({flag: path}) name one file: one would silently
    overwrite the other."""
    given = [(flag, path) for flag, path in outputs.items() if path and path != stdout]
    for number, (flag, path) in enumerate(given):
        for other, other_path in given[number + 1:]:
            if same_file(path, other_path):
                raise UserError(f"{flag} and {other} both name {path}: give each output its "
                                f"own file")


def write_text_atomic(path: str | os.PathLike, text: str) -> Path:
    """Write `text` (UTF-8, secrets masked) through `write_bytes_atomic`."""
    return write_bytes_atomic(path, scrub(text).encode("utf-8"))


def write_bytes_atomic(path: str | os.PathLike, data: bytes, *, sync: bool = True) -> Path:
    """The one safe writer of outputs: `data` goes to a temporary file beside `path`, which is
    then renamed into place, so a reader sees the old file or the new one, never half of one.
    Missing parent folders are created. Every failure (a folder where the file should be, a
    name too long, a full or read-only disk) is an OutputError: one line naming the path.
    `sync=False` skips flushing the file to disk before the rename, for files written into a
    staging folder that is itself moved into place afterwards (thousands of flushes there
    cost minutes on a busy disk)."""
    target = Path(path)
    problem = output_path_problem(target)
    if problem:
        raise OutputError(target, problem)
    if target.is_symlink():  # the link stays; the file it points to is replaced
        target = Path(os.path.realpath(target))
    if target.exists() and not target.is_file():  # a device or a pipe (/dev/null, a FIFO):
        return _write_in_place(target, data)  # written to, never replaced by a file
    tmp = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tb-", suffix=".tmp", dir=target.parent)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if sync:
                os.fsync(handle.fileno())
        os.replace(tmp, target)
    except OSError as exc:
        _remove(tmp)
        raise OutputError(target, _describe(exc), exc.errno or 0) from None
    except BaseException:
        _remove(tmp)
        raise
    return target


def write_staged(path: Path, data: bytes) -> None:
    """Write a new file into a staging folder that is moved into place as a whole, so that
    no reader ever sees it half written: created afresh (a file or link already there is
    replaced, never written through), not flushed. Thousands of site files go this way; the
    temporary name and rename of `write_bytes_atomic` would double the file operations."""
    handle = None
    try:
        try:
            handle = open(path, "xb")
        except FileExistsError:
            path.unlink()
            handle = open(path, "xb")
        with handle:
            handle.write(data)
    except OSError as exc:
        if handle is not None:  # ours, half written
            path.unlink(missing_ok=True)
        raise OutputError(path, _describe(exc), exc.errno or 0) from None


def write_json_atomic(path: str | os.PathLike, data: Any) -> Path:
    return write_text_atomic(path, json.dumps(data, indent=1, sort_keys=False) + "\n")


def _write_in_place(target: Path, data: bytes) -> Path:
    try:
        with open(target, "wb") as handle:
            handle.write(data)
    except OSError as exc:
        raise OutputError(target, _describe(exc), exc.errno or 0) from None
    return target


def _describe(exc: OSError) -> str:
    return _REASONS.get(exc.errno or 0) or exc.strerror or str(exc)


def os_error_line(exc: OSError) -> tuple[str, int]:
    """An OSError no command turned into a message of its own, as one line naming the file,
    and the exit status: 1 for the machine (a full or read-only disk), 2 for the name."""
    where = exc.filename if exc.filename is not None else "a file"
    shown = str(where)
    shown = shown if len(shown) <= 120 else shown[:60] + "..." + shown[-40:]
    return f"{shown}: {_describe(exc)}", 1 if exc.errno in _OPERATIONAL else 2


def _remove(tmp: str | None) -> None:
    if tmp:
        with contextlib.suppress(OSError):
            Path(tmp).unlink()
