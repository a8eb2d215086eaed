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
changes no comparison.

The ratio is vouched for only within the machine states history has seen: when a head
run's median reference lies beyond the range of the reference runs' medians (widened by
`SEEN_MARGIN`), the machine ran in a state history never showed, where the block and the
benchmark need not slow alike (on this project's virtual machines the block once read 30%
slower than in any of 9 earlier runs while the benchmarks did not: three false
improvements). The samples alone are no better there: the state is beyond the spread
history gives them too. Such benchmarks are listed (`unseen_state`) so that a change measured
there is not called before more measurement (`verdicts`). A/B rounds are exempt: both sides
are measured interleaved, in the same states. Pure: runs in, numbers out.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

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
    unseen_state: frozenset[str] = frozenset()  # scaled, but a head's reference beyond history's

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


class Reading(NamedTuple):
    """A run's reading of the speed reference for a benchmark (its first successful result)."""

    name: str  # which reference
    log_median: float  # ln(median reference time)


SEEN_MARGIN = math.log(1.1)  # beyond the reference runs' range by more than 10%
MIN_SEEN_RUNS = 5  # fewer reference runs do not show the machine's range of states


def speed_scaling(reference: Sequence[Run], head: Sequence[Run], keys: Sequence[str], *,
                  seen_states_only: bool = True) -> SpeedScaling:
    """The scaling of `keys` over the reference and head runs: a benchmark is scaled when the
    first successful result of it in every run has the same speed reference; with
    `seen_states_only`, those whose head runs' median reference lies beyond the states the
    reference runs have seen are also listed (see the module docstring)."""
    wanted = set(keys)
    # per benchmark, each run's reading (None: that run's first result has no usable one)
    history_readings: dict[str, list[Reading | None]] = {}
    head_readings: dict[str, list[Reading | None]] = {}
    computed: dict[int, tuple[str, list[float], float] | None] = {}
    by_key: dict[str, list[Result]] = {}
    for index, run in enumerate([*reference, *head]):
        readings = history_readings if index < len(reference) else head_readings
        seen: set[str] = set()
        for result in run.results:
            key = result.benchmark_id
            if key not in wanted or not result.ok:
                continue
            found = computed[id(result)] = speed_ratios(result)
            by_key.setdefault(key, []).append(result)
            if key not in seen and result.summary is not None:
                seen.add(key)
                readings.setdefault(key, []).append(
                    None if found is None else Reading(found[0], found[2]))
    scales: dict[str, float] = {}
    unseen_state: set[str] = set()
    for key in dict.fromkeys([*history_readings, *head_readings]):
        history_of_key, head_of_key = history_readings.get(key, []), head_readings.get(key, [])
        every = [*history_of_key, *head_of_key]
        if any(reading is None for reading in every) \
                or len({reading.name for reading in every}) != 1:
            continue
        seen_logs = [reading.log_median for reading in history_of_key]
        head_logs = [reading.log_median for reading in head_of_key]
        if seen_states_only and not within_seen(seen_logs, head_logs):
            unseen_state.add(key)
        scales[key] = sum([*seen_logs, *head_logs]) / len(every)
    ratios = {id(result): computed[id(result)][1] for key in scales for result in by_key[key]
              if computed[id(result)] is not None}
    return SpeedScaling(scales, ratios, frozenset(unseen_state))


def within_seen(seen_logs: Sequence[float], head_logs: Sequence[float]) -> bool:
    """Whether every head's ln(median reference) lies within the reference runs' range,
    widened by `SEEN_MARGIN`; always, with fewer than `MIN_SEEN_RUNS` reference runs."""
    if len(seen_logs) < MIN_SEEN_RUNS:
        return True
    low, high = min(seen_logs) - SEEN_MARGIN, max(seen_logs) + SEEN_MARGIN
    return all(low <= value <= high for value in head_logs)
