"""The operator profile of one benchmark case on one side (base or head): what
`torch-bench explain` measures in a worker process and compares.

A profile holds, per step of the case (a timed call, after warm-up), each operator's self
time and calls, by operator name and input shapes; on a GPU, each kernel's too. For a case
that compiles, dynamo's counts: graphs, graph breaks (with their reasons), frames compiled.
The worker writes it as JSON; the parent reads it back through `profile_from_dict`, which
checks every field, since the worker runs the code under test.

Versions: 1, the first.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

SCHEMA = "torch-bench-op-profile"
VERSION = 1
DEVICES = ("cpu", "cuda")  # where a row's time was spent: an operator on the CPU, a kernel
MAX_ROWS = 20_000
MAX_TEXT = 2_000


@dataclass(frozen=True)
class OpRow:
    """One operator (or kernel) with one set of input shapes, per profiled step."""

    name: str
    shapes: str  # the input shapes as the profiler lists them; "" when not recorded
    device: str  # "cpu": an operator's self CPU time; "cuda": a kernel's GPU time
    self_us: float  # microseconds per step
    calls: float  # calls per step


@dataclass(frozen=True)
class Compilation:
    """dynamo's counts over the case (both sides' counts are compared, not per step)."""

    graphs: int
    graph_breaks: int
    frames: int  # frames compiled: more than the code has, and something recompiled
    break_reasons: tuple[tuple[str, int], ...] = ()  # first line of the reason, count


@dataclass(frozen=True)
class OpProfile:
    label: str  # the case, as `CaseSpec.label` writes it
    window: str  # what was profiled, e.g. "latency" or "latency (compiled)"
    steps: int
    rows: tuple[OpRow, ...]
    compilation: Compilation | None = None
    trace: str | None = None  # the Chrome trace file, when one was written

    def to_dict(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "version": VERSION, **asdict(self)}


def _text(value: Any, where: str, limit: int = MAX_TEXT) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{where}: expected text, got {type(value).__name__}")
    return value[:limit]


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value) or value < 0:
        raise ValueError(f"{where}: expected a finite number >= 0, got {value!r}")
    return float(value)


def _count(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{where}: expected a whole number >= 0, got {value!r}")
    return value


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ValueError(f"{where}: expected an object, got {type(value).__name__}")
    return value


def row_from_dict(data: Any, where: str = "row") -> OpRow:
    data = _mapping(data, where)
    device = _text(data.get("device"), f"{where}.device")
    if device not in DEVICES:
        raise ValueError(f"{where}.device: expected one of {', '.join(DEVICES)}, got {device!r}")
    return OpRow(name=_text(data.get("name"), f"{where}.name"),
                 shapes=_text(data.get("shapes", ""), f"{where}.shapes"),
                 device=device,
                 self_us=_number(data.get("self_us"), f"{where}.self_us"),
                 calls=_number(data.get("calls"), f"{where}.calls"))


def compilation_from_dict(data: Any) -> Compilation | None:
    if data is None:
        return None
    data = _mapping(data, "compilation")
    reasons = data.get("break_reasons") or []
    if not isinstance(reasons, list):
        raise ValueError("compilation.break_reasons: expected a list")
    pairs = []
    for i, pair in enumerate(reasons):
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise ValueError(f"compilation.break_reasons[{i}]: expected [reason, count]")
        pairs.append((_text(pair[0], f"compilation.break_reasons[{i}]", 200),
                      _count(pair[1], f"compilation.break_reasons[{i}]")))
    return Compilation(graphs=_count(data.get("graphs"), "compilation.graphs"),
                       graph_breaks=_count(data.get("graph_breaks"), "compilation.graph_breaks"),
                       frames=_count(data.get("frames"), "compilation.frames"),
                       break_reasons=tuple(pairs))


def profile_from_dict(data: Any) -> OpProfile:
    """A profile from its JSON form; ValueError naming the first bad field."""
    data = _mapping(data, "profile")
    if data.get("schema") != SCHEMA:
        raise ValueError(f"not an operator profile (schema {data.get('schema')!r})")
    if data.get("version") != VERSION:
        raise ValueError(f"operator profile version {data.get('version')!r} is not "
                         f"{VERSION}")
    rows = data.get("rows")
    if not isinstance(rows, list) or len(rows) > MAX_ROWS:
        raise ValueError(f"rows: expected a list of at most {MAX_ROWS}")
    steps = _count(data.get("steps"), "steps")
    if steps < 1:
        raise ValueError("steps: expected at least 1")
    trace = data.get("trace")
    return OpProfile(label=_text(data.get("label"), "label"),
                     window=_text(data.get("window"), "window"),
                     steps=steps,
                     rows=tuple(row_from_dict(r, f"rows[{i}]") for i, r in enumerate(rows)),
                     compilation=compilation_from_dict(data.get("compilation")),
                     trace=None if trace is None else _text(trace, "trace"))
