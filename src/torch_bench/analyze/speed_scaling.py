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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from torch_bench.results.schema import Result, Run


def speed_ratios(result: Result) -> tuple[str, list[float], float] | None:
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
        samples = np.asarray(result.samples, dtype=float)
        references = np.asarray(times, dtype=float)
    except (TypeError, ValueError):
        return None
    if references.shape != samples.shape or not (
            np.isfinite(samples).all() and np.isfinite(references).all()
            and (samples > 0).all() and (references > 0).all()):
        return None
    # statistics.median on lists: numpy's per-call overhead is most of the time for a result
    # of a few hundred samples, and a comparison reads thousands of them.
    return name, (samples / references).tolist(), math.log(statistics.median(references.tolist()))


@dataclass(frozen=True)
class SpeedScaling:
    """Which benchmarks of a comparison are judged on sample / reference, and those ratios,
    each computed once."""

    scales: Mapping[str, float]  # per scaled benchmark: ln of the constant ratios are scaled by
    ratios: Mapping[int, list[float]]  # id(result) -> its sample / reference (scaled only)

    def samples(self, result: Result) -> Sequence[float]:
        """What the result is judged on: its ratios when its benchmark is scaled."""
        found = self.ratios.get(id(result))
        return result.samples if found is None else found

    def log_median(self, result: Result) -> float | None:
        """ln(median(sample / reference)) plus the benchmark's constant; None when the
        result is not judged on its ratios."""
        found = self.ratios.get(id(result))
        if found is None:
            return None
        return math.log(statistics.median(found)) + self.scales[result.benchmark_id]


NO_SCALING = SpeedScaling({}, {})


def speed_scaling(runs: Sequence[Run], keys: Sequence[str]) -> SpeedScaling:
    """The scaling of `keys` over `runs`: a benchmark is scaled when the first successful
    result of it in every run has the same speed reference."""
    wanted = set(keys)
    firsts: dict[str, list[tuple[str, float] | None]] = {}
    computed: dict[int, tuple[str, list[float], float] | None] = {}
    by_key: dict[str, list[Result]] = {}
    for run in runs:
        seen: set[str] = set()
        for result in run.results:
            key = result.benchmark_id
            if key not in wanted or not result.ok:
                continue
            found = computed[id(result)] = speed_ratios(result)
            by_key.setdefault(key, []).append(result)
            if key not in seen and result.summary is not None:
                seen.add(key)
                firsts.setdefault(key, []).append(None if found is None
                                                  else (found[0], found[2]))
    scales: dict[str, float] = {}
    for key, entries in firsts.items():
        if entries and all(entries) and len({name for name, _ in entries}) == 1:
            scales[key] = sum(log_ref for _, log_ref in entries) / len(entries)
    ratios = {id(result): computed[id(result)][1] for key in scales for result in by_key[key]
              if computed[id(result)] is not None}
    return SpeedScaling(scales, ratios)
