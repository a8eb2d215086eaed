"""The CSV files of the Hugging Face benchmark utilities (`PyTorchBenchmark` with
`save_to_csv`), one per kind of measurement, from a transformers-suite run:

    inference_time.csv    model,batch_size,sequence_length,result   seconds per step
    train_time.csv        model,batch_size,sequence_length,result   seconds per step
    inference_memory.csv  model,batch_size,sequence_length,result   MB (peak of the case)
    train_memory.csv      model,batch_size,sequence_length,result   MB
    env.csv               one `name,value` row per environment field: Hugging Face's keys
                          first (`hf_env`), then the run's own fields
    memory_trace.txt      the line-by-line memory summaries (runs with --trace-memory), as
                          Hugging Face prints them to its output and its log (`log_print`):
                          it writes them to no CSV

A time is the statistic the run was asked for (`--statistic`, recorded in the latency's
`extra.statistic`; Hugging Face's is `min`, the fastest repeat), or the one given here. A case
that did not run reads "N/A", as Hugging Face writes it. Only files with rows are made (env
always).
"""

from __future__ import annotations

import csv
import io

from torch_bench.formats.hf_env import hf_environment
from torch_bench.results.schema import Result, Run

FIELDS = ["model", "batch_size", "sequence_length", "result"]
SUITE = "transformers"
# file -> (metric, mode)
FILES = {
    "inference_time.csv": ("latency", "inference"),
    "train_time.csv": ("latency", "train"),
    "inference_memory.csv": ("peak_rss", "inference"),
    "train_memory.csv": ("peak_rss", "train"),
}
STATISTIC_FIELDS = {"min": "min", "median": "median", "mean": "mean"}


def _value(result: Result, statistic: str | None) -> str:
    if not result.ok or result.summary is None:
        return "N/A"
    if result.metric == "peak_rss":
        return f"{result.summary.max if result.summary.max is not None else 0:.0f}"
    chosen = statistic or result.extra.get("statistic", "median")
    value = getattr(result.summary, STATISTIC_FIELDS.get(chosen, "median"))
    return f"{(value if value is not None else result.summary.median) / 1000:.6g}"


def _table(rows: list[dict]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=FIELDS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def _env_csv(run: Run) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    hf = hf_environment(run)
    writer.writerows(hf.items())
    for key, value in (run.env or {}).items():
        if not isinstance(value, (dict, list)) and key not in hf:
            writer.writerow([key, value])
    return buffer.getvalue()


def hf_csv_files(run: Run, statistic: str | None = None) -> dict[str, str]:
    """{file name: text} of the Hugging Face CSV set."""
    files: dict[str, str] = {}
    for name, (metric, mode) in FILES.items():
        rows = [{"model": r.params.get("model", r.name), "batch_size": r.params.get("batch_size"),
                 "sequence_length": r.params.get("sequence_length"),
                 "result": _value(r, statistic)}
                for r in run.results
                if r.suite == SUITE and r.metric == metric and r.params.get("mode") == mode]
        if rows:
            files[name] = _table(rows)
    files["env.csv"] = _env_csv(run)
    traces = memory_trace_text(run)
    if traces:
        files["memory_trace.txt"] = traces
    return files


def memory_trace_text(run: Run) -> str:
    """Each traced case's summary under a heading naming the mode and the case."""
    from torch_bench.measure.memtrace import format_memory_trace

    lines: list[str] = []
    for r in run.results:
        trace = r.extra.get("memory_trace") if r.suite == SUITE else None
        if trace:
            mode = str(r.params.get("mode", "")).upper()
            title = (f"{r.name} (batch_size={r.params.get('batch_size')}, "
                     f"sequence_length={r.params.get('sequence_length')}, "
                     f"dtype={r.params.get('dtype')})")
            lines += [f"==== {mode} - MEMORY - LINE BY LINE - SUMMARY ====",
                      *format_memory_trace(trace, title), ""]
    return "\n".join(lines)
