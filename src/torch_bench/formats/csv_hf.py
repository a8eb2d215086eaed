"""CSV in the layout of the Hugging Face benchmark utilities: `model, batch_size,
sequence_length, result`, followed by the columns that tell the rows apart, as HF does with
one CSV per kind of measurement: `mode` (inference or train), `dtype`, `runtime` (eager or
compiled), the metric and its unit, and every other parameter in `params`. No two rows differ
only in their result. Failed cases read "N/A", as that utility wrote them."""

from __future__ import annotations

import csv
import io

from torch_bench.formats.options import ExportOptions
from torch_bench.results.schema import Result, Run

COLUMNS = ["model", "batch_size", "sequence_length", "result", "mode", "dtype", "runtime",
           "metric", "unit", "statistic", "suite", "status", "params"]
# parameters that have a column of their own (under one of these names)
OWN_COLUMNS = {"model": ("model",), "batch_size": ("batch_size", "mini_batch"),
               "sequence_length": ("sequence_length", "seq_length"), "mode": ("mode",),
               "dtype": ("dtype",), "runtime": ("runtime",)}


def _first(params, names) -> tuple[str | None, object]:
    """The first of `names` present in `params`, and its value."""
    return next(((n, params[n]) for n in names if n in params), (None, ""))


def _row(result: Result, options: ExportOptions) -> dict[str, object]:
    params = dict(result.params)
    row: dict[str, object] = {}
    for column, names in OWN_COLUMNS.items():
        key, row[column] = _first(params, names)
        params.pop(key, None)
    row["model"] = row["model"] or result.name
    if row["model"] != result.name:
        params["case"] = result.name
    value = options.value(result, result.summary.median) if result.ok else None
    row.update({
        "result": f"{value:.4f}" if value is not None else "N/A",
        "metric": result.metric,
        "unit": options.unit_of(result),
        "statistic": "median",
        "suite": result.suite,
        "status": result.status,
        "params": ";".join(f"{k}={params[k]}" for k in sorted(params)),
    })
    return row


def export_csv(run: Run, options: ExportOptions | None = None) -> str:
    options = options or ExportOptions()
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for result in run.results:
        writer.writerow(_row(result, options))
    return buffer.getvalue()
