"""What a v3 metric name measures. v3 records carry no unit or direction: a record torch-bench
wrote says them in `metric.extra_info`; for the others they come from this table (the names
PyTorch's dynamo runner writes, then our own metric names), else the value is kept as it is,
a plain number whose better direction is guessed from its name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from torch_bench.metrics import MEMORY_TO_MB, METRICS, TIME_TO_MS, UNITS, Direction


@dataclass(frozen=True)
class V3Metric:
    unit: str  # ours, normalised
    direction: str
    factor: float = 1.0  # from the file's unit into ours


LOWER, HIGHER = Direction.LOWER.value, Direction.HIGHER.value
COUNT = V3Metric("count", LOWER)

# benchmarks/dynamo/common.py: its performance CSV's columns, written as v3 records too
DYNAMO = {
    "speedup": V3Metric("ratio", HIGHER),  # median eager time / median compiled time
    "abs_latency": V3Metric("ms", LOWER),  # the compiled median, ms
    "compilation_latency": V3Metric("ms", LOWER, TIME_TO_MS["s"]),  # seconds
    "compression_ratio": V3Metric("ratio", HIGHER),  # eager peak memory / compiled
    "calls_captured": COUNT, "unique_graphs": COUNT, "graph_breaks": COUNT,
    "unique_graph_breaks": COUNT, "autograd_captures": COUNT, "autograd_compiles": COUNT,
    "cudagraph_skips": COUNT,
}

# names whose bigger values are better, for metrics neither table knows
_HIGHER_IS_BETTER = re.compile(r"speedup|throughput|per_s(ec)?\b|/s\b|tps|accuracy|"
                               r"bandwidth|utili[sz]ation", re.IGNORECASE)
PLAIN = "1"  # a number without a unit we know


def describe(name: str, unit: str | None, direction: str | None) -> V3Metric:
    """The unit (ours) and direction of metric `name`, given what its record says."""
    if unit is not None:
        found = _from_unit(unit)
        if found is not None:
            return V3Metric(found[0], _direction(name, direction, found[0]), found[1])
    known = DYNAMO.get(name) or _ours(name)
    if known is not None:
        return V3Metric(known.unit, _valid(direction) or known.direction, known.factor)
    return V3Metric(PLAIN, _direction(name, direction, PLAIN))


def _from_unit(unit: str) -> tuple[str, float] | None:
    if unit in TIME_TO_MS:
        return "ms", TIME_TO_MS[unit]
    if unit in MEMORY_TO_MB:
        return "MB", MEMORY_TO_MB[unit]
    return (unit, 1.0) if unit in UNITS else None


def _ours(name: str) -> V3Metric | None:
    spec = METRICS.get(name)
    return V3Metric(spec.unit, spec.direction.value) if spec else None


def _direction(name: str, said: str | None, unit: str) -> str:
    if _valid(said):
        return said
    known = METRICS.get(name)
    if known is not None and known.unit == unit:
        return known.direction.value
    return HIGHER if _HIGHER_IS_BETTER.search(name) else LOWER


def _valid(direction: str | None) -> str | None:
    return direction if direction in (LOWER, HIGHER) else None
