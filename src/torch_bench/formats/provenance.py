"""Where an imported file's results were measured: the commit, the date and the machine the
file itself records (asv and pytest-benchmark carry them; OSS and AI-PEP do not). An import
keeps these rather than describing the machine and checkout that happen to read the file."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from torch_bench.measure.environment import fingerprint


@dataclass(frozen=True)
class FileProvenance:
    git: Mapping[str, Any] = field(default_factory=dict)
    created_at: str | None = None  # UTC ISO-8601, as run documents write it
    env: Mapping[str, Any] = field(default_factory=dict)  # the measuring machine, as recorded


def _iso(moment: datetime) -> str:
    moment = moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).replace(microsecond=0).isoformat() \
        .replace("+00:00", "Z")


def _int_or_none(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _machine(source: str, **fields: Any) -> dict[str, Any]:
    env = {"source": source, **{k: v for k, v in fields.items() if v is not None}}
    env["fingerprint"] = fingerprint(env)
    return env


def asv_provenance(data: Mapping[str, Any]) -> FileProvenance:
    """asv: `commit_hash`, `date` (the commit's date, ms since 1970) and the machine `params`."""
    params = data.get("params") if isinstance(data.get("params"), dict) else {}
    date = data.get("date")
    created_at = _iso(datetime.fromtimestamp(date / 1000, timezone.utc)) \
        if isinstance(date, (int, float)) and not isinstance(date, bool) else None
    ram = _int_or_none(params.get("ram"))
    env = _machine("asv", machine=params.get("machine"), cpu_model=params.get("cpu"),
                   cpu_count=_int_or_none(params.get("num_cpu")), platform=params.get("os"),
                   arch=params.get("arch"), ram_mb=round(ram / 2**20) if ram else None,
                   asv_environment=data.get("env_name"))
    return FileProvenance(git={"sha": data.get("commit_hash")}, created_at=created_at, env=env)


def pytest_benchmark_provenance(data: Mapping[str, Any]) -> FileProvenance:
    """pytest-benchmark: `commit_info`, `datetime` and `machine_info`."""
    commit = data.get("commit_info") if isinstance(data.get("commit_info"), dict) else {}
    machine = data.get("machine_info") if isinstance(data.get("machine_info"), dict) else {}
    cpu = machine.get("cpu") if isinstance(machine.get("cpu"), dict) else {}
    sha = commit.get("id") if commit.get("id") not in (None, "unversioned") else None
    branch = commit.get("branch") if commit.get("branch") not in (None, "(unknown)") else None
    try:
        created_at = _iso(datetime.fromisoformat(str(data.get("datetime"))))
    except ValueError:
        created_at = None
    system = " ".join(str(machine[k]) for k in ("system", "release") if machine.get(k))
    env = _machine("pytest-benchmark", machine=machine.get("node"),
                   cpu_model=cpu.get("brand_raw"), cpu_count=cpu.get("count"),
                   python=machine.get("python_version"), platform=system or None,
                   arch=machine.get("machine"))
    git = {"sha": sha, "branch": branch, "dirty": commit.get("dirty"),
           "project": commit.get("project"), "commit_timestamp": commit.get("time")}
    return FileProvenance(git={k: v for k, v in git.items() if v is not None},
                          created_at=created_at, env=env)


PROVENANCE: dict[str, Callable[[Mapping[str, Any]], FileProvenance]] = {
    "asv": asv_provenance,
    "pytest-benchmark": pytest_benchmark_provenance,
}


def file_provenance(format_name: str, text: str) -> FileProvenance:
    """What the file records about itself; empty for formats that record nothing (the file
    has been read by its importer already, so it parses)."""
    reader = PROVENANCE.get(format_name)
    if reader is None:
        return FileProvenance()
    try:
        data = json.loads(text)
    except ValueError:
        return FileProvenance()
    return reader(data) if isinstance(data, dict) else FileProvenance()
