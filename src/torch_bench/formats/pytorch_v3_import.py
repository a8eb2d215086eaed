"""v3 records (PyTorch's benchmark database format, see `pytorch_v3`) read back as runs.

Records are grouped into runs by the metadata the upload action gives every record of one
job: (repo, head_branch, head_sha, workflow_id, run_attempt, job_id, timestamp), and by the
run id a torch-bench export carries. A file of records without metadata (the dynamo runner's
own `.json` output, before the upload action adds it) is one run.

A record torch-bench wrote (its `benchmark.extra_info` holds `torch_bench_run`) gives back
exactly the result and run it was written from. Any other record is mapped field by field
(docs/pytorch-v3.md); what has no place in a run document is kept in the result's
`extra["v3"]`.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from torch_bench.errors import InvalidDocument, UserError
from torch_bench.formats import pytorch_v3 as v3
from torch_bench.formats.pytorch_v3_metrics import describe
from torch_bench.formats.pytorch_v3_records import read_records
from torch_bench.measure.environment import fingerprint
from torch_bench.results.schema import SUCCESS_STATUSES, Result, Run, Status, new_run
from torch_bench.results.stats import Summary, summarize
from torch_bench.results.validate import problems

FORMAT = "pytorch-v3"
DEFAULT_SUITE = FORMAT  # for records whose benchmark has no name
METADATA = ("repo", "head_branch", "head_sha", "workflow_id", "run_attempt", "job_id",
            "timestamp")
TEXT_FIELDS = ("name", "repo", "head_branch", "head_sha")
ID_FIELDS = ("workflow_id", "run_attempt", "job_id")
LAST_SECOND = 253402300799  # 9999-12-31T23:59:59Z
STATUSES = frozenset(status.value for status in Status)
REF_PREFIX = "refs/heads/"


def import_pytorch_v3(text: str, *, source: str = "<pytorch-v3>",
                      suite: str | None = None) -> list[Run]:
    """The runs the records of `text` (JSON lines or a JSON list, see `read_records`) make;
    `suite` names the suite of every result instead of `benchmark.name`."""
    groups: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for where, item in read_records(text, source):
        _check_metadata(item, where)
        groups.setdefault(_group_key(item), []).append((where, item))
    return [_run(records, source, suite) for records in groups.values()]


def _check_metadata(item: Mapping[str, Any], where: str) -> None:
    for name in TEXT_FIELDS:
        if item.get(name) is not None and not isinstance(item[name], str):
            raise UserError(f"{where}: {name}: expected a string, got {_shown(item[name])}")
    for name in ID_FIELDS:
        if item.get(name) is not None and _count(item[name]) is None:
            raise UserError(f"{where}: {name}: expected a whole number >= 0, got "
                            f"{_shown(item[name])}")
    stamp = item.get("timestamp")
    if stamp is not None and _seconds(stamp) is None:
        raise UserError(f"{where}: timestamp: expected Unix seconds, got {_shown(stamp)}")


def _group_key(item: Mapping[str, Any]) -> str:
    facts = _payload(_extra_info(item.get("benchmark")), v3.RUN_KEY, dict) or {}
    numbers = {name: _count(item.get(name)) for name in ID_FIELDS}
    numbers["timestamp"] = _seconds(item.get("timestamp"))
    return json.dumps([facts.get("run_id"), *(numbers.get(name, item.get(name))
                                              for name in METADATA)])


def _run(records: list[tuple[str, dict[str, Any]]], source: str, suite: str | None) -> Run:
    where, first = records[0]
    results = tuple(_result(item, where, suite) for where, item in records)
    _check_results(results, records)
    facts = _payload(_extra_info(first.get("benchmark")), v3.RUN_KEY, dict)
    env = _env(first)
    if facts is not None and isinstance(facts.get("run_id"), str) \
            and isinstance(facts.get("created_at"), str):
        return Run(run_id=facts["run_id"], created_at=facts["created_at"], results=results,
                   git=_mapping(facts.get("git")), ci=_mapping(facts.get("ci")), env=env,
                   config=_mapping(facts.get("config")))
    created_at = _created_at(first.get("timestamp"))
    config = {"imported_from": {"format": FORMAT, "file": source}}
    run_id = None
    if created_at is not None:
        digest = hashlib.sha256(_group_key(first).encode()).hexdigest()[:10]
        stamp = created_at.replace("-", "").replace(":", "").replace("Z", "")
        run_id = f"{stamp}-{digest}"
    return new_run(results, run_id=run_id, created_at=created_at, git=_git(first),
                   ci=_ci(first), env=env, config=config)


def _check_results(results: tuple[Result, ...],
                   records: list[tuple[str, dict[str, Any]]]) -> None:
    """Refuse what a run document cannot hold (a negative time, a name with control
    characters), naming the record's line and its own field."""
    found = problems(Run(run_id="check", created_at="1970-01-01T00:00:00Z",
                         results=results).to_dict())
    if not found:
        return
    matched = _RESULT_PROBLEM.match(found[0])
    if matched is None:
        raise InvalidDocument(f"{records[0][0]}: {found[0]}")
    index, field, detail = matched.groups()
    raise InvalidDocument(f"{records[int(index)][0]}: {V3_FIELDS.get(field, field)}{detail}")


