"""Does a result's own sampling show contention (a neighbour taking the CPU)?

A head run measured during a burst of activity on a shared machine looks like a regression.
Its own samples usually say so, in one of three ways, checked in this order:

1. *Interrupted too often*: its blocks were interrupted by involuntary context switches at
   a rate per second of CPU time that would cut more blocks of 1 ms than the result's clock
   tolerates (`INTERRUPTED_LIMITS`: a quarter on the wall clock; see `measure.interruptions`:
   per unit of time, so that a slower side is not doubted for its longer samples). A result
   whose record shows no rate is judged by its share of interrupted samples
   (`extra["interrupted_share"]`).
2. *Interrupted samples are slower*: at least `MIN_SHARE` of the samples were interrupted and
   their median is `SEPARATION` times the median of the uninterrupted ones (the time slices
   lost to the neighbour show in the samples).
3. *Bimodal samples* (for results without switch counts, e.g. imported ones): sorted, the
   samples split at their widest gap into two clusters of at least `MIN_SHARE` each, the
   upper cluster's median `SEPARATION` times the lower's, and the gap wider than
   `GAP_TO_SPREAD` times the spread (IQR, on a log scale) within either cluster. A call
   either ran alone or lost a time slice: two clusters, not one wide hill.

Pure functions over a result; `contention_reason` is the one verdicts call, and
`burst_reason` the one for sides measured interleaved (A/B rounds), which share their
neighbours.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from torch_bench.measure.interruptions import (
    REFERENCE_BLOCK_MS,
    is_interrupted,
    limit_for,
    rate_of,
    reference_share,
)
from torch_bench.results.schema import Result

MIN_SAMPLES = 10  # fewer samples cannot show two clusters
MIN_SHARE = 0.1  # the smaller cluster (or the interrupted samples) holds at least this share
SEPARATION = 1.2  # the slower cluster's median at least this many times the faster one's
GAP_TO_SPREAD = 2.0  # the gap between clusters against the spread within them (log scale)
# Interleaved sides share their neighbours: the slower side's contention is a burst on its
# own rounds only when it was interrupted at least this many times as often per second.
BURST = 1.5


def contention_reason(result: Result) -> str | None:
    """One line saying how the result's samples show contention, or None when they do not
    (or cannot: a failed result, too few samples)."""
    if not result.ok or len(result.samples) < MIN_SAMPLES:
        return None
    extra = result.extra
    share, clock = extra.get("interrupted_share"), extra.get("clock") or "wall"
    rate = interruption_rate(result)
    if rate is not None:
        if reference_share(rate) > limit_for(clock):
            return (f"its blocks were interrupted by other processes {rate:.0f} times a second "
                    f"of CPU time ({reference_share(rate):.0%} of {REFERENCE_BLOCK_MS:g} ms "
                    f"blocks; more than the {limit_for(clock):.0%} the {clock} clock "
                    "tolerates)")
    elif _number(share) and share > limit_for(clock):
        return (f"{share:.0%} of its samples were interrupted by other processes (more than "
                f"the {limit_for(clock):.0%} the {clock} clock tolerates)")
    # Times grow under contention, rates (throughput) shrink: look at times.
    samples = result.samples if result.direction != "higher" or min(result.samples) <= 0 \
        else tuple(1.0 / s for s in result.samples)
    switches = extra.get("involuntary_switches")
    if isinstance(switches, list) and len(switches) == len(samples):
        return slower_when_interrupted(samples, switches)
    return bimodal(samples)


def interruption_rate(result: Result) -> float | None:
    """Involuntary switches per second of the result's CPU time, when its record shows them
    (`measure.interruptions.rate_of`)."""
    return rate_of(result.extra, result.samples, result.unit)


def burst_reason(slower: Sequence[Result], faster: Sequence[Result]) -> str | None:
    """For sides measured interleaved (A/B rounds): how the slower side's results show
    contention the faster side's do not, or None. A steady neighbour interrupts both sides
    at the same rate per second, which costs both the same share of their time and leaves
    their ratio alone, however much longer the slower side's samples are: only a slower side
    interrupted `BURST` times as often (a burst on its rounds) is doubted. Where either side
    shows no rate, the faster side showing contention too is enough to clear it."""
    reason = next((found for r in slower if (found := contention_reason(r))), None)
    if reason is None or any(contention_reason(r) for r in faster):
        return None
    rates = [_median_rate(results) for results in (slower, faster)]
    if None not in rates and rates[0] < BURST * rates[1]:
        return None
    return reason


def _median_rate(results: Sequence[Result]) -> float | None:
    rates = [rate for r in results if r.ok and (rate := interruption_rate(r)) is not None]
    return float(np.median(rates)) if rates else None


def uninterrupted_samples(result: Result, at_least: float = 0.25) -> tuple[float, ...]:
    """The result's samples whose block was not interrupted, when they are at least
    `at_least` of them (and `MIN_SAMPLES // 2`); all the samples otherwise, or when the
    result did not count switches. Their median is steadier run to run on a busy machine:
    even on the CPU clock an interrupted block pays for refilling the caches."""
    switches = result.extra.get("involuntary_switches")
    if not isinstance(switches, list) or len(switches) != len(result.samples):
        return tuple(result.samples)
    clean = tuple(s for s, n in zip(result.samples, switches, strict=True)
                  if not is_interrupted(n))
    enough = max(MIN_SAMPLES // 2, at_least * len(result.samples))
    return clean if len(clean) >= enough else tuple(result.samples)


def slower_when_interrupted(times: Sequence[float], switches: Sequence[int]) -> str | None:
    """Rule 2: the interrupted samples are markedly slower than the others (`times`: lower
    is faster)."""
    hit = [s for s, n in zip(times, switches, strict=True) if is_interrupted(n)]
    clean = [s for s, n in zip(times, switches, strict=True) if not is_interrupted(n)]
    if not clean or len(hit) < max(2, MIN_SHARE * len(times)):
        return None
    ratio = float(np.median(hit) / np.median(clean)) if np.median(clean) > 0 else 0.0
    if ratio < SEPARATION:
        return None
    return (f"{len(hit) / len(times):.0%} of its samples were interrupted by other "
            f"processes and took {ratio:.1f}x as long as the others")


def bimodal(times: Sequence[float]) -> str | None:
    """Rule 3: two clusters of samples, far apart for their own spread (`times`: lower is
    faster)."""
    values = np.sort(np.asarray(times, dtype=float))
    if len(values) < MIN_SAMPLES or values[0] <= 0:
        return None
    logs = np.log(values)
    smallest = max(2, int(np.ceil(MIN_SHARE * len(logs))))
    gaps = np.diff(logs)[smallest - 1:len(logs) - smallest]
    if gaps.size == 0:
        return None
    split = int(np.argmax(gaps)) + smallest  # first index of the upper cluster
    lower, upper = logs[:split], logs[split:]
    separation = float(np.exp(np.median(upper) - np.median(lower)))
    spread = max(_iqr(lower), _iqr(upper))
    if separation < SEPARATION or logs[split] - logs[split - 1] <= GAP_TO_SPREAD * spread:
        return None
    return (f"its samples form two clusters: {len(upper) / len(logs):.0%} of them "
            f"{separation:.1f}x slower than the rest, as when calls lose time slices to other "
            "processes")


def _iqr(values: np.ndarray) -> float:
    q25, q75 = np.percentile(values, [25, 75])
    return float(q75 - q25)


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
