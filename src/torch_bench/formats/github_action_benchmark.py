"""Migration from github-action-benchmark: its `data.js` history
(`window.BENCHMARK_DATA = {"lastUpdate", "repoUrl", "entries": {suite: [entry, ...]}}`, each
entry `{"commit": {...}, "date": <ms epoch>, "tool": ..., "benches": [{"name", "value",
"unit", "range"?, "extra"?}]}`) as our runs, one per suite entry, keeping commits and dates.

Units map onto our metric table: times (ns/iter, us, ms, s, ...) become `time` in ms,
memory (bytes, MB, ...) becomes `memory` in MB, rates (ops/sec, iter/sec) `op_throughput`;
anything else is kept as it was under the generic `value` (smaller is better) or `score`
(bigger is better). The direction comes from the tool, as github-action-benchmark decides it.
The original unit, range and extra text are kept in each result's `extra`.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from torch_bench.decoding import parse_json
from torch_bench.errors import InvalidDocument, UserError
from torch_bench.metrics import MEMORY_TO_MB, TIME_TO_MS
from torch_bench.results.schema import Result, Run, measured

FORMAT = "github-action-benchmark"

# Tools whose values are better when bigger (github-action-benchmark's own rule per tool).
BIGGER_IS_BETTER_TOOLS = frozenset({"customBiggerIsBetter", "benchmarkjs", "pytest", "jmh"})

TIME_ALIASES = {"nsec": "ns", "usec": "us", "μs": "us", "msec": "ms", "secs": "s",
                "seconds": "s", "milliseconds": "ms", "microseconds": "us", "nanoseconds": "ns"}
MEMORY_ALIASES = {"bytes": "B", "byte": "B", "b": "B", "kb": "KB", "mb": "MB", "gb": "GB"}
RATE_PATTERN = re.compile(r"^[a-z]+\s*/\s*(s|sec|second)$", re.IGNORECASE)

# (quantity, bigger is better) -> metric; the rest go to `value` / `score` unconverted.
METRIC_FOR = {("time", False): "time", ("memory", False): "memory",
              ("rate", True): "op_throughput"}

_PREFIX = re.compile(r"^\s*window\.BENCHMARK_DATA\s*=\s*")


def split_unit(unit: str) -> tuple[str, dict[str, float]]:
    """(unit, {aux unit: value}). github-action-benchmark's Go parser keeps the rest of a
    benchmark line in the unit when Go reports extra metrics: `ns/op\t 4.000 auxMetricUnits`
    is the unit `ns/op` plus the metric `auxMetricUnits` = 4.0."""
    first, *rest = unit.split() or [""]
    if len(rest) % 2:
        return unit.strip(), {}  # not a Go metrics tail: keep the unit as written
    aux: dict[str, float] = {}
    for value, name in zip(rest[::2], rest[1::2], strict=True):
        try:
            aux[name] = float(value)
        except ValueError:
            return unit.strip(), {}
    return first, aux


def quantity_of(unit: str) -> tuple[str, float]:
    """(quantity, factor into our unit) for a github-action-benchmark unit string."""
    base = re.sub(r"\s*/\s*(iter|op|iteration)$", "", unit.strip())
    time = TIME_ALIASES.get(base, base)
    if time in TIME_TO_MS:
        return "time", TIME_TO_MS[time]
    memory = MEMORY_ALIASES.get(base.lower(), base)
    if memory in MEMORY_TO_MB:
        return "memory", MEMORY_TO_MB[memory]
    if RATE_PATTERN.match(unit.strip()):
        return "rate", 1.0
    return "other", 1.0


def parse_data_js(text: str, source: str) -> Mapping[str, Any]:
    body = _PREFIX.sub("", text.strip(), count=1).rstrip().rstrip(";")
    try:
        data = parse_json(body, source)
    except InvalidDocument as exc:
        raise UserError(f"{source}: not a github-action-benchmark data file (expected "
                        f"`window.BENCHMARK_DATA = {{...}}`; {str(exc)[len(source) + 2:]})"
                        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("entries"), dict):
        raise UserError(f"{source}: entries: expected an object of benchmark suites")
    return data


def import_github_action_benchmark(text: str, *, source: str = "data.js",
                                   branch: str | None = "main") -> list[Run]:
    """The runs of a data.js history. github-action-benchmark records no branch: its history
    is the one branch its workflow pushes from, normally the default branch, so the runs are
    filed under `branch` and serve as that branch's baseline."""
    data = parse_data_js(text, source)
    repository = _repository(data.get("repoUrl"))
    runs = []
    for suite, entries in data["entries"].items():
        where = f"{source}: entries[{json.dumps(suite)}]"
        if not isinstance(entries, list):
            raise UserError(f"{where}: expected a list of runs")
        for index, entry in enumerate(entries):
            runs.append(_run(suite, entry, repository, f"{where}[{index}]", source, branch))
    return sorted(runs, key=lambda run: (run.created_at, run.run_id))