# result fields, as the v3 record names them (for errors)
V3_FIELDS = {"samples": "metric.benchmark_values", "suite": "benchmark.name",
             "name": "model.name", "metric": "metric.name", "params": "benchmark.extra_info",
             "summary": "metric.extra_info.summary", "group": "metric.extra_info.group"}
_RESULT_PROBLEM = re.compile(r"results\[(\d+)\]\.(\w+)(.*)", re.DOTALL)


def _result(item: Mapping[str, Any], where: str, suite: str | None) -> Result:
    benchmark = _object(item, "benchmark", where)
    model = _object(item, "model", where)
    metric = _object(item, "metric", where, required=True)
    name, metric_name = _name(model, "model", where), _name(metric, "metric", where)
    bench_info, metric_info = _extra_info(benchmark), _extra_info(metric)
    ours = _payload(bench_info, v3.RUN_KEY, dict) is not None
    spec = describe(metric_name, _text(metric_info.get("unit")),
                    _text(metric_info.get("direction")))
    values = [value * spec.factor for value in _values(metric, where)]
    status, error, values, noted = _outcome(metric_info, values, metric_name)
    summary = _summary(metric_info, spec.factor) if ours else None
    if summary is not None and summary.n != len(values):
        values = []  # a result kept without samples: its median stood in for them
    if summary is None and values and status != Status.ERROR.value:
        summary = summarize(values)
    group = _text(metric_info.get("group"))
    extra = (_payload(metric_info, v3.EXTRA_KEY, dict) or {}) if ours \
        else _leftovers(item, benchmark, model, metric, noted)
    return Result(suite=suite or _suite(benchmark), name=name, metric=metric_name,
                  unit=spec.unit, direction=spec.direction,
                  params=_params(bench_info, benchmark, model, item), status=status,
                  samples=tuple(values), summary=summary, group=group, error=error,
                  extra=extra)


def _outcome(info: Mapping[str, Any], values: list[float], metric: str
             ) -> tuple[str, str | None, list[float], str | None]:
    """(status, error, values, the file's text value): the status the record says, else
    `ok` with values. Without numbers a text value (dynamo writes its accuracy column as
    `metric.extra_info.benchmark_values: ["pass"]`) is the status: `pass` counts 1.0, other
    words are failures."""
    said = info.get("status")
    error = _text(info.get("error"))
    if said in STATUSES and (values or said not in SUCCESS_STATUSES):
        return said, error, values, None
    if values:
        return Status.OK.value, error, values, None
    words = info.get("benchmark_values")
    word = words[0] if isinstance(words, list) and words and isinstance(words[0], str) \
        else None
    if word == Status.PASS.value:
        return Status.PASS.value, None, [1.0], word
    if word is not None:
        status = word if word in STATUSES else Status.ERROR.value
        return status, f"{metric}: {word}", [], word
    return Status.ERROR.value, error or "the v3 record has no value", [], None


def _values(metric: Mapping[str, Any], where: str) -> list[float]:
    values = metric.get("benchmark_values")
    if values is None:
        return []
    if not isinstance(values, list) or not all(_is_number(v) for v in values):
        raise UserError(f"{where}: metric.benchmark_values: expected a list of finite numbers, "
                        f"got {_shown(values)}")
    return [float(v) for v in values]


def _summary(info: Mapping[str, Any], factor: float) -> Summary | None:
    found = _payload(info, v3.SUMMARY_KEY, dict)
    if found is None or set(found) != set(Summary.__dataclass_fields__):
        return None
    if factor != 1.0:
        found = {k: v if k == "n" or v is None else v * factor for k, v in found.items()}
    return Summary.from_dict(found)


def _params(info: Mapping[str, Any], benchmark: Mapping[str, Any], model: Mapping[str, Any],
            item: Mapping[str, Any]) -> dict[str, Any]:
    """The case's parameters: exactly as written when `extra_info.params` holds them, else
    mode, dtype, backend, device and batch size from the fields that say them."""
    written = _payload(info, v3.PARAMS_KEY, dict)
    if written is not None and all(_is_param(v) for v in written.values()):
        return written
    runners = item.get("runners")
    runner = runners[0] if isinstance(runners, list) and runners else {}
    found = {v3.MODE: benchmark.get("mode"), v3.DTYPE: benchmark.get("dtype"),
             v3.BACKEND: model.get("backend"),
             v3.DEVICE: info.get("device") or (runner.get("name")
                                               if isinstance(runner, dict) else None),
             "batch_size": info.get("batch_size")}
    return {key: value for key, value in found.items()
            if _is_param(value) and value not in (None, "")}


