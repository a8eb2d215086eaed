"""Packed data files: many small parts in one file, each part read by an HTTP range request
(or cut out of the whole file where the server ignores ranges), so a site of any history
length has a few thousand files rather than one per benchmark chunk and per run.

Series history chunks: each series falls in one of PACK_BUCKETS buckets by a hash of its key
(so a new benchmark disturbs one bucket only); chunk k of every series of a bucket that has
it lies in one binary file (paths.series_pack), one segment per series in key order. A segment
of N points is a header then columns, little-endian, each column as narrow as its values
allow (static/dashboard.js reads it; `decode_segment` is the same reader in Python):

    header, 36 bytes:
        uint8 FORMAT, uint8 spread mode, uint8 width of run steps, of n, of env, of minute
        steps, of branch; 1 zero byte
        int32 the first point's run, int32 its minute, then the base of run steps, of n, of
        env, of minute steps, of branch
    median float32[N]
    spread mode SYMMETRIC: half float32[N]     q1 = median - half, q3 = median + half
           mode QUARTILES: q1, q3 float32[N]   (quartiles not centred on the median)
    run steps (N - 1 of them: run[i] - run[i - 1]), n, env, minute steps (N - 1), branch:
        each stored as its value minus its base, in 0 (every value is the base: nothing
        stored), 1, 2 or 4 bytes unsigned; the 4-byte columns first, then the 2-byte, then
        the 1-byte (each in the order of INTEGER_COLUMNS), so every column is aligned for a
        typed array.
    branches, to the segment's end (nothing when no names are given): the names its branch
        numbers refer to, a JSON array (as json_bytes writes it), in order of first
        appearance among its points; its length is the segment's, less the above

run is the run's position in the history (its row in the run tables), env the environment's
position in the series' head file, minute when the run was made (minutes since 1970-01-01
UTC) and branch its branch's position in the segment's own branches: what the chart, its
date axis and its branch filter need of each point's run, carried with the point so that
the page fetches no run table to draw the whole history. A series measured in every run of
one branch, made at a steady pace, has run and minute steps of one value each and a
constant n: 9 bytes per point, of which 8 are its median and spread, and a few bytes for
its branch's name. Runs made at uneven times take one more byte per point while a chunk's
minute steps differ by less than 256 (four hours), two while they differ by less than 65,536
(45 days); points on several branches one more. float32 keeps the six significant digits
the JSON files carry; the symmetric form is used only where it gives q1 and q3 back within
two float32 roundings.

Run values packs (paths.run_values_pack): one part per run, `encode_run_values`.

Every JSON data file is encoded by `json_bytes`: compact, and with the secrets the tool knows
of masked (redact.scrub), as every other file the tool writes.
"""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from torch_bench.redact import scrub

PACK_BUCKETS = 64
FORMAT = 3  # 1 was fixed-width columns without a header; 2 had no minute and branch
SYMMETRIC, QUARTILES = 0, 1
HEADER = struct.Struct("<BBBBBBBxiiiiiii")
# the order of their widths and bases in the header; "run" and "minute" are stored as steps
INTEGER_COLUMNS = ("run", "n", "env", "minute", "branch")
STEPPED = ("run", "minute")
WIDTHS = {0: None, 1: "<u1", 2: "<u2", 4: "<u4"}
WIDTH_LIMITS, WIDTH_STEPS = np.asarray([1, 2**8, 2**16]), np.asarray([0, 1, 2, 4])
# q1 and q3 remade from median and half are kept only this close to the values given:
# two float32 roundings, what storing them as float32 would lose at worst.
SYMMETRIC_TOLERANCE = 2.0 ** -23


def json_bytes(payload: Any) -> bytes:
    text = json.dumps(payload, separators=(",", ":"), allow_nan=False)
    return scrub(text).encode("utf-8")


def bucket_of(key: str) -> int:
    """The pack bucket of a series key (stable across builds and machines)."""
    return int(hashlib.sha1(key.encode("utf-8")).hexdigest()[:8], 16) % PACK_BUCKETS


