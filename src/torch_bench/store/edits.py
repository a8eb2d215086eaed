"""History edits as pure functions over runs: each returns the runs that remain, changed.
`data prune` and `data rename` plan file changes from their output (see plan.py)."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import replace

from torch_bench.results.schema import ParamValue, Result, Run


def prune_before(runs: Iterable[Run], before: str) -> list[Run]:
    """Runs created at or after `before` (ISO-8601 date or timestamp, compared as text)."""
    return [run for run in runs if run.created_at >= before]


def keep_newest(runs: Iterable[Run], keep: int) -> list[Run]:
    """Only the newest `keep` results of every benchmark; runs left empty are dropped."""
    ordered = sorted(runs, key=lambda run: (run.created_at, run.run_id), reverse=True)
    seen: dict[str, int] = defaultdict(int)
    kept_runs = []
    for run in ordered:
        kept = []
        for result in run.results:
            seen[result.benchmark_id] += 1
            if seen[result.benchmark_id] <= keep:
                kept.append(result)
        if kept:
            kept_runs.append(run if len(kept) == len(run.results) else run.with_results(kept))
    return kept_runs[::-1]


def rename_benchmark(runs: Iterable[Run], old: str, new: str,
                     suite: str | None = None) -> list[Run]:
    def rename(result: Result) -> Result:
        if result.name == old and (suite is None or result.suite == suite):
            return replace(result, name=new)
        return result
    return [_map_results(run, rename) for run in runs]


def benchmark_exists(runs: Iterable[Run], name: str, suite: str | None = None) -> bool:
    """Whether any result is named `name` (in `suite`, when given): renaming another benchmark
    to it would merge two series."""
    return any(result.name == name and (suite is None or result.suite == suite)
               for run in runs for result in run.results)


def param_value_exists(runs: Iterable[Run], key: str, value: str) -> bool:
    """Whether parameter `key` already has `value` (compared as text) somewhere."""
    return any(key in result.params and _as_text(result.params[key]) == value
               for run in runs for result in run.results)


def duplicate_series(run: Run) -> list[str]:
    """Benchmark ids that occur more than once in one run: two series merged into one."""
    counts: dict[str, int] = defaultdict(int)
    for result in run.results:
        counts[result.benchmark_id] += 1
    return sorted(bid for bid, count in counts.items() if count > 1)


def parse_param_value(text: str) -> ParamValue:
    """A parameter value typed as on the command line: numbers, true/false, null, else text."""
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return value if isinstance(value, (int, float, bool)) or value is None else text


def rename_param(runs: Iterable[Run], key: str, old: str, new: str) -> list[Run]:
    """Change parameter `key` from `old` to `new` wherever it has that value (compared as text,
    so `--param batch_size 8 16` matches the integer 8)."""
    value = parse_param_value(new)

    def rename(result: Result) -> Result:
        if key in result.params and _as_text(result.params[key]) == old:
            return replace(result, params={**result.params, key: value})
        return result
    return [_map_results(run, rename) for run in runs]


def _as_text(value: ParamValue) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _map_results(run: Run, change) -> Run:
    results = tuple(change(result) for result in run.results)
    return run if results == run.results else run.with_results(results)
