"""Import an asv (airspeed velocity) result file: `results/<machine>/<commit>-<env>.json`.

Each benchmark row is positional, named by the file's `result_columns`; a parameterised
benchmark has one value per combination of its parameters (their cartesian product). Units
and parameter names come from `results/benchmarks.json` when it lies two folders up, else
from the benchmark's name prefix (`time_` seconds, `mem_`/`peakmem_` bytes, `track_` plain).
A value of null is a failed benchmark; NaN one that was skipped.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from torch_bench.decoding import parse_json
from torch_bench.errors import UserError
from torch_bench.metrics import get_metric
from torch_bench.results.schema import Result, Status, failed
from torch_bench.results.stats import Summary

# benchmark type -> (metric, factor into the metric's unit)
TYPES = {
    "time": ("time", 1e3),
    "memory": ("peak_memory", 1 / 2**20),
    "peakmemory": ("peak_memory", 1 / 2**20),
    "track": ("value", 1.0),
}
PREFIXES = {"time_": "time", "mem_": "memory", "peakmem_": "peakmemory", "track_": "track"}


def _type_of(name: str, described: Mapping[str, Any]) -> str:
    if "type" in described:
        return described["type"]
    short = name.rsplit(".", 1)[-1]
    return next((kind for prefix, kind in PREFIXES.items() if short.startswith(prefix)), "track")


def _column(row: Sequence[Any], columns: Sequence[str], name: str, index: int) -> Any:
    position = columns.index(name) if name in columns else None
    if position is None or position >= len(row) or row[position] is None:
        return None
    value = row[position]
    return value[index] if isinstance(value, list) and index < len(value) else None


def _benchmark_results(name: str, row: Sequence[Any], columns: Sequence[str],
                       described: Mapping[str, Any], suite: str) -> list[Result]:
    metric, factor = TYPES.get(_type_of(name, described), TYPES["track"])
    spec = get_metric(metric)
    values = row[columns.index("result")]
    values = values if isinstance(values, list) else [values]
    param_lists = row[columns.index("params")] if "params" in columns else []
    combos = list(itertools.product(*param_lists)) if param_lists else [()]
    names = described.get("param_names") or [f"param{i}" for i in range(len(param_lists))]
    results = []
    for index, (value, combo) in enumerate(zip(values, combos, strict=True)):
        params = dict(zip(names, combo, strict=True))
        if value is None or (isinstance(value, float) and math.isnan(value)):
            status = Status.ERROR.value if value is None else Status.SKIPPED.value
            results.append(failed(suite, name, metric, status, f"asv reported {status}",
                                  params=params))
            continue
        q25 = _column(row, columns, "stats_q_25", index)
        q75 = _column(row, columns, "stats_q_75", index)
        repeat = _column(row, columns, "stats_repeat", index)
        summary = Summary(
            n=int(repeat or 1), median=value * factor, mean=None, std=None,
            iqr=(q75 - q25) * factor if q25 is not None and q75 is not None else 0.0,
            min=None, max=None, p90=None)
        samples = _column(row, columns, "samples", index) or []
        results.append(Result(
            suite=suite, name=name, metric=metric, unit=spec.unit,
            direction=spec.direction.value, params=params, summary=summary,
            samples=tuple(s * factor for s in samples) if len(samples) == summary.n else (),
            extra={"asv_unit": described.get("unit")}))
    return results


def _described(source: str) -> dict[str, Any]:
    path = Path(source).resolve().parent.parent / "benchmarks.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def import_asv(text: str, *, source: str = "<asv>", unit: str | None = None,
               suite: str = "asv", metric: str | None = None) -> list[Result]:
    if unit is not None or metric is not None:
        raise UserError(f"{source}: asv result files carry their own units; drop --unit/--metric")
    data = parse_json(text, source)
    if not isinstance(data, dict) or not isinstance(data.get("results"), dict) \
            or not isinstance(data.get("result_columns"), list):
        raise UserError(f"{source}: not an asv result file (needs 'results' and "
                        "'result_columns'; asv 0.5 or newer)")
    described = _described(source)
    columns = data["result_columns"]
    results = []
    for name, row in data["results"].items():
        try:
            results.extend(_benchmark_results(name, row, columns, described.get(name, {}),
                                              suite))
        except (IndexError, TypeError, ValueError) as exc:
            raise UserError(f"{source}: results.{name}: unexpected layout ({exc})") from None
    return results
