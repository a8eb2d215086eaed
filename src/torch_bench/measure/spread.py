"""Spreading a case's samples over several worker processes, and joining what they return.

Every process has its own memory layout, allocator and cache state, so the samples of one
process share an offset that per-iteration statistics cannot see; several processes per case
expose it. The sample bounds of the timing policy are totals for the case: each process gets
its share, so `--min-repeats 20 --max-repeats 20` still gives 20 samples and `--max-time`
still bounds the time spent sampling (process start-up comes on top).

Pure functions: the runner starts the processes.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import replace

from torch_bench.measure.interruptions import interrupted_share
from torch_bench.measure.timer import TimingPolicy
from torch_bench.results.schema import PER_SAMPLE_EXTRA, Result
from torch_bench.results.stats import summarize


def shares(total: int, parts: int) -> list[int]:
    """`total` split into `parts` whole shares that differ by at most one, larger first."""
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


def process_policies(policy: TimingPolicy, processes: int) -> list[TimingPolicy]:
    """One timing policy per worker process; never more processes than samples."""
    if policy.nloops is not None:
        count = max(1, min(processes, policy.nloops))
        return [replace(policy, nloops=n) for n in shares(policy.nloops, count)]
    count = max(1, min(processes, policy.max_repeats))
    return [
        replace(policy, min_repeats=max(1, low), max_repeats=high,
                max_time_s=policy.max_time_s / count)
        for low, high in zip(shares(policy.min_repeats, count),
                             shares(policy.max_repeats, count), strict=True)
    ]


def failure_among(results: Sequence[Result]) -> bool:
    """A process's results tell of a failure (error, crash, timeout, oom, skipped, ...)."""
    return not results or any(not r.ok for r in results)


def loops_of(results: Sequence[Result]) -> dict[str, int]:
    """Calls per sample by metric, as a process recorded them, for the next processes."""
    return {r.metric: int(r.extra["loops"]) for r in results
            if r.ok and isinstance(r.extra.get("loops"), int)}


def join_processes(per_process: Sequence[Sequence[Result]]) -> list[Result]:
    """One result per benchmark: the processes' samples in order, `extra["process_sizes"]`
    telling how many came from each, the summary recomputed over all of them. Extra fields
    are the first process's, except the per-sample ones (joined in the same order when every
    process has them, left out otherwise; the interrupted share recomputed from them) and
    the migrations (summed). For a memory
    figure (one value per process) the summary's median is the typical process and its max
    the worst one."""
    if len(per_process) == 1:
        return list(per_process[0])
    joined: dict[str, list[Result]] = {}
    for results in per_process:
        for result in results:
            joined.setdefault(result.benchmark_id, []).append(result)
    return [_joined(parts) for parts in joined.values()]


def _joined(parts: Sequence[Result]) -> Result:
    first = parts[0]
    samples = [value for part in parts for value in part.samples]
    # a per-sample field some process lacks is left out: the others' would not line up
    extra = {**{k: v for k, v in first.extra.items() if k not in PER_SAMPLE_EXTRA},
             **_joined_extra([part.extra for part in parts]),
             "process_sizes": [len(part.samples) for part in parts]}
    return replace(first, samples=tuple(samples), summary=summarize(samples), extra=extra)


def _joined_extra(extras: Sequence[Mapping]) -> dict:
    joined: dict = {}
    for key in PER_SAMPLE_EXTRA:
        if all(isinstance(extra.get(key), list) for extra in extras):
            joined[key] = [value for extra in extras for value in extra[key]]
    if "involuntary_switches" in joined:
        joined["interrupted_share"] = round(interrupted_share(joined["involuntary_switches"]), 4)
    if all(isinstance(extra.get("migrations"), int) for extra in extras):
        joined["migrations"] = sum(extra["migrations"] for extra in extras)
    ratios = [extra["cpu_wall_ratio"] for extra in extras
              if isinstance(extra.get("cpu_wall_ratio"), (int, float))]
    if ratios:
        joined["cpu_wall_ratio"] = round(statistics.median(ratios), 4)
    return joined
