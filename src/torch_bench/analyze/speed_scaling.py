"""Dividing the machine's speed out of per-run medians, where every run measured it.

A result timed on the CPU clock with the speed reference (`measure.speed_reference`) has,
beside each sample, the time of a fixed block of work timed right after it. The machine's
own speed changes (seconds long, on a shared or virtual host) slow both alike, so the
per-run median of sample / reference keeps the code's cost and loses most of the machine's
state.

A benchmark is scaled only when every run compared for it (history, base and head) has the
same reference for it: a ratio is never compared with a time. To keep levels in the
samples' own unit, the ratios are multiplied by one constant per benchmark, the geometric
mean of the runs' median reference times; the constant is the same for every run, so it
changes no comparison. Pure: runs in, numbers out.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from torch_bench.results.schema import Result, Run


def speed_ratios(result: Result) -> tuple[str, tuple[float, ...], float] | None:
    """(reference name, sample / reference per sample, ln(median reference)) of a successful
    result timed with a speed reference; None when it has none (or a malformed one), and for
    anything but a time (a rate or a memory figure does not scale with the machine's speed
    that way)."""
    if not result.ok or not result.samples or result.unit != "ms":
        return None
    name = result.extra.get("reference")
    times = result.extra.get("reference_samples")
    if not isinstance(name, str) or not isinstance(times, list) \
            or len(times) != len(result.samples):
        return None
    try:
        pairs = [(float(s), float(r)) for s, r in zip(result.samples, times, strict=True)]
    except (TypeError, ValueError):
        return None
    if not all(s > 0 and r > 0 and math.isfinite(s) and math.isfinite(r) for s, r in pairs):
        return None
    return name, tuple(s / r for s, r in pairs), math.log(statistics.median(r for _, r in pairs))


def scaled_benchmarks(runs: Sequence[Run], keys: Sequence[str]) -> dict[str, float]:
    """For each of `keys` whose every successful result in `runs` has the same speed
    reference: ln of the constant its ratios are multiplied by."""
    wanted = set(keys)
    found: dict[str, list[tuple[str, float] | None]] = {}
    for run in runs:
        seen: set[str] = set()
        for result in run.results:
            key = result.benchmark_id
            if key not in wanted or key in seen or not result.ok or result.summary is None:
                continue
            seen.add(key)
            ratios = speed_ratios(result)
            found.setdefault(key, []).append(None if ratios is None else (ratios[0],
                                                                         ratios[2]))
    scales: dict[str, float] = {}
    for key, entries in found.items():
        if entries and all(entries) and len({name for name, _ in entries}) == 1:
            scales[key] = sum(log_ref for _, log_ref in entries) / len(entries)
    return scales


def scaled_log_median(result: Result, log_scale: float) -> float | None:
    """ln(median(sample / reference)) + `log_scale`; None without a usable reference."""
    ratios = speed_ratios(result)
    if ratios is None:
        return None
    return math.log(statistics.median(ratios[1])) + log_scale
