"""The one table of metrics: unit, better-or-worse direction and display format.

Every stage (validation, exporters, comparisons, the dashboard) asks this table instead of
deciding per metric in code. Units are normalised: time in ms, memory in MB.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum

from torch_bench.errors import UserError


class Direction(str, Enum):
    LOWER = "lower"  # lower is better
    HIGHER = "higher"  # higher is better


@dataclass(frozen=True)
class Unit:
    symbol: str
    quantity: str
    decimals: int
    signed: bool = False  # whether a negative value means anything (else it is refused)


UNITS: dict[str, Unit] = {
    u.symbol: u
    for u in (
        Unit("ms", "time", 4),
        Unit("MB", "memory", 1),
        Unit("ratio", "ratio", 3),
        Unit("samples/s", "throughput", 2),
        Unit("tokens/s", "throughput", 1),
        Unit("items/s", "throughput", 2),
        Unit("count", "count", 0),
        Unit("1", "dimensionless", 4, signed=True),  # a loss, an imported score
    )
}

# Conversions into the normalised unit of a quantity, for importers: factor to multiply by.
TIME_TO_MS = {"ns": 1e-6, "us": 1e-3, "µs": 1e-3, "ms": 1.0, "s": 1e3, "sec": 1e3}
MEMORY_TO_MB = {"B": 1 / 2**20, "KB": 1 / 2**10, "KiB": 1 / 2**10, "MB": 1.0, "MiB": 1.0,
                "GB": 2**10, "GiB": 2**10}


@dataclass(frozen=True)
class Metric:
    name: str
    unit: str
    direction: Direction
    description: str


METRICS: dict[str, Metric] = {
    m.name: m
    for m in (
        Metric("time", "ms", Direction.LOWER, "wall time of one iteration"),
        Metric("latency", "ms", Direction.LOWER, "time of one step"),
        Metric("forward_time", "ms", Direction.LOWER, "time of one forward pass"),
        Metric("backward_time", "ms", Direction.LOWER, "time of one backward pass"),
        Metric("compile_time", "ms", Direction.LOWER, "compilation latency"),
        Metric("epoch_time", "ms", Direction.LOWER, "time of one training epoch"),
        Metric("peak_rss", "MB", Direction.LOWER, "peak resident memory of the case's process"),
        Metric("peak_memory", "MB", Direction.LOWER, "peak memory of the measured step"),
        Metric("peak_allocated", "MB", Direction.LOWER, "CUDA caching allocator: peak allocated"),
        Metric("peak_reserved", "MB", Direction.LOWER, "CUDA caching allocator: peak reserved"),
        Metric("nvml_process_memory", "MB", Direction.LOWER, "GPU memory of the process (NVML)"),
        Metric("nvml_device_memory", "MB", Direction.LOWER, "GPU memory used on the device (NVML)"),
        Metric("throughput", "samples/s", Direction.HIGHER, "samples per second"),
        Metric("token_throughput", "tokens/s", Direction.HIGHER, "tokens per second"),
        Metric("speedup", "ratio", Direction.HIGHER, "eager time / compiled time"),
        Metric("memory_ratio", "ratio", Direction.LOWER, "compiled peak memory / eager"),
        Metric("pass_rate", "ratio", Direction.HIGHER, "share of cases that passed"),
        Metric("accuracy", "ratio", Direction.HIGHER, "evaluation accuracy"),
        Metric("loss", "1", Direction.LOWER, "training loss"),
        Metric("loss_ratio", "ratio", Direction.LOWER,
               "final training loss, compiled / native"),
        Metric("graph_count", "count", Direction.LOWER, "graphs compiled"),
        Metric("graph_breaks", "count", Direction.LOWER, "graph breaks"),
        # generic rows for results imported from tools that only say "bigger/smaller is better"
        Metric("op_throughput", "items/s", Direction.HIGHER, "operations (iterations) per second"),
        Metric("memory", "MB", Direction.LOWER, "memory (imported; kind of memory unknown)"),
        Metric("value", "1", Direction.LOWER, "an imported value, lower is better"),
        Metric("score", "1", Direction.HIGHER, "an imported value, higher is better"),
    )
}


def get_metric(name: str) -> Metric:
    try:
        return METRICS[name]
    except KeyError:
        known = ", ".join(sorted(METRICS))
        raise UserError(f"unknown metric {name!r}; known metrics: {known}") from None


def format_value(value: float | None, unit: str) -> str:
    if value is None:
        return "N/A"
    decimals = UNITS[unit].decimals if unit in UNITS else 4
    if unit == "ms" and abs(value) < 1:
        decimals = 5
    return f"{value:.{decimals}f}"


# Display scales of the normalised units: (symbol, size in the normalised unit), smallest first.
DISPLAY_SCALES = {
    "ms": (("ns", 1e-6), ("µs", 1e-3), ("ms", 1.0), ("s", 1e3)),
    "MB": (("B", 1 / 2**20), ("KB", 1 / 2**10), ("MB", 1.0), ("GB", 2.0**10), ("TB", 2.0**20)),
}
UNSHOWN_UNITS = ("ratio", "1", "count")  # shown as bare numbers
SIGNIFICANT_DIGITS = 4


def scaled(value: float, unit: str) -> tuple[float, str]:
    """`value` in the display unit that suits its size: 3e-6 ms is (3.0, "ns"), 2048 MB is
    (2.0, "GB"); units without scales are returned as they are."""
    scales = DISPLAY_SCALES.get(unit)
    if not scales or value == 0 or not math.isfinite(value):
        return value, unit
    fitting = [(symbol, size) for symbol, size in scales if abs(value) >= size]
    symbol, size = fitting[-1] if fitting else scales[0]
    return value / size, symbol


def _significant(value: float) -> str:
    digits = len(str(int(abs(value)))) if abs(value) >= 1 else 0
    text = f"{value:,.{max(0, SIGNIFICANT_DIGITS - digits)}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def format_quantity(value: float | None, unit: str) -> str:
    """A value with a unit scaled to its size, for people: "3 ns", "12.35 ms", "1.5 GB",
    "1,523.62 items/s", "1.234" (ratios). The one formatting of values shared by the
    terminal table, the Markdown report and the dashboard."""
    if value is None or not math.isfinite(value):
        return "N/A" if value is None else str(value)
    if unit in DISPLAY_SCALES:
        number, symbol = scaled(value, unit)
        return f"{_significant(number)} {symbol}"
    decimals = UNITS[unit].decimals if unit in UNITS else 4
    number = f"{value:,.{decimals}f}"
    return number if unit in UNSHOWN_UNITS else f"{number} {unit}"
