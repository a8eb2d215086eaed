"""The canonical run document, version 1, as immutable Python objects.

One document per invocation (per shard): provenance (git, CI), environment with its
fingerprint, the configuration asked for, and the results with their raw samples.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from enum import Enum
from typing import Any

from torch_bench.metrics import get_metric
from torch_bench.results.stats import Summary, summarize

SCHEMA_NAME = "torch-bench/run"
# Version history (each change gets a migration in results/migrate.py):
#   1 -- torch-bench 0.1.0: first version.
SCHEMA_VERSION = 1

ParamValue = str | int | float | bool | None


class Status(str, Enum):
    OK = "ok"
    ERROR = "error"
    OOM = "oom"
    TIMEOUT = "timeout"
    CRASH = "crash"
    SKIPPED = "skipped"
    # accuracy statuses of the compile suite
    PASS = "pass"
    FAIL_ACCURACY = "fail_accuracy"
    EAGER_TWO_RUNS_DIFFER = "eager_two_runs_differ"
    FAIL_TO_RUN = "fail_to_run"
    MODEL_FAIL_TO_LOAD = "model_fail_to_load"


SUCCESS_STATUSES = frozenset({Status.OK.value, Status.PASS.value})
# Fields of `extra` that hold one value per sample, in the samples' order (the timer's): the
# other clock's samples, the involuntary context switches of each sample's block and the
# speed reference's time after each sample.
PER_SAMPLE_EXTRA = ("wall_samples", "cuda_samples", "cpu_samples", "involuntary_switches",
                    "reference_samples")


@dataclass(frozen=True, slots=True)
class Result:
    """One metric of one benchmark case."""

    suite: str
    name: str
    metric: str
    unit: str
    direction: str
    params: Mapping[str, ParamValue] = field(default_factory=dict)
    status: str = Status.OK.value
    samples: tuple[float, ...] = ()
    summary: Summary | None = None
    group: str | None = None  # the OSS / AI-PEP group, e.g. "lstm-backward"
    error: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status in SUCCESS_STATUSES and self.summary is not None

    def without_samples(self) -> Result:
        """The result with its summary but no raw samples, nor the per-sample fields of
        `extra` (an archive's summarised form)."""
        extra = {k: v for k, v in self.extra.items() if k not in PER_SAMPLE_EXTRA}
        return replace(self, samples=(), extra=extra)

    @property
    def benchmark_id(self) -> str:
        """Identity of the series this result belongs to, stable across runs."""
        return benchmark_id(self.suite, self.name, self.params, self.metric)

    def to_dict(self) -> dict[str, Any]:
        return {
            "suite": self.suite,
            "group": self.group,
            "name": self.name,
            "params": dict(self.params),
            "metric": self.metric,
            "unit": self.unit,
            "direction": self.direction,
            "status": self.status,
            "samples": list(self.samples),
            "summary": self.summary.to_dict() if self.summary else None,
            "error": self.error,
            "extra": dict(self.extra),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Result:
        summary = data.get("summary")
        return cls(
            suite=data["suite"],
            group=data.get("group"),
            name=data["name"],
            params=dict(data.get("params") or {}),
            metric=data["metric"],
            unit=data["unit"],
            direction=data["direction"],
            status=data.get("status", Status.OK.value),
            samples=tuple(data.get("samples") or ()),
            summary=Summary.from_dict(summary) if summary else None,
            error=data.get("error"),
            extra=dict(data.get("extra") or {}),
        )


def benchmark_id(suite: str, name: str, params: Mapping[str, ParamValue], metric: str) -> str:
    rendered = ",".join(f"{key}={params[key]}" for key in sorted(params))
    return f"{suite}/{name}[{rendered}]:{metric}"


def measured(
    suite: str,
    name: str,
    metric: str,
    samples: Sequence[float],
    *,
    params: Mapping[str, ParamValue] | None = None,
    group: str | None = None,
    extra: Mapping[str, Any] | None = None,
    status: str = Status.OK.value,
) -> Result:
    """A successful result; unit and direction come from the metric table."""
    spec = get_metric(metric)
    values = tuple(float(v) for v in samples)
    return Result(
        suite=suite,
        name=name,
        metric=metric,
        unit=spec.unit,
        direction=spec.direction.value,
        params=dict(params or {}),
        status=status,
        samples=values,
        summary=summarize(values),
        group=group,
        extra=dict(extra or {}),
    )


def failed(
    suite: str,
    name: str,
    metric: str,
    status: str,
    error: str,
    *,
    params: Mapping[str, ParamValue] | None = None,
    group: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> Result:
    """A result that could not be measured, with the reason."""
    spec = get_metric(metric)
    return Result(
        suite=suite,
        name=name,
        metric=metric,
        unit=spec.unit,
        direction=spec.direction.value,
        params=dict(params or {}),
        status=status,
        group=group,
        error=error,
        extra=dict(extra or {}),
    )


@dataclass(frozen=True, slots=True)
class Run:
    """One invocation's document."""

    run_id: str
    created_at: str
    results: tuple[Result, ...] = ()
    git: Mapping[str, Any] = field(default_factory=dict)
    ci: Mapping[str, Any] = field(default_factory=dict)
    env: Mapping[str, Any] = field(default_factory=dict)
    config: Mapping[str, Any] = field(default_factory=dict)

    @property
    def fingerprint(self) -> str | None:
        return self.env.get("fingerprint")

    @property
    def trusted(self) -> bool:
        """False when the pre-flight check failed: keep the run, but never use it as a
        baseline or alert on it."""
        return bool((self.env.get("preflight") or {}).get("trusted", True))

    def with_results(self, results: Iterable[Result]) -> Run:
        return replace(self, results=tuple(results))

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": {"name": SCHEMA_NAME, "version": SCHEMA_VERSION},
            "run_id": self.run_id,
            "created_at": self.created_at,
            "git": dict(self.git),
            "ci": dict(self.ci),
            "env": dict(self.env),
            "config": dict(self.config),
            "results": [r.to_dict() for r in self.results],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Run:
        """Build from a document that is already validated and at the current version."""
        return cls(
            run_id=data["run_id"],
            created_at=data["created_at"],
            git=dict(data.get("git") or {}),
            ci=dict(data.get("ci") or {}),
            env=dict(data.get("env") or {}),
            config=dict(data.get("config") or {}),
            results=tuple(Result.from_dict(r) for r in data.get("results") or ()),
        )


def utc_now_iso() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def new_run_id(created_at: str) -> str:
    stamp = created_at.replace("-", "").replace(":", "").replace("Z", "")
    return f"{stamp}-{uuid.uuid4().hex[:10]}"


def new_run(results: Iterable[Result] = (), **fields: Any) -> Run:
    created_at = fields.pop("created_at", None) or utc_now_iso()
    run_id = fields.pop("run_id", None) or new_run_id(created_at)
    return Run(run_id=run_id, created_at=created_at, results=tuple(results), **fields)
