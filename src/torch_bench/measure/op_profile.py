"""Profiling a case's timed calls with `torch.profiler`: the session the explain worker
installs (see `op_window`), and what it makes of the profiles.

Every window the case opens is profiled (CPU activity always, CUDA activity on a GPU, input
shapes recorded) and kept by (metric, runtime). The profile of the window asked for is the
case's: its operators' self times and calls by name and input shapes (`key_averages`) per
call, the median over the windows (the timer opens one per timed block, of one call when
profiling), and the Chrome trace of the last window. A case whose wanted window
never opened falls back on the compiled runtime (compile suite) or the first window.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from torch_bench.measure.op_window import Window
from torch_bench.results.op_profile import Compilation, OpProfile, OpRow

PROFILER_ROWS_LEFT_OUT = ("[memory]", "[OutOfMemory]")
MAX_REASON = 160


@dataclass
class _Recorded:
    profiles: list[Any] = field(default_factory=list)  # torch profiler objects, one a window
    calls: list[int] = field(default_factory=list)  # the calls each window covered

def _key(window: Window) -> tuple[str | None, str | None]:
    return (window.metric, window.runtime)


def describe_window(key: tuple[str | None, str | None]) -> str:
    metric, runtime = key
    return f"{metric or 'timed calls'}" + (f" ({runtime})" if runtime else "")


class ProfileSession:
    """Profiles every window; `result` picks the wanted one."""

    def __init__(self, device: str, wanted_metric: str | None = None,
                 wanted_runtime: str | None = None) -> None:
        self.device = device
        self.wanted = (wanted_metric, wanted_runtime)
        self.recorded: dict[tuple[str | None, str | None], _Recorded] = {}

    def _activities(self) -> list[Any]:
        from torch.profiler import ProfilerActivity

        activities = [ProfilerActivity.CPU]
        if self.device.startswith("cuda"):
            activities.append(ProfilerActivity.CUDA)
        return activities

    @contextmanager
    def record(self, window: Window) -> Iterator[None]:
        from torch.profiler import profile

        with profile(activities=self._activities(), record_shapes=True) as prof:
            yield
        if self.device.startswith("cuda"):
            import torch

            torch.cuda.synchronize()
        kept = self.recorded.setdefault(_key(window), _Recorded())
        kept.profiles.append(prof)
        kept.calls.append(max(1, window.calls))

    def chosen(self) -> tuple[str | None, str | None] | None:
        """The window whose profile is the case's (see the module docstring)."""
        if not self.recorded:
            return None
        metric, runtime = self.wanted
        for key in self.recorded:
            if key[0] == metric and (runtime is None or key[1] == runtime):
                return key
        for key in self.recorded:
            if key[1] == "compiled":
                return key
        return next(iter(self.recorded))

    def result(self, label: str, trace_path: str | None) -> OpProfile | None:
        key = self.chosen()
        if key is None:
            return None
        kept = self.recorded[key]
        per_window = [operator_rows(prof, calls)
                      for prof, calls in zip(kept.profiles, kept.calls, strict=True)]
        if trace_path:
            kept.profiles[-1].export_chrome_trace(trace_path)
        return OpProfile(label=label, window=describe_window(key), steps=sum(kept.calls),
                         rows=median_rows(per_window), compilation=compilation_counts(),
                         trace=trace_path)


def median_rows(per_window: list[list[OpRow]]) -> tuple[OpRow, ...]:
    """Each row's median over the windows (a row a window lacks counts as 0 there): a step
    the machine preempted in the middle of an operator moves no median."""
    keyed: dict[tuple[str, str, str], list[OpRow]] = {}
    for rows in per_window:
        for row in rows:
            keyed.setdefault((row.name, row.device, row.shapes), []).append(row)

    def median(values: list[float]) -> float:
        return statistics.median(values + [0.0] * (len(per_window) - len(values)))

    return tuple(OpRow(name, shapes, device, median([r.self_us for r in rows]),
                       median([r.calls for r in rows]))
                 for (name, device, shapes), rows in keyed.items())


def _device_of(event: Any) -> str:
    kind = str(getattr(event, "device_type", "CPU")).rsplit(".", 1)[-1].lower()
    return "cpu" if kind == "cpu" else "cuda"


def operator_rows(prof: Any, steps: int) -> list[OpRow]:
    """The profile's operators (and kernels) per step, by name and input shapes."""
    rows = []
    for event in prof.key_averages(group_by_input_shape=True):
        if event.key in PROFILER_ROWS_LEFT_OUT:
            continue
        device = _device_of(event)
        if device == "cpu":
            self_us = float(event.self_cpu_time_total)
        else:
            self_us = float(getattr(event, "self_device_time_total", 0.0)
                            or getattr(event, "self_cuda_time_total", 0.0))
        shapes = getattr(event, "input_shapes", None)
        rows.append(OpRow(name=str(event.key), shapes=str(shapes) if shapes else "",
                          device=device, self_us=max(0.0, self_us) / steps,
                          calls=event.count / steps))
    return rows


def compilation_counts() -> Compilation | None:
    """dynamo's counts in this process, or None when nothing was compiled."""
    try:
        from torch._dynamo.utils import counters
    except ImportError:
        return None
    frames = int(counters["frames"].get("total", 0))
    if not frames:
        return None
    reasons = sorted(((_first_line(reason), int(count))
                      for reason, count in counters["graph_break"].items()),
                     key=lambda pair: -pair[1])
    return Compilation(graphs=int(counters["stats"].get("unique_graphs", 0)),
                       graph_breaks=sum(count for _, count in reasons),
                       frames=frames,
                       break_reasons=tuple(reasons[:20]))


def _first_line(text: Any) -> str:
    line = str(text).strip().splitlines()[0] if str(text).strip() else "?"
    return line[:MAX_REASON]
