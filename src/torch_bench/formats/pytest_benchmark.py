"""Import pytest-benchmark's `--benchmark-json` output.

Times there are seconds; they become milliseconds. Raw samples are kept when the file has
them (`--benchmark-save-data`); otherwise the summary is taken from its stats (its p90 is
unknown and left empty).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from torch_bench.decoding import parse_json
from torch_bench.errors import UserError
from torch_bench.metrics import get_metric
from torch_bench.results.schema import Result, measured
from torch_bench.results.stats import Summary

SECONDS_TO_MS = 1e3


def _param_value(value: Any) -> str | int | float | bool | None:
    return value if value is None or isinstance(value, (str, int, float, bool)) else str(value)


def _summary_from_stats(stats: Mapping[str, Any]) -> Summary:
    return Summary(
        n=int(stats["rounds"]),
        median=stats["median"] * SECONDS_TO_MS,
        mean=stats["mean"] * SECONDS_TO_MS,
        std=stats["stddev"] * SECONDS_TO_MS,
        iqr=stats["iqr"] * SECONDS_TO_MS,
        min=stats["min"] * SECONDS_TO_MS,
        max=stats["max"] * SECONDS_TO_MS,
        p90=None,
    )


def _result(bench: Mapping[str, Any], suite: str, metric: str) -> Result:
    stats = bench["stats"]
    params = {str(k): _param_value(v) for k, v in (bench.get("params") or {}).items()}
    name = str(bench["name"]).split("[", 1)[0] if params else str(bench["name"])
    extra = {"fullname": bench.get("fullname"), "extra_info": bench.get("extra_info") or {}}
    if stats.get("data"):
        return measured(suite, name, metric, [v * SECONDS_TO_MS for v in stats["data"]],
                        params=params, group=bench.get("group"), extra=extra)
    spec = get_metric(metric)
    return Result(suite=suite, name=name, metric=metric, unit=spec.unit,
                  direction=spec.direction.value, params=params, group=bench.get("group"),
                  summary=_summary_from_stats(stats), extra=extra)


def import_pytest_benchmark(text: str, *, source: str = "<pytest-benchmark>",
                            unit: str | None = None, suite: str = "pytest-benchmark",
                            metric: str | None = None) -> list[Result]:
    if unit not in (None, "s"):
        raise UserError(f"{source}: pytest-benchmark times are always seconds; drop --unit")
    data = parse_json(text, source)
    benches = data.get("benchmarks") if isinstance(data, dict) else None
    if not isinstance(benches, list):
        raise UserError(f"{source}: no 'benchmarks' list: not pytest-benchmark JSON output")
    results = []
    for index, bench in enumerate(benches):
        try:
            results.append(_result(bench, suite, metric or "time"))
        except (KeyError, TypeError, ValueError) as exc:
            raise UserError(f"{source}: benchmarks[{index}]: missing or bad field {exc}") from None
    return results
