"""Values that were recorded but not measured: a peak memory of 0 MB (no allocator to ask on
this device) or a time of 0 ms is not a measurement, and is shown as such rather than as a
number or a change."""

from __future__ import annotations

from torch_bench.metrics import UNITS
from torch_bench.render.formatting import format_value

NOT_MEASURED = "n/a on this device"
PHYSICAL_QUANTITIES = ("memory", "time")  # a zero of these cannot have been measured


def was_measured(value: float | None, unit: str) -> bool:
    spec = UNITS.get(unit)
    return not (value == 0 and spec is not None and spec.quantity in PHYSICAL_QUANTITIES)


def measured_or_none(value: float | None, unit: str) -> float | None:
    return value if was_measured(value, unit) else None


def shown_value(value: float | None, unit: str) -> str:
    return format_value(value, unit) if was_measured(value, unit) else NOT_MEASURED