def _run(suite: str, entry: Any, repository: str | None, where: str, source: str,
         branch: str | None) -> Run:
    if not isinstance(entry, dict):
        raise UserError(f"{where}: expected an object")
    commit = entry.get("commit") if isinstance(entry.get("commit"), dict) else {}
    date = entry.get("date")
    if isinstance(date, bool) or not isinstance(date, (int, float)) or not math.isfinite(date):
        raise UserError(f"{where}.date: expected milliseconds since 1970, got {date!r}")
    created_at = datetime.fromtimestamp(date / 1000, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    tool = str(entry.get("tool", ""))
    benches = entry.get("benches")
    if not isinstance(benches, list):
        raise UserError(f"{where}.benches: expected a list")
    results = [_result(suite, bench, tool, f"{where}.benches[{i}]")
               for i, bench in enumerate(benches)]
    identity = f"{suite}\n{commit.get('id')}\n{date}".encode()
    stamp = created_at.replace("-", "").replace(":", "").replace("Z", "")
    return Run(
        run_id=f"{stamp}-{hashlib.sha256(identity).hexdigest()[:10]}",
        created_at=created_at,
        results=tuple(results),
        git={"repository": repository, "sha": commit.get("id"), "branch": branch,
             "message": commit.get("message"), "url": commit.get("url"),
             "commit_timestamp": commit.get("timestamp"),
             "author": _person(commit.get("author")),
             "committer": _person(commit.get("committer"))},
        ci={"provider": FORMAT},
        env={},
        config={"imported_from": {"format": FORMAT, "file": source, "suite": suite,
                                  "tool": tool}},
    )


def _result(suite: str, bench: Any, tool: str, where: str) -> Result:
    if not isinstance(bench, dict) or not isinstance(bench.get("name"), str):
        raise UserError(f"{where}.name: expected a benchmark name")
    value = bench.get("value")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise UserError(f"{where}.value: expected a number, got {value!r}")
    unit, aux_metrics = split_unit(str(bench.get("unit", "")))
    quantity, factor = quantity_of(unit)
    bigger = tool in BIGGER_IS_BETTER_TOOLS
    metric = METRIC_FOR.get((quantity, bigger))
    if metric is None:
        metric, factor = ("score" if bigger else "value"), 1.0
    extra: dict[str, Any] = {"unit": unit, "tool": tool}
    if aux_metrics:
        extra["aux_metrics"] = aux_metrics
    extra.update({key: bench[key] for key in ("range", "extra") if bench.get(key) is not None})
    return measured(suite, bench["name"], metric, [value * factor], extra=extra)


def _repository(url: Any) -> str | None:
    if not isinstance(url, str):
        return None
    match = re.match(r"^https?://[^/]+/([^/]+/[^/]+?)(\.git)?/?$", url)
    return match.group(1) if match else url


def _person(person: Any) -> str | None:
    if not isinstance(person, dict):
        return None
    name, email = person.get("name") or person.get("username"), person.get("email")
    return f"{name} <{email}>" if name and email else name


# Importers that yield a whole history (many runs, each with its own commit and date).
HISTORY_IMPORTERS = {FORMAT: import_github_action_benchmark}
