"""CSV in the layout of the Hugging Face benchmark utilities: `model, batch_size,
sequence_length, result`, followed by the columns that say what the result is. Failed cases
read "N/A", as that utility wrote them."""

from __future__ import annotations

import csv
import io

from torch_bench.results.schema import Run

COLUMNS = ["model", "batch_size", "sequence_length", "result", "metric", "unit", "statistic",
           "suite", "status"]


def export_csv(run: Run) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for result in run.results:
        params = result.params
        writer.writerow({
            "model": params.get("model", result.name),
            "batch_size": params.get("batch_size", params.get("mini_batch", "")),
            "sequence_length": params.get("sequence_length", params.get("seq_length", "")),
            "result": f"{result.summary.median:.4f}" if result.ok else "N/A",
            "metric": result.metric,
            "unit": result.unit,
            "statistic": "median",
            "suite": result.suite,
            "status": result.status,
        })
    return buffer.getvalue()
