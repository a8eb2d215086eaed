"""CSV in the layout of PyTorch dynamo's benchmark runner, one row per model, for the compile
suite's results.

Performance (as `--performance` writes it): `dev, name, batch_size, speedup, abs_latency,
compilation_latency, compression_ratio`, with dynamo's units: speedup = median eager time /
median compiled time; abs_latency = the compiled median, ms; compilation_latency = seconds;
compression_ratio = eager peak memory / compiled peak memory (our `memory_ratio` inverted).
A model that did not run reads 0.0 in every figure, as dynamo writes it.

Accuracy (a run of `--check accuracy` only, as `--accuracy` writes it): `dev, name,
batch_size, accuracy`, the accuracy being the status (`pass`, `fail_accuracy`, ...).

`batch_size` is the batch size the model ran with: the configured one, or the model's own
default (`extra.batch_size_used`), 0 when unknown.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from torch_bench.formats.options import ExportOptions
from torch_bench.results.schema import Result, Run

PERFORMANCE = ["dev", "name", "batch_size", "speedup", "abs_latency", "compilation_latency",
               "compression_ratio"]
ACCURACY = ["dev", "name", "batch_size", "accuracy"]
SUITE = "compile"


def _case_key(result: Result) -> tuple:
    params = {k: v for k, v in result.params.items() if k != "runtime"}
    return result.name, tuple(sorted((k, str(v)) for k, v in params.items()))


def _cases(results: Sequence[Result]) -> dict[tuple, dict[tuple[str, str], Result]]:
    """Per case: {(metric, runtime): result}, in the order cases first appear."""
    cases: dict[tuple, dict[tuple[str, str], Result]] = {}
    for r in results:
        if r.suite == SUITE and r.name != "summary":
            cases.setdefault(_case_key(r), {})[(r.metric, str(r.params.get("runtime", "")))] = r
    return cases


def _median(found: dict, metric: str, runtime: str = "") -> float | None:
    result = found.get((metric, runtime))
    return result.summary.median if result is not None and result.ok and result.summary \
        else None


def _batch(first: Result) -> int:
    size = first.params.get("batch_size") or first.extra.get("batch_size_used")
    return int(size) if isinstance(size, (int, float)) else 0


def _device(first: Result) -> str:
    return str(first.params.get("device", "cpu")).split(":")[0]


def _performance_row(found: dict) -> list:
    first = found.get(("speedup", ""), next(iter(found.values())))
    speedup = _median(found, "speedup")
    if speedup is None:
        return [_device(first), first.name, _batch(first), 0.0, 0.0, 0.0, 0.0]
    latency = _median(found, "latency", "compiled") or 0.0
    compile_ms = _median(found, "compile_time") or 0.0
    ratio = _median(found, "memory_ratio")
    return [_device(first), first.name, _batch(first), f"{speedup:.6f}", f"{latency:.6f}",
            f"{compile_ms / 1000:.6f}", f"{1 / ratio:.6f}" if ratio else 0.0]


def _accuracy_row(found: dict) -> list:
    first = next(iter(found.values()))
    return [_device(first), first.name, _batch(first), first.status]


def export_dynamo_csv(run: Run, options: ExportOptions | None = None) -> str:
    cases = _cases(run.results)
    accuracy_only = bool(cases) and all(
        metric != "speedup" for found in cases.values() for metric, _ in found)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(ACCURACY if accuracy_only else PERFORMANCE)
    for found in cases.values():
        writer.writerow(_accuracy_row(found) if accuracy_only else _performance_row(found))
    return buffer.getvalue()
