"""What an exporter is asked for beyond the run: the time unit to write and whether the flat
formats carry more than time."""

from __future__ import annotations

from dataclasses import dataclass

from torch_bench.errors import UserError
from torch_bench.metrics import TIME_TO_MS
from torch_bench.results.schema import Result

TIME_UNIT = "ms"  # the normalised time unit of run documents


@dataclass(frozen=True)
class ExportOptions:
    # Time values are written in this unit (fastrnns on CPU writes seconds, labelled ms).
    unit: str = TIME_UNIT
    # OSS and AI-PEP consumers read every value as a time: other metrics (memory, ratios)
    # are written only when asked for.
    all_metrics: bool = False

    def __post_init__(self) -> None:
        if self.unit not in TIME_TO_MS:
            raise UserError(f"--unit: {self.unit!r} is not a time unit; "
                            f"choose from {', '.join(TIME_TO_MS)}")

    def keeps(self, result: Result) -> bool:
        return self.all_metrics or is_time(result)

    def value(self, result: Result, value: float) -> float:
        """`value` of `result` in the unit asked for (time only; other units unchanged)."""
        return value / TIME_TO_MS[self.unit] if is_time(result) else value

    def unit_of(self, result: Result) -> str:
        return self.unit if is_time(result) else result.unit


def is_time(result: Result) -> bool:
    return result.unit == TIME_UNIT
