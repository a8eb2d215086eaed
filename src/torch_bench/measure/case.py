"""A case as the measuring side sees it: what to run (`CaseSpec`, the results it promises)
and what to measure it with (`CaseContext`). Suites plan cases and the runner's processes
carry them, so the types live here, below both; suites.base re-exports them for suite
authors."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from torch_bench.measure.timer import Clock, TimingPolicy, clock_for
from torch_bench.results.schema import ParamValue


@dataclass(frozen=True)
class Output:
    """A result a case promises: reported with the case's status if the case fails."""

    metric: str
    group: str | None = None


@dataclass(frozen=True)
class CaseSpec:
    suite: str
    name: str
    params: Mapping[str, ParamValue]
    outputs: tuple[Output, ...]
    options: Mapping[str, Any] = field(default_factory=dict)  # suite options, for the child

    @property
    def label(self) -> str:
        shown = ", ".join(f"{k}={v}" for k, v in self.params.items() if k != "device")
        return f"{self.suite}/{self.name}" + (f" ({shown})" if shown else "")

    def to_dict(self) -> dict[str, Any]:
        return {
            "suite": self.suite,
            "name": self.name,
            "params": dict(self.params),
            "outputs": [{"metric": o.metric, "group": o.group} for o in self.outputs],
            "options": dict(self.options),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CaseSpec:
        return cls(
            suite=data["suite"],
            name=data["name"],
            params=dict(data["params"]),
            outputs=tuple(Output(**o) for o in data["outputs"]),
            options=dict(data.get("options") or {}),
        )


@dataclass(frozen=True)
class CaseContext:
    """What a case needs to measure itself, handed to `run_case` in the child."""

    device: str
    policy: TimingPolicy
    threads: int | None = None  # torch intra-op threads the case runs with (None: default)

    def clock(self) -> Clock:
        return clock_for(self.device)
