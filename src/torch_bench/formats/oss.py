"""The OSS format of PyTorch's fastrnns: one JSON object `{group: {name: value}}`, the value
being the mean over samples (the median where an imported result has no mean). `json.dumps`
with default separators, as fastrnns prints it."""

from __future__ import annotations

import json
import math

from torch_bench.errors import UserError
from torch_bench.formats.naming import flat_names, normalise
from torch_bench.results.schema import Result, Run, measured


def export_oss(run: Run) -> str:
    document: dict[str, dict[str, float]] = {}
    for result, group, name in flat_names(run.results):
        summary = result.summary
        document.setdefault(group, {})[name] = summary.mean if summary.mean is not None \
            else summary.median
    return json.dumps(document) + "\n"


def import_oss(text: str, *, source: str = "<oss>", unit: str | None = None,
               suite: str = "imported", metric: str | None = None) -> list[Result]:
    """Results from an OSS document. `unit` says what the values really are (fastrnns on CPU
    writes seconds); the default is milliseconds."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"{source}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
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
            value, found_metric = normalise(value, unit or "ms", metric, f"{source}: {group}")
            results.append(measured(suite, name, found_metric, [value], group=group))
    return results
