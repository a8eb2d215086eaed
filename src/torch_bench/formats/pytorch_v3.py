"""PyTorch's "v3" benchmark records, as its CI writes them and test-infra's
`upload-benchmark-results` action uploads them into the ClickHouse table
`benchmark.oss_ci_benchmark_v3`: one JSON object per metric, one per line.

A record: the run's metadata (`timestamp` in Unix seconds, `schema_version` "v3", `name`,
`repo`, `head_branch`, `head_sha`, `workflow_id`, `run_attempt`, `job_id`), then
`benchmark{name, mode, dtype, extra_info}`, `model{name, type, backend, origins,
extra_info}`, `metric{name, benchmark_values, target_value, extra_info}`, `inputs`,
`dependencies` and `runners[]`. Every `extra_info` is a map of strings (the table's
`Map(String, String)`), so structured facts are written there as JSON text.

What a v3 field cannot say (units, directions, statuses, summaries, the run document's own
git, CI, environment and configuration) goes into `extra_info` under the keys named below,
so reading an export back (`pytorch_v3_import`) gives the run it was written from.
docs/pytorch-v3.md has the mapping field by field.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from torch_bench.errors import UserError
from torch_bench.formats.options import ExportOptions
from torch_bench.results.schema import Result, Run

SCHEMA_VERSION = "v3"
ORIGIN = "torch-bench"  # model.origins: where the model's measurement comes from

# extra_info keys that carry, as JSON text, what the v3 fields do not
PARAMS_KEY = "params"  # benchmark.extra_info: the case's parameters, with their types
RUN_KEY = "torch_bench_run"  # benchmark.extra_info: run_id, created_at, git, ci, config
ENV_KEY = "env"  # runners[0].extra_info: the environment, fingerprint included
SUMMARY_KEY = "summary"  # metric.extra_info: n, median, mean, std, iqr, min, max, p90
EXTRA_KEY = "extra"  # metric.extra_info: the result's own extra facts

# the parameters that have v3 fields of their own
MODE, DTYPE, BACKEND, DEVICE = "mode", "dtype", "backend", "device"

# Python packages of the environment recorded as v3 dependencies: env key -> repository
DEPENDENCIES = {"torch": "pytorch/pytorch", "transformers": "huggingface/transformers"}


def export_pytorch_v3(run: Run, options: ExportOptions | None = None) -> str:
    """The run as v3 records, one JSON object per line, one per result."""
    options = options or ExportOptions(all_metrics=True)
    metadata = run_metadata(run)
    shared = {"inputs": {}, "dependencies": dependencies(run.env)}
    lines = [json.dumps({**metadata, **record(result, run, options), **shared,
                         "runners": [runner(run.env, result.params)]})
             for result in run.results]
    return "".join(line + "\n" for line in lines)


def run_metadata(run: Run) -> dict[str, Any]:
    """The fields the upload action's metadata step fills: who ran what, where. Those the
    run does not know are left out: the action fills them with its own, and lets a record's
    fields win over its own (a 0 job id would have it skip the upload)."""
    known = {
        "name": run.ci.get("job"),
        "repo": run.git.get("repository"),
        "head_branch": run.git.get("branch"),
        "head_sha": run.git.get("sha"),
        "workflow_id": _unsigned(run.ci.get("run_id")),
        "run_attempt": _unsigned(run.ci.get("run_attempt")),
        "job_id": _unsigned(run.ci.get("job_id")),
    }
    return {"timestamp": unix_seconds(run.created_at), "schema_version": SCHEMA_VERSION,
            **{key: value if isinstance(value, int) else str(value)
               for key, value in known.items() if value}}


def record(result: Result, run: Run, options: ExportOptions) -> dict[str, Any]:
    params = result.params
    readable = {key: text(value) for key, value in params.items()
                if key not in (MODE, DTYPE, BACKEND)}
    return {
        "benchmark": {
            "name": result.suite,
            "mode": text(params.get(MODE)),
            "dtype": text(params.get(DTYPE)),
            "extra_info": {**readable, PARAMS_KEY: _json(dict(params)),
                           RUN_KEY: _json(_run_facts(run))},
        },
        "model": {
            "name": result.name,
            "type": result.group or "",
            "backend": text(params.get(BACKEND)),
            "origins": [ORIGIN],
            "extra_info": {},
        },
        "metric": metric(result, options),
    }


def metric(result: Result, options: ExportOptions) -> dict[str, Any]:
    """The values are the raw samples in the unit said in extra_info; a result kept without
    samples (an archive's) writes its median, and a failed one none."""
    values = list(result.samples)
    if not values and result.ok:
        values = [result.summary.median]
    extra = {"unit": options.unit_of(result), "direction": result.direction,
             "status": result.status}
    if result.error is not None:
        extra["error"] = result.error
    if result.group is not None:
        extra["group"] = result.group
    if result.summary is not None:
        extra[SUMMARY_KEY] = _json(_scaled_summary(result, options))
    if result.extra:
        extra[EXTRA_KEY] = _json(dict(result.extra))
    return {"name": result.metric,
            "benchmark_values": [options.value(result, v) for v in values],
            "target_value": 0, "extra_info": extra}


def _scaled_summary(result: Result, options: ExportOptions) -> dict[str, Any]:
    summary = result.summary.to_dict()
    return {key: value if key == "n" or value is None else options.value(result, value)
            for key, value in summary.items()}


def _run_facts(run: Run) -> dict[str, Any]:
    return {"run_id": run.run_id, "created_at": run.created_at, "git": dict(run.git),
            "ci": dict(run.ci), "config": dict(run.config)}


def runner(env: Mapping[str, Any], params: Mapping[str, Any]) -> dict[str, Any]:
    """The machine, as the upload action describes it: `name` the device kind (cpu, cuda),
    `type` what it is (the GPU's name, else the CPU's model)."""
    device = str(params.get(DEVICE) or ("cuda" if env.get("gpu_name") else "cpu"))
    kind = device.split(":", 1)[0]
    gpus = env.get("gpus") if isinstance(env.get("gpus"), list) else []
    gpu_mb = sum(g.get("memory_mb") or 0 for g in gpus if isinstance(g, dict))
    on_gpu = kind != "cpu" and env.get("gpu_name")
    extra = {ENV_KEY: _json(dict(env))}
    if env.get("fingerprint"):
        extra["fingerprint"] = str(env["fingerprint"])
    return {
        "name": kind,
        "type": str(env.get("gpu_name") if on_gpu else env.get("cpu_model") or ""),
        "cpu_info": str(env.get("cpu_model") or ""),
        "cpu_count": _unsigned(env.get("cpu_count")),
        "avail_mem_in_gb": _unsigned(env.get("ram_mb")) // 1024,
        "gpu_info": str(env.get("gpu_name") or ""),
        "gpu_count": _unsigned(env.get("gpu_count")),
        "avail_gpu_mem_in_gb": int(gpu_mb // 1024),
        "extra_info": extra,
    }


def dependencies(env: Mapping[str, Any]) -> dict[str, Any]:
    found = {}
    for package, repo in DEPENDENCIES.items():
        version = env.get(package)
        if version:
            extra = {k: str(env[k]) for k in ("cuda", "cudnn") if package == "torch" and env.get(k)}
            found[package] = {"repo": repo, "branch": "", "sha": "", "version": str(version),
                              "extra_info": extra}
    return found


def text(value: Any) -> str:
    """A parameter as the string a v3 map holds: strings as they are, others as JSON."""
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value)


def unix_seconds(created_at: str) -> int:
    try:
        moment = datetime.fromisoformat(created_at.replace("Z", "+00:00"))
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=timezone.utc)
        return max(int(moment.timestamp()), 0)
    except (ValueError, OverflowError, OSError):
        raise UserError(f"created_at: {created_at!r} is not a date and time") from None


def _unsigned(value: Any) -> int:
    """A non-negative integer for the table's UInt columns; 0 when unknown."""
    try:
        number = int(value)
    except (TypeError, ValueError):
        return 0
    return max(number, 0)


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))
