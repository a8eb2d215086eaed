"""Why a run finds no baseline although the history holds runs of its branch and environment:
they failed their pre-flight check (untrusted) and are left out. Said in the job summary, so a
user on a shared runner sees what to change instead of "No baseline yet" on every run. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from torch_bench.results.schema import Run

# Pre-flight check (measure/preflight.py) -> what a reader is told, and what to do about it.
REASONS = {
    "cpu_load": "CPU busy during pre-flight; see --cpu-busy-limit",
    "gpu_processes": "other processes on the GPU during pre-flight",
    "temperature": "GPU near its slowdown temperature during pre-flight",
    "power_limit": "GPU power limit below its default",
    "throttling": "GPU throttled during pre-flight",
}


def failed_checks(run: Run) -> list[str]:
    findings = (run.env.get("preflight") or {}).get("findings") or []
    return [str(f.get("check")) for f in findings
            if isinstance(f, dict) and f.get("severity") == "fail"]


def untrusted_of(history: Iterable[Run], fingerprint: str | None,
                 branch: str | None) -> list[Run]:
    """The runs a baseline could have come from but for their failed pre-flight check."""
    return [run for run in history
            if not run.trusted and run.fingerprint == fingerprint
            and (branch is None or run.git.get("branch") == branch)]


def left_out_note(untrusted: Sequence[Run]) -> str | None:
    """"3 runs left out: CPU busy during pre-flight; see --cpu-busy-limit", reasons most
    frequent first; None when there are none."""
    if not untrusted:
        return None
    counts: dict[str, int] = {}
    for run in untrusted:
        for check in failed_checks(run) or ["unknown"]:
            reason = REASONS.get(check, "pre-flight check failed")
            counts[reason] = counts.get(reason, 0) + 1
    reasons = sorted(counts, key=lambda r: -counts[r])
    runs = f"{len(untrusted)} run{'s' if len(untrusted) != 1 else ''}"
    return f"{runs} left out: {' · '.join(reasons)}"
