"""The OSS format of PyTorch's fastrnns: one JSON object `{group: {name: value}}`, the value
being the mean over samples (the median where an imported result has no mean). `json.dumps`
with default separators, as fastrnns prints it. The values carry no unit: consumers read them
as times, so only time results are written unless all metrics are asked for, and reading a
file back needs the unit said."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping

from torch_bench.decoding import parse_json
from torch_bench.errors import UserError
from torch_bench.formats.naming import fastrnns_metric, flat_names, normalise
from torch_bench.formats.options import ExportOptions
from torch_bench.results.schema import ParamValue, Result, Run, measured

MISSING_UNIT = ("OSS files do not say their unit: pass --unit (ms; s for fastrnns on CPU, "
                "which prints seconds)")


def export_oss(run: Run, options: ExportOptions | None = None) -> str:
    options = options or ExportOptions()
    document: dict[str, dict[str, float]] = {}
    for result, group, name in flat_names(r for r in run.results if options.keeps(r)):
        summary = result.summary
        value = summary.mean if summary.mean is not None else summary.median
        document.setdefault(group, {})[name] = options.value(result, value)
    return json.dumps(document) + "\n"


def import_oss(text: str, *, source: str = "<oss>", unit: str | None = None,
               suite: str = "imported", metric: str | None = None,
               params: Mapping[str, ParamValue] | None = None) -> list[Result]:
    """Results from an OSS document whose values are in `unit` (required: the file does not
    say). fastrnns' groups give forward_time / backward_time unless `metric` is named."""
    if unit is None:
        raise UserError(f"{source}: {MISSING_UNIT}")
    data = parse_json(text, source)
    if not isinstance(data, dict):
        raise UserError(f"{source}: expected an object of groups")
    results = []
    for group, members in data.items():
        if not isinstance(members, dict):
            raise UserError(f"{source}: {group}: expected an object of name: value")
        for name, value in members.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or not math.isfinite(value):
                raise UserError(f"{source}: {group}.{name}: expected a number, got {value!r}")
            value, found_metric = normalise(value, unit, metric, f"{source}: {group}",
                                            fastrnns_metric(group))
            results.append(measured(suite, name, found_metric, [value], group=group,
                                    params=dict(params or {})))
    return results