def _leftovers(item: Mapping[str, Any], benchmark: Mapping[str, Any],
               model: Mapping[str, Any], metric: Mapping[str, Any],
               word: str | None) -> dict[str, Any]:
    """What a foreign record says that a run document has no field for."""
    kept = {
        "benchmark_extra_info": benchmark.get("extra_info"),
        "model_type": model.get("type"), "model_origins": model.get("origins"),
        "model_extra_info": model.get("extra_info"),
        "metric_extra_info": metric.get("extra_info"),
        "target_value": metric.get("target_value"),
        "inputs": item.get("inputs"), "dependencies": item.get("dependencies"),
        "value_text": word,
    }
    return {"v3": {key: value for key, value in kept.items() if value not in (None, "", {}, [])}}


def _env(item: Mapping[str, Any]) -> dict[str, Any]:
    """The machine: as a torch-bench export recorded it, else from `runners[0]` and the
    torch version among `dependencies`."""
    runners = item.get("runners")
    runner = runners[0] if isinstance(runners, list) and runners \
        and isinstance(runners[0], dict) else {}
    written = _payload(_extra_info(runner), v3.ENV_KEY, dict)
    if written is not None:
        return written
    dependencies = item.get("dependencies") if isinstance(item.get("dependencies"), dict) \
        else {}
    torch = dependencies.get("torch") if isinstance(dependencies.get("torch"), dict) else {}
    memory = _count(runner.get("avail_mem_in_gb"))
    fields = {"device": runner.get("name"), "runner_type": runner.get("type"),
              "cpu_model": runner.get("cpu_info"), "cpu_count": _count(runner.get("cpu_count")),
              "ram_mb": memory * 1024 if memory else None, "gpu_name": runner.get("gpu_info"),
              "gpu_count": _count(runner.get("gpu_count")), "torch": torch.get("version")}
    env: dict[str, Any] = {"source": FORMAT, **{k: v for k, v in fields.items()
                                                if isinstance(v, (str, int)) and v != ""}}
    env["fingerprint"] = fingerprint(env)
    return env


def _git(item: Mapping[str, Any]) -> dict[str, Any]:
    branch = item.get("head_branch")
    if isinstance(branch, str) and branch.startswith(REF_PREFIX):
        branch = branch[len(REF_PREFIX):]  # the upload action writes github.ref on pushes
    git = {"repository": item.get("repo"), "sha": item.get("head_sha"), "branch": branch}
    return {key: value for key, value in git.items() if value}


def _ci(item: Mapping[str, Any]) -> dict[str, Any]:
    if not _count(item.get("workflow_id")):
        return {"provider": FORMAT}
    ci = {"provider": "github-actions", "run_id": str(_count(item["workflow_id"])),
          "run_attempt": str(_count(item.get("run_attempt")) or ""),
          "job": item.get("name"), "job_id": _count(item.get("job_id"))}
    return {key: value for key, value in ci.items() if value}


def _created_at(stamp: Any) -> str | None:
    seconds = _seconds(stamp)
    if seconds is None:
        return None
    return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _seconds(stamp: Any) -> int | None:
    """Unix seconds, as a number or as digits (ClickHouse's JSON output quotes 64-bit
    integers under `output_format_json_quote_64bit_integers`); None for anything else or a
    time past the year 9999."""
    seconds = _count(stamp)
    if seconds is None and _is_number(stamp) and stamp >= 0:
        seconds = int(stamp)
    return seconds if seconds is not None and seconds <= LAST_SECOND else None


def _suite(benchmark: Mapping[str, Any]) -> str:
    """benchmark.name as a suite name (which becomes part of file names: no `/`)."""
    name = benchmark.get("name")
    if not isinstance(name, str) or not name.strip():
        return DEFAULT_SUITE
    return name.replace("/", "-").replace("\\", "-").lstrip(".") or DEFAULT_SUITE


def _name(part: Mapping[str, Any], field: str, where: str) -> str:
    name = part.get("name")
    if not isinstance(name, str) or not name.strip():
        raise UserError(f"{where}: {field}.name: expected a name, got {_shown(name)}")
    return name


def _object(item: Mapping[str, Any], field: str, where: str,
            required: bool = False) -> Mapping[str, Any]:
    value = item.get(field)
    if value is None and not required:
        return {}
    if not isinstance(value, dict):
        raise UserError(f"{where}: {field}: expected an object, got {_shown(value)}")
    return value


def _extra_info(part: Any) -> Mapping[str, Any]:
    info = part.get("extra_info") if isinstance(part, dict) else None
    return info if isinstance(info, dict) else {}


def _payload(info: Mapping[str, Any], key: str, kind: type) -> Any:
    """The JSON text at `info[key]` decoded, when it is JSON of type `kind`; else None."""
    text = info.get(key)
    if not isinstance(text, str):
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, kind) else None


def _mapping(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, dict) else {}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _is_number(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer too large for a float
        return False


def _is_param(value: Any) -> bool:
    return value is None or isinstance(value, (str, bool)) or _is_number(value)


def _count(value: Any) -> int | None:
    """A whole number >= 0 (an int, or digits as the workflow variables give them)."""
    if isinstance(value, str) and value.isascii() and value.isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


def _shown(value: Any) -> str:
    shown = json.dumps(value) if not isinstance(value, float) else repr(value)
    return shown if len(shown) <= 60 else shown[:57] + "..."
