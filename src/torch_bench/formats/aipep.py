"""The AI-PEP format: one line per sample,
`Caffe2Observer {"type": "NET", "metric": "<group>-<name>", "unit": "ms", "value": "<str>"}`.

Reading back, the metric is split at its last `-` into group and name (fastrnns' variant
names contain no `-`), so text -> results -> text is exact.
"""

from __future__ import annotations

import json

from torch_bench.errors import UserError
from torch_bench.formats.naming import flat_names, normalise
from torch_bench.results.schema import Result, Run, measured

PREFIX = "Caffe2Observer "


def export_aipep(run: Run) -> str:
    lines = []
    for result, group, name in flat_names(run.results):
        for sample in result.samples:
            record = {"type": "NET", "metric": f"{group}-{name}", "unit": result.unit,
                      "value": str(float(sample))}
            lines.append(PREFIX + json.dumps(record))
    return "".join(line + "\n" for line in lines)


def _split_metric(metric: str) -> tuple[str | None, str]:
    group, sep, name = metric.rpartition("-")
    return (group, name) if sep and group and name else (None, metric)


def import_aipep(text: str, *, source: str = "<aipep>", unit: str | None = None,
                 suite: str = "imported", metric: str | None = None) -> list[Result]:
    """Results from AI-PEP lines; other lines (logs around them) are ignored. `unit`
    overrides the unit the lines claim, for tools that mislabel it."""
    samples: dict[tuple[str, str], list[float]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.startswith(PREFIX):
            continue
        try:
            record = json.loads(line[len(PREFIX):])
            value = float(record["value"])
            label = str(record["metric"])
            line_unit = unit or record.get("unit") or "ms"
        except (ValueError, KeyError, TypeError):
            raise UserError(f"{source}: line {number}: not a valid AI-PEP record") from None
        value, found_metric = normalise(value, line_unit, metric, f"{source}: line {number}")
        samples.setdefault((label, found_metric), []).append(value)
    if not samples:
        raise UserError(f"{source}: no 'Caffe2Observer' lines found")
    results = []
    for (label, found_metric), values in samples.items():
        group, name = _split_metric(label)
        results.append(measured(suite, name, found_metric, values, group=group))
    return results
