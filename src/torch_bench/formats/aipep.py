"""The AI-PEP format: one line per sample,
`Caffe2Observer {"type": "NET", "metric": "<group>-<name>", "unit": "ms", "value": "<str>"}`,
in fastrnns' order: group by group, each group's runners in run order.

Reading back, the metric is split into group and name by `split_flat_name` (runner names may
hold `-`), so text -> results -> text is exact.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from torch_bench.decoding import parse_json
from torch_bench.errors import UserError
from torch_bench.formats.naming import fastrnns_metric, flat_names, normalise, split_flat_name
from torch_bench.formats.options import ExportOptions
from torch_bench.results.schema import ParamValue, Result, Run, measured

PREFIX = "Caffe2Observer "
# fastrnns labels every line "ms", also on CPU where its values are seconds.
CLAIMED_UNIT_WARNING = ("AI-PEP lines say 'ms', but fastrnns on CPU writes seconds under that "
                        "label: if these came from a CPU run, import again with --unit s")


def export_aipep(run: Run, options: ExportOptions | None = None) -> str:
    options = options or ExportOptions()
    lines = []
    for result, group, name in flat_names(r for r in run.results if options.keeps(r)):
        for sample in result.samples:
            record = {"type": "NET", "metric": f"{group}-{name}",
                      "unit": options.unit_of(result),
                      "value": str(float(options.value(result, sample)))}
            lines.append(PREFIX + json.dumps(record))
    return "".join(line + "\n" for line in lines)


def import_aipep(text: str, *, source: str = "<aipep>", unit: str | None = None,
                 suite: str = "imported", metric: str | None = None,
                 params: Mapping[str, ParamValue] | None = None) -> list[Result]:
    """Results from AI-PEP lines; other lines (logs around them) are ignored. `unit`
    overrides the unit the lines claim, for tools that mislabel it."""
    samples: dict[tuple[str, str], list[float]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.startswith(PREFIX):
            continue
        try:
            record = parse_json(line[len(PREFIX):], f"{source}: line {number}")
            value = float(record["value"])
            label = record["metric"]
            if not isinstance(label, str):  # an object or a list would be a name made of JSON
                raise TypeError
            line_unit = unit or record.get("unit") or "ms"
        except (ValueError, KeyError, TypeError):
            raise UserError(f"{source}: line {number}: not a valid AI-PEP record") from None
        group, _ = split_flat_name(label)
        value, found_metric = normalise(value, line_unit, metric, f"{source}: line {number}",
                                        fastrnns_metric(group))
        samples.setdefault((label, found_metric), []).append(value)
    if not samples:
        raise UserError(f"{source}: no 'Caffe2Observer' lines found")
    results = []
    for (label, found_metric), values in samples.items():
        group, name = split_flat_name(label)
        results.append(measured(suite, name, found_metric, values, group=group,
                                params=dict(params or {})))
    return results
