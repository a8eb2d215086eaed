"""Plain-text tables per metric over a model x batch size x sequence length grid, laid out as
the Hugging Face benchmark utilities printed them. Returns lines; the caller prints them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from torch_bench.metrics import format_value
from torch_bench.results.schema import Result

WIDTH = 80
GRID_PARAMS = ("model", "batch_size", "sequence_length")


def _variant(result: Result, varying: Sequence[str]) -> str:
    shown = " ".join(f"{k}={result.params[k]}" for k in varying if k in result.params)
    model = str(result.params.get("model", result.name))
    return f"{model} [{shown}]" if shown else model


def _varying(results: Sequence[Result], skip: Iterable[str]) -> list[str]:
    """Parameters other than the grid's that differ between results."""
    skip = set(skip)
    keys = []
    for result in results:
        for key in result.params:
            if key not in skip and key not in keys:
                keys.append(key)
    return [k for k in keys if len({repr(r.params.get(k)) for r in results}) > 1]


def _cell(result: Result) -> str:
    if result.ok:
        return f"{format_value(result.summary.median, result.unit)}"
    return f"N/A ({result.status})"


def format_grid_tables(results: Iterable[Result], split_by: str = "mode") -> list[str]:
    """One table per (`split_by` value, metric): model, batch size, sequence length, median."""
    results = [r for r in results if all(k in r.params for k in GRID_PARAMS)]
    tables: dict[tuple[str, str], list[Result]] = {}
    for result in results:
        key = (str(result.params.get(split_by, "")), result.metric)
        tables.setdefault(key, []).append(result)
    lines: list[str] = []
    for (part, metric), members in tables.items():
        varying = _varying(members, (*GRID_PARAMS, split_by))
        unit = members[0].unit
        title = " - ".join(t for t in (part.upper(), metric.upper(), "RESULT") if t)
        rows = [(_variant(r, varying), str(r.params["batch_size"]),
                 str(r.params["sequence_length"]), _cell(r)) for r in members]
        name_width = max(24, *(len(row[0]) + 2 for row in rows))
        header = ("Model", "Batch Size", "Seq Length", f"{metric} ({unit})")
        rule = "-" * max(WIDTH, name_width + 56)
        lines += ["", f" {title} ".center(len(rule), "="), rule, _row(header, name_width),
                  rule]
        lines += [_row(row, name_width) for row in rows]
        lines.append(rule)
    return lines


def _row(cells: Sequence[str], name_width: int) -> str:
    return f"{cells[0]:>{name_width}} {cells[1]:>12} {cells[2]:>12} {cells[3]:>28}"
