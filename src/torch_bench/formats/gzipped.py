"""Input files that may be gzip-compressed (PyTorch's benchmark records are stored that way):
recognised by their magic bytes, not their name, and never inflated past the size a plain
input may have."""

from __future__ import annotations

import os
import zlib

from torch_bench.errors import InvalidDocument, UserError
from torch_bench.fileio import MAX_INPUT_BYTES, decode_text, read_bytes

GZIP_MAGIC = b"\x1f\x8b"


def read_maybe_gzipped(path: str | os.PathLike) -> str:
    """The text of a file the user named, decompressed first when it is gzip data."""
    source = str(path)
    data = read_bytes(path)
    return decode_text(gunzip(data, source) if data[:2] == GZIP_MAGIC else data, source)


def gunzip(data: bytes, source: str, limit: int = MAX_INPUT_BYTES) -> bytes:
    """`data` decompressed (one or more gzip members); InvalidDocument when it is not gzip
    data, UserError when it inflates past `limit` bytes (a compression bomb)."""
    out = bytearray()
    rest = data
    try:
        while rest:
            inflater = zlib.decompressobj(wbits=31)
            out += inflater.decompress(rest, limit + 1 - len(out))
            if len(out) > limit or inflater.unconsumed_tail:
                raise UserError(f"{source}: decompresses to more than {limit // 2**20} MiB; "
                                "inputs are read up to that")
            if not inflater.eof:
                raise InvalidDocument(f"{source}: a gzip file cut short")
            rest = inflater.unused_data
    except zlib.error as exc:
        raise InvalidDocument(f"{source}: not readable gzip data ({exc})") from None
    return bytes(out)
