"""How results are named in the flat `group` / `name` formats (OSS, AI-PEP)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from torch_bench.errors import UserError
from torch_bench.metrics import MEMORY_TO_MB, METRICS, TIME_TO_MS, get_metric
from torch_bench.results.schema import Result


def group_of(result: Result) -> str:
    return result.group or f"{result.suite}-{result.metric}"


def flat_names(results: Iterable[Result]) -> list[tuple[Result, str, str]]:
    """(result, group, name) for each successful result. Where several results would share a
    group and name (a grid of parameters), the name gets the parameters as a suffix."""
    usable = [r for r in results if r.ok]
    counts = Counter((group_of(r), r.name) for r in usable)
    named = []
    for result in usable:
        group, name = group_of(result), result.name
        if counts[(group, name)] > 1:
            params = ",".join(f"{k}={result.params[k]}" for k in sorted(result.params))
            name = f"{name}[{params}]"
        named.append((result, group, name))
    return named


def _only_metric_in(unit: str) -> str | None:
    """The metric measured in `unit`, when exactly one metric is (e.g. samples/s)."""
    found = [m.name for m in METRICS.values() if m.unit == unit]
    return found[0] if len(found) == 1 else None


def normalise(value: float, unit: str, metric: str | None, where: str) -> tuple[float, str]:
    """`value` given in `unit`, in the normalised unit, with the metric it measures: `metric`
    when the user named one, else `time` for time units, `peak_memory` for memory units, or
    the one metric measured in that unit."""
    if unit in TIME_TO_MS:
        return value * TIME_TO_MS[unit], metric or "time"
    if unit in MEMORY_TO_MB:
        return value * MEMORY_TO_MB[unit], metric or "peak_memory"
    if metric is not None and unit == get_metric(metric).unit:
        return value, metric
    if metric is None and _only_metric_in(unit):
        return value, _only_metric_in(unit)
    raise UserError(f"{where}: unit {unit!r} could be more than one metric, or none; name the "
                    "metric with --metric")
