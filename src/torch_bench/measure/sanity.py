"""Checking the values a case reports before they go into a run document.

A case that returns NaN, infinity or a negative time must not cost the whole run: its
result becomes `error` with a message saying which value was wrong, and the others stand.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from torch_bench.metrics import UNITS
from torch_bench.results.schema import Result, Status

# Quantities that cannot be below zero; a dimensionless value (a loss, an imported score) can.
NON_NEGATIVE_QUANTITIES = frozenset({"time", "memory", "ratio", "throughput", "count"})


def value_problem(result: Result) -> str | None:
    """Why `result`'s numbers cannot be stored, or None when they can."""
    quantity = UNITS[result.unit].quantity if result.unit in UNITS else None
    for index, value in enumerate(result.samples):
        problem = _number_problem(value, quantity)
        if problem:
            return f"sample {index} is {value!r} {result.unit}: {problem}"
    if result.summary is not None:
        for name, value in result.summary.to_dict().items():
            if not _is_finite_number(value):
                return f"summary {name} is {value!r}: not a finite number"
    path = _non_finite_path(result.extra, "extra")
    if path:
        return f"{path} is not a finite number"
    return None


def with_invalid_values_as_errors(results: Iterable[Result]) -> list[Result]:
    """`results`, each one whose numbers cannot be stored turned into an `error` result."""
    return [_as_error(r, problem) if (problem := value_problem(r)) else r for r in results]


def _as_error(result: Result, problem: str) -> Result:
    extra = result.extra if not _non_finite_path(result.extra, "extra") else {}
    return replace(result, status=Status.ERROR.value, samples=(), summary=None, extra=extra,
                   error=f"invalid value reported by the case: {problem}")


def _number_problem(value: Any, quantity: str | None) -> str | None:
    if not _is_finite_number(value):
        return "not a finite number"
    if value < 0 and quantity in NON_NEGATIVE_QUANTITIES:
        return f"a {quantity} cannot be negative"
    return None


def _is_finite_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) \
        and math.isfinite(value)


def _non_finite_path(value: Any, path: str) -> str | None:
    """The path of the first NaN or infinity inside a JSON-like value, if any."""
    if isinstance(value, float) and not math.isfinite(value):
        return path
    if isinstance(value, Mapping):
        items: Iterable[tuple[Any, Any]] = value.items()
    elif isinstance(value, (list, tuple)):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        found = _non_finite_path(item, f"{path}[{key!r}]" if isinstance(key, str)
                                 else f"{path}[{key}]")
        if found:
            return found
    return None
