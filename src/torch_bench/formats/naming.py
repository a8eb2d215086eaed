"""How results are named in the flat `group` / `name` formats (OSS, AI-PEP)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from torch_bench.errors import UserError
from torch_bench.metrics import MEMORY_TO_MB, METRICS, TIME_TO_MS, get_metric
from torch_bench.results.schema import Result

# fastrnns' groups: a forward group times the forward pass; "<group>-backward" the backward.
FASTRNNS_GROUPS = ("lstm", "vl_lstm", "resnet", "cnns", "rnns")
BACKWARD_SUFFIX = "-backward"


def fastrnns_metric(group: str | None) -> str | None:
    """forward_time / backward_time for fastrnns' groups (so imported history joins the
    native `rnns` series), else None."""
    if group in FASTRNNS_GROUPS:
        return "forward_time"
    if group and group.endswith(BACKWARD_SUFFIX) \
            and group[:-len(BACKWARD_SUFFIX)] in FASTRNNS_GROUPS:
        return "backward_time"
    return None


def _is_known_group(group: str) -> bool:
    suite, _, metric = group.rpartition("-")
    return fastrnns_metric(group) is not None or bool(suite and metric in METRICS)


def split_flat_name(label: str) -> tuple[str | None, str]:
    """(group, name) from "<group>-<name>". Names may hold `-` (runner names such as
    `my-lstm`), so the longest prefix that is a known group wins: one of fastrnns' groups
    (with or without `-backward`) or our own "<suite>-<metric>". An unknown group ends at
    `-backward` when there is one, else at the first `-`."""
    cuts = [i for i, char in enumerate(label) if char == "-" and 0 < i < len(label) - 1]
    known = [i for i in cuts if _is_known_group(label[:i])]
    if known:
        cut = max(known)
    elif BACKWARD_SUFFIX + "-" in label:
        cut = label.index(BACKWARD_SUFFIX + "-") + len(BACKWARD_SUFFIX)
    elif cuts:
        cut = cuts[0]
    else:
        return None, label
    return label[:cut], label[cut + 1:]


def group_of(result: Result) -> str:
    return result.group or f"{result.suite}-{result.metric}"


def flat_names(results: Iterable[Result]) -> list[tuple[Result, str, str]]:
    """(result, group, name) for each successful result, grouped as fastrnns prints them:
    group by group in the order each group first appears, and within a group in run order.
    Where several results would share a group and name (a grid of parameters), the name gets
    the parameters as a suffix."""
    usable = [r for r in results if r.ok]
    counts = Counter((group_of(r), r.name) for r in usable)
    first_seen: dict[str, int] = {}
    for result in usable:
        first_seen.setdefault(group_of(result), len(first_seen))
    named = []
    for result in sorted(usable, key=lambda r: first_seen[group_of(r)]):
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


def normalise(value: float, unit: str, metric: str | None, where: str,
              time_metric: str | None = None) -> tuple[float, str]:
    """`value` given in `unit`, in the normalised unit, with the metric it measures: `metric`
    when the user named one, else `time_metric` (or `time`) for time units, `peak_memory` for
    memory units, or the one metric measured in that unit."""
    if unit in TIME_TO_MS:
        return value * TIME_TO_MS[unit], _matching(metric, "ms", unit, where) or time_metric \
            or "time"
    if unit in MEMORY_TO_MB:
        return value * MEMORY_TO_MB[unit], _matching(metric, "MB", unit, where) or "peak_memory"
    if metric is not None and unit == get_metric(metric).unit:
        return value, metric
    if metric is None and _only_metric_in(unit):
        return value, _only_metric_in(unit)
    raise UserError(f"{where}: unit {unit!r} could be more than one metric, or none; name the "
                    "metric with --metric")


def _matching(metric: str | None, normalised: str, unit: str, where: str) -> str | None:
    """`metric`, when values in `unit` (normalised to `normalised`) can measure it."""
    if metric is not None and get_metric(metric).unit != normalised:
        raise UserError(f"{where}: the metric {metric!r} is measured in "
                        f"{get_metric(metric).unit!r}, so values in {unit!r} cannot be it")
    return metric