def integer_widths(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row of `values` (2-D): its base (the least value) and the bytes each value takes
    stored as value - base (0 when all are the base)."""
    values = np.asarray(values, np.int64)
    if not values.shape[1]:
        zeros = np.zeros(len(values), np.int64)
        return zeros, zeros
    low, high = values.min(axis=1), values.max(axis=1)
    if low.min(initial=0) < np.iinfo(np.int32).min or \
            high.max(initial=0) > np.iinfo(np.int32).max:
        raise ValueError("a segment's integers must fit in int32")
    widths = WIDTH_STEPS[np.searchsorted(WIDTH_LIMITS, high - low, side="right")]
    return low, widths


def spread_modes(median32: np.ndarray, half32: np.ndarray, q1: np.ndarray,
                 q3: np.ndarray) -> np.ndarray:
    """Per row (2-D arrays): SYMMETRIC when median -/+ half give q1 and q3 back closely
    enough, else QUARTILES."""
    with np.errstate(invalid="ignore", over="ignore"):
        m, h = median32.astype(np.float64), half32.astype(np.float64)
        close = ((np.abs(m - h - q1) <= SYMMETRIC_TOLERANCE * np.abs(q1))
                 & (np.abs(m + h - q3) <= SYMMETRIC_TOLERANCE * np.abs(q3)))
    return np.where(close.all(axis=1), SYMMETRIC, QUARTILES)


def _floats32(columns: Mapping[str, np.ndarray], rows: int) -> tuple[np.ndarray, ...]:
    q1 = np.asarray(columns["q1"], np.float64).reshape(rows, -1)
    q3 = np.asarray(columns["q3"], np.float64).reshape(rows, -1)
    median32 = np.asarray(columns["median"], np.float64).astype("<f4").reshape(rows, -1)
    with np.errstate(over="ignore"):
        half32 = ((q3 - q1) / 2).astype("<f4")
    return median32, half32, q1, q3


def _integers(columns: Mapping[str, np.ndarray], rows: int) -> dict[str, np.ndarray]:
    """The integer columns as stored (steps for STEPPED ones); "minute" and "branch" are 0
    where `columns` has none."""
    steps = np.diff(np.asarray(columns["run"], np.int64).reshape(rows, -1), axis=1)
    if steps.size and steps.min() < 1:
        raise ValueError("a segment's runs must increase")
    shape = rows, len(columns["run"]) // max(rows, 1)

    def plain(name: str) -> np.ndarray:
        found = columns.get(name)
        return np.zeros(shape, np.int64) if found is None else \
            np.asarray(found, np.int64).reshape(rows, -1)
    return {"run": steps, "n": plain("n"), "env": plain("env"),
            "minute": np.diff(plain("minute"), axis=1), "branch": plain("branch")}


def segment_lengths(columns: Mapping[str, np.ndarray], count: int) -> np.ndarray:
    """The length of each segment `encode_segment` makes of points [k x count, (k + 1) x
    count) of `columns` (whose length is a multiple of `count`), without encoding them;
    their branch names not counted."""
    rows = len(columns["run"]) // count
    if not rows:
        return np.zeros(0, np.int64)
    modes = spread_modes(*_floats32(columns, rows))
    total = HEADER.size + 4 * count * np.where(modes == SYMMETRIC, 2, 3)
    for values in _integers(columns, rows).values():
        total += integer_widths(values)[1] * values.shape[1]
    return total


def encode_segment(columns: Mapping[str, np.ndarray], branches: Sequence[str] = ()) -> bytes:
    """One series' points as a segment: "run" (increasing), "n", "median", "q1", "q3", "env"
    and, optionally (0 without them), "minute" and "branch", each the same length;
    `branches`: the names "branch" numbers."""
    names = json_bytes(list(branches)) if branches else b""
    count = len(columns["run"])
    if not count:
        return HEADER.pack(FORMAT, SYMMETRIC, *[0] * (len(INTEGER_COLUMNS) + 2 + len(
            INTEGER_COLUMNS))) + names
    median32, half32, q1, q3 = _floats32(columns, 1)
    mode = int(spread_modes(median32, half32, q1, q3)[0])
    spread = [half32] if mode == SYMMETRIC else [q1.astype("<f4"), q3.astype("<f4")]
    ints = _integers(columns, 1)
    bases, widths = {}, {}
    for name, values in ints.items():
        base, width = integer_widths(values)
        bases[name], widths[name] = int(base[0]), int(width[0])
    minute = columns.get("minute")
    header = HEADER.pack(FORMAT, mode, *(widths[name] for name in INTEGER_COLUMNS),
                         int(columns["run"][0]), 0 if minute is None else int(minute[0]),
                         *(bases[name] for name in INTEGER_COLUMNS))
    parts = [header, median32.tobytes(), *(column.tobytes() for column in spread)]
    for width in (4, 2, 1):
        parts += [(ints[name] - bases[name]).astype(WIDTHS[width]).tobytes()
                  for name in INTEGER_COLUMNS if widths[name] == width]
    return b"".join(parts) + names


def decode_segment(data: bytes, count: int) -> dict[str, np.ndarray]:
    """The columns of a segment of `count` points and its "branches" (as static/dashboard.js
    reads them)."""
    if len(data) < HEADER.size:
        raise ValueError(f"a segment of {len(data)} bytes has no header")
    fmt, mode, *rest = HEADER.unpack_from(data)
    kinds = len(INTEGER_COLUMNS)
    widths = dict(zip(INTEGER_COLUMNS, rest[:kinds], strict=True))
    firsts = dict(zip(STEPPED, rest[kinds:kinds + 2], strict=True))
    bases = dict(zip(INTEGER_COLUMNS, rest[kinds + 2:], strict=True))
    if fmt != FORMAT or mode not in (SYMMETRIC, QUARTILES) or \
            any(w not in WIDTHS for w in widths.values()):
        raise ValueError(f"a segment of another format ({fmt}, {mode}, {widths})")
    sizes = {name: max(count - 1, 0) if name in STEPPED else count for name in INTEGER_COLUMNS}
    expected = (HEADER.size + 4 * count * (2 if mode == SYMMETRIC else 3)
                + sum(widths[name] * sizes[name] for name in INTEGER_COLUMNS))
    if len(data) < expected:
        raise ValueError(f"a segment of {len(data)} bytes, not the {expected} its header says")
    branches = segment_branches(data[expected:])
    start = HEADER.size

    def take(dtype: str, size: int) -> np.ndarray:
        nonlocal start
        out = np.frombuffer(data, dtype, size, start)
        start += size * np.dtype(dtype).itemsize
        return out

    median = take("<f4", count).astype(np.float64)
    if mode == SYMMETRIC:
        half = take("<f4", count).astype(np.float64)
        q1, q3 = median - half, median + half
    else:
        q1, q3 = take("<f4", count).astype(np.float64), take("<f4", count).astype(np.float64)
    ints = {name: np.zeros(sizes[name], np.int64) for name in INTEGER_COLUMNS}
    for width in (4, 2, 1):
        for name in INTEGER_COLUMNS:
            if widths[name] == width:
                ints[name] = take(WIDTHS[width], sizes[name]).astype(np.int64)
    stepped = {name: firsts[name] + np.concatenate([[0], np.cumsum(ints[name] + bases[name])])
               [:count] for name in STEPPED}
    return {"run": stepped["run"], "n": ints["n"] + bases["n"], "median": median, "q1": q1,
            "q3": q3, "env": ints["env"] + bases["env"], "minute": stepped["minute"],
            "branch": ints["branch"] + bases["branch"], "branches": branches}


def segment_branches(tail: bytes) -> list[str]:
    """The branch names ending a segment (none: an empty tail)."""
    if not tail:
        return []
    try:
        names = json.loads(tail.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"a segment ending in {len(tail)} bytes that are no branch names") \
            from error
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ValueError("a segment ending in something other than branch names")
    return names


def encode_run_values(payload: Mapping[str, Any]) -> bytes:
    """One run's part of a values pack (data.run_values_payload): uint32 length of a JSON
    header (the payload without "median"), the header, zero bytes to a multiple of 4, then
    the medians as float32, NaN where there is none. A median of six significant digits
    comes back exactly from float32 (static/dashboard.js reads the part)."""
    header = json_bytes({k: v for k, v in payload.items() if k != "median"})
    medians = np.asarray([np.nan if m is None else m for m in payload["median"]], "<f4")
    padding = b"\0" * (-len(header) % 4)
    return struct.pack("<I", len(header)) + header + padding + medians.tobytes()


def decode_run_values(data: bytes) -> dict[str, Any]:
    """The payload `encode_run_values` made, medians at six significant digits."""
    (length,) = struct.unpack_from("<I", data)
    payload = json.loads(data[4:4 + length])
    start = 4 + length + (-length % 4)
    count = sum(span for _, span in payload["series"])
    if len(data) != start + 4 * count:
        raise ValueError(f"a values part of {len(data)} bytes, not {start + 4 * count}")
    medians = np.frombuffer(data, "<f4", count, start).tolist()
    payload["median"] = [None if m != m else float(f"{m:.6g}") for m in medians]
    return payload


def offsets_of(parts: Sequence[bytes]) -> list[int]:
    """Where each part starts in their concatenation, then where the last ends."""
    out = [0]
    for part in parts:
        out.append(out[-1] + len(part))
    return out
