"""The run configuration's typed boundary: one table of numeric ranges, read both by the
YAML file's pydantic models and by `torch-bench run`'s flags, so a value has the same
limits wherever it is given.

A value outside its range, a non-finite number, a string where a number belongs, a key
nobody reads or a device that is not a string is one line naming the field and the value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from torch_bench import boundary
from torch_bench.errors import UserError


@dataclass(frozen=True)
class Bound:
    low: float
    high: float
    integer: bool
    unit: str = ""


# The ranges of every numeric setting; far wider than any sensible value, and narrow enough
# that a typo (10**23 warm-up calls, a 1e23-thread pool) stops before any work.
BOUNDS = {
    "warmup": Bound(0, 1_000_000, True, "calls"),
    "min_repeats": Bound(1, 1_000_000, True, "samples"),
    "max_repeats": Bound(1, 1_000_000, True, "samples"),
    "max_time_s": Bound(0.001, 86_400, False, "s"),
    "target_rel_iqr": Bound(0, 100, False),
    "min_block_ms": Bound(0.001, 60_000, False, "ms"),
    "max_number": Bound(1, 1_000_000_000, True, "calls"),
    "nloops": Bound(1, 1_000_000, True, "samples"),
    "timeout_s": Bound(0.01, 7 * 86_400, False, "s"),
    "memory_limit_mb": Bound(1, 1 << 30, False, "MB"),
    "temperature_margin_c": Bound(0, 200, False, "degrees C"),
    "power_limit_fraction": Bound(0, 1, False),
    "cpu_busy_limit": Bound(0, 1_000_000, False, "%"),
    "cpu_check_s": Bound(0.01, 3_600, False, "s"),
    "threads": Bound(1, 4_096, True, "threads"),
    "processes": Bound(1, 1_024, True, "processes"),
    "total_partitions": Bound(1, 100_000, True),
    "partition_id": Bound(0, 99_999, True),
}


def flag_type(name: str):
    """The argparse type of the flag setting `name`, within its range."""
    bound = BOUNDS[name]
    return boundary.number(bound.low, bound.high, integer=bound.integer, unit=bound.unit)


def _bounded(name: str) -> Any:
    bound = BOUNDS[name]
    kind = int if bound.integer else float
    return Annotated[kind | None, Field(ge=bound.low, le=bound.high)]


class _Section(BaseModel):
    # strict: no "3" for 3, no true for 1; floats accept whole numbers
    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False, frozen=True)


class TimingSection(_Section):
    warmup: _bounded("warmup") = None
    min_repeats: _bounded("min_repeats") = None
    max_repeats: _bounded("max_repeats") = None
    max_time_s: _bounded("max_time_s") = None
    target_rel_iqr: _bounded("target_rel_iqr") = None
    min_block_ms: _bounded("min_block_ms") = None
    max_number: _bounded("max_number") = None
    nloops: _bounded("nloops") = None


class IsolationSection(_Section):
    timeout_s: _bounded("timeout_s") = None
    memory_limit_mb: _bounded("memory_limit_mb") = None


class PreflightSection(_Section):
    temperature_margin_c: _bounded("temperature_margin_c") = None
    power_limit_fraction: _bounded("power_limit_fraction") = None
    cpu_busy_limit: _bounded("cpu_busy_limit") = None
    cpu_check_s: _bounded("cpu_check_s") = None


class ConfigFile(_Section):
    """The top level of a `--config` file (every key optional; flags override it)."""

    suites: list[str] | str | None = None
    device: str | None = None
    filter: str | None = None
    threads: _bounded("threads") = None
    processes: _bounded("processes") = None
    timing: TimingSection | None = None
    isolation: IsolationSection | None = None
    preflight: PreflightSection | None = None
    options: dict[str, dict[str, Any] | None] | None = None


def checked_sections(data: dict[str, Any], source: str) -> dict[str, Any]:
    """`data` (a decoded configuration file) when every key and value is within its type
    and range; UserError naming the field path and the value otherwise."""
    validated(ConfigFile, data, source)
    return data


def validated(model: type[BaseModel], data: Any, where: str) -> dict[str, Any]:
    """The values of `data` checked by `model`, without the ones not given."""
    try:
        return model.model_validate(data).model_dump(exclude_none=True)
    except ValidationError as exc:
        raise UserError(f"{where}: {describe(exc.errors()[0])}") from None


def describe(error: dict[str, Any]) -> str:
    """One pydantic error as `field.path: what was expected, got VALUE`."""
    # union members (`list[str]`, `str`) are part of pydantic's location, not of the file's
    path = ".".join(str(part) for part in error["loc"] if not _is_type_name(part))
    shown = repr(error.get("input"))
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    if error["type"] == "extra_forbidden":
        return f"{path}: unknown key"
    message = _EXPECTED.get(error["type"]) or error["msg"][0].lower() + error["msg"][1:]
    field = error["loc"][-1] if error["loc"] else None
    if error["type"] in _OUT_OF_RANGE and field in BOUNDS:
        message = f"expected {_range(BOUNDS[field])}"
    return f"{path or '(top level)'}: {message}, got {shown}"


_OUT_OF_RANGE = ("greater_than_equal", "less_than_equal", "greater_than", "less_than")


def _range(bound: Bound) -> str:
    kind = "a whole number" if bound.integer else "a number"
    unit = f" {bound.unit}" if bound.unit else ""
    return f"{kind} from {boundary.plain_number(bound.low)} to " \
           f"{boundary.plain_number(bound.high)}{unit}"


_EXPECTED = {
    "int_type": "expected a whole number",
    "int_parsing": "expected a whole number",
    "int_from_float": "expected a whole number",
    "float_type": "expected a number",
    "float_parsing": "expected a number",
    "finite_number": "expected a finite number",
    "string_type": "expected text",
    "dict_type": "expected a mapping",
    "model_type": "expected a mapping",
    "list_type": "expected a list",
}


def _is_type_name(part: Any) -> bool:
    return isinstance(part, str) and (part in ("str", "int", "float", "list[str]", "dict")
                                      or "[" in part)
