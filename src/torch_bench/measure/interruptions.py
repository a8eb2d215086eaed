"""Interrupted samples: the rule that marks them, their share, and the readings behind them.

The rule: a sample is *interrupted* when the process was involuntarily switched out at least
once while its block ran (`ru_nivcsw` of `getrusage(RUSAGE_SELF)` grew: the scheduler took
the core away to run something else, typically another process on a shared runner). On the
wall clock such a sample carries the time slice lost to the neighbour (milliseconds); on the
CPU clock it carries only the cost of refilling the caches afterwards. Samples are kept, not
dropped: dropping the interrupted ones would favour short blocks, and the share of them is
itself what tells a reader how disturbed the run was.

Interruptions are judged per unit of time, not per sample: a steady neighbour preempts a
process at a steady rate per second of its CPU time, so a block twice as long is
interrupted about twice as often, and a share of interrupted samples would doubt exactly
the side whose code got slower. `rate_of` reads the rate from a result's record (switches
per second of the blocks' CPU time) and `reference_share` turns it into the share of
blocks of `REFERENCE_BLOCK_MS` it would interrupt, which the limits are stated in.

The readings (`involuntary_switches`, `migrations`) are small functions; the rest is pure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

try:  # not on Windows: there, interruptions are unknown
    import resource
except ImportError:  # pragma: no cover - Windows
    resource = None

# A run whose timed results have, in the median, more than this share of their samples
# interrupted is untrusted, by the clock its samples are on. On the wall clock an
# interrupted sample is off by a time slice, and past a quarter of them the per-run median
# moves; the CPU clock does not count the time taken away, so only a machine so busy that
# nearly every block is cut (caches refilled over and over) makes its samples doubtful.
INTERRUPTED_LIMITS = {"wall": 0.25, "cuda": 0.25, "cpu": 0.9}
# The block length the limits are stated for: the shortest block the timer makes
# (`TimingPolicy.min_block_ms`), so that short blocks are judged as they always were.
REFERENCE_BLOCK_MS = 1.0


def involuntary_switches() -> int | None:
    """Involuntary context switches of this process so far (all its threads); None where
    the platform does not count them."""
    if resource is None:  # pragma: no cover - Windows
        return None
    return resource.getrusage(resource.RUSAGE_SELF).ru_nivcsw


def migrations(sched: Path = Path("/proc/thread-self/sched")) -> int | None:
    """Moves of the calling thread between CPUs so far (Linux with scheduler statistics);
    None where it cannot be read."""
    try:
        for line in sched.read_text().splitlines():
            if line.startswith("se.nr_migrations"):
                return int(line.split(":", 1)[1])
    except (OSError, ValueError):
        return None
    return None


def is_interrupted(switches: int) -> bool:
    """The rule: any involuntary context switch during the sample's block."""
    return switches > 0


def interrupted_share(switches: Sequence[int]) -> float:
    """The share (0..1) of samples whose block was interrupted; 0 for no samples."""
    if not switches:
        return 0.0
    return sum(1 for s in switches if is_interrupted(s)) / len(switches)


def limit_for(clock: str, limits: Mapping[str, float] = INTERRUPTED_LIMITS) -> float:
    """The interrupted share above which a result on `clock` is too disturbed to trust."""
    return limits.get(clock, limits["wall"])


def interruption_rate(switches: Sequence[int], block_cpu_ms: Sequence[float]) -> float | None:
    """Involuntary switches per second of the blocks' CPU time (`block_cpu_ms`: each block's,
    all its calls); None without switches or time to divide by."""
    total = sum(block_cpu_ms)
    if not switches or len(switches) != len(block_cpu_ms) or not total > 0:
        return None
    return 1000.0 * sum(switches) / total


def rate_of(extra: Mapping, samples: Sequence[float], unit: str) -> float | None:
    """The interruption rate a result's record shows (`extra` as the timer writes it): its
    switches over its blocks' CPU time, the samples themselves on the CPU clock, else
    `extra["cpu_samples"]`; None when the record lacks either (imported results, suites with
    their own timer), or its samples are not times."""
    switches, loops = extra.get("involuntary_switches"), extra.get("loops", 1)
    if not isinstance(switches, list) or not all(_count(n) for n in switches) \
            or not _count(loops) or loops < 1:
        return None
    cpu = samples if extra.get("clock") == "cpu" and unit == "ms" else extra.get("cpu_samples")
    if not isinstance(cpu, (list, tuple)) or not all(_number(v) for v in cpu):
        return None
    return interruption_rate(switches, [v * loops for v in cpu])


def reference_share(rate: float, block_ms: float = REFERENCE_BLOCK_MS) -> float:
    """The share of blocks of `block_ms` CPU time that switches arriving at `rate` a second,
    at random (a Poisson stream), would interrupt."""
    return 1.0 - math.exp(-rate * block_ms / 1000.0)


def judged_share(extra: Mapping, samples: Sequence[float], unit: str) -> float | None:
    """The share a result's interruptions are judged by against `limit_for` its clock: that
    of blocks of `REFERENCE_BLOCK_MS` at its rate when the record shows one, else the
    recorded `interrupted_share` (None without it)."""
    rate = rate_of(extra, samples, unit)
    if rate is not None:
        return reference_share(rate)
    share = extra.get("interrupted_share")
    return float(share) if _number(share) else None


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) \
        and math.isfinite(value)


def _count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
