"""Packed data files: many small parts in one file, each part read by an HTTP range request
(or cut out of the whole file where the server ignores ranges), so a site of any history
length has a few thousand files rather than one per benchmark chunk and per run.

Series history chunks: each series falls in one of PACK_BUCKETS buckets by a hash of its key
(so a new benchmark disturbs one bucket only); chunk k of every series of a bucket that has
it lies in one binary file (paths.series_pack), one segment per series in key order. A segment
of N points is six little-endian columns one after the other, 22 bytes per point:

    run int32[N]   the run's position in the history (its row in the run tables)
    n int32[N]     samples
    median, q1, q3 float32[N]
    env uint16[N]  the environment's position in the series' head file

float32 keeps the six significant digits the JSON files carry.

Every JSON data file is encoded by `json_bytes`: compact, and with the secrets the tool knows
of masked (redact.scrub), as every other file the tool writes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from torch_bench.redact import scrub

PACK_BUCKETS = 64
COLUMNS = (("run", "<i4"), ("n", "<i4"), ("median", "<f4"), ("q1", "<f4"), ("q3", "<f4"),
           ("env", "<u2"))
POINT_BYTES = sum(np.dtype(dtype).itemsize for _, dtype in COLUMNS)


def json_bytes(payload: Any) -> bytes:
    text = json.dumps(payload, separators=(",", ":"), allow_nan=False)
    return scrub(text).encode("utf-8")


def bucket_of(key: str) -> int:
    """The pack bucket of a series key (stable across builds and machines)."""
    return int(hashlib.sha1(key.encode("utf-8")).hexdigest()[:8], 16) % PACK_BUCKETS


def encode_segment(columns: dict[str, np.ndarray]) -> bytes:
    """One series' points as a segment (COLUMNS, each the same length)."""
    if len(columns["env"]) and int(np.max(columns["env"])) > np.iinfo(np.uint16).max:
        raise ValueError("more environments in one series than a segment can number")
    return b"".join(np.ascontiguousarray(columns[name], dtype).tobytes()
                    for name, dtype in COLUMNS)


def decode_segment(data: bytes) -> dict[str, np.ndarray]:
    """The columns of a segment (what static/dashboard.js reads)."""
    count, rest = divmod(len(data), POINT_BYTES)
    if rest:
        raise ValueError(f"a segment of {len(data)} bytes is not whole points")
    out, start = {}, 0
    for name, dtype in COLUMNS:
        size = count * np.dtype(dtype).itemsize
        out[name] = np.frombuffer(data[start:start + size], dtype)
        start += size
    return out


def offsets_of(parts: Sequence[bytes]) -> list[int]:
    """Where each part starts in their concatenation, then where the last ends."""
    out = [0]
    for part in parts:
        out.append(out[-1] + len(part))
    return out
