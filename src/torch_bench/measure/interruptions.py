"""Interrupted samples: the rule that marks them, their share, and the readings behind them.

The rule: a sample is *interrupted* when the process was involuntarily switched out at least
once while its block ran (`ru_nivcsw` of `getrusage(RUSAGE_SELF)` grew: the scheduler took
the core away to run something else, typically another process on a shared runner). On the
wall clock such a sample carries the time slice lost to the neighbour (milliseconds); on the
CPU clock it carries only the cost of refilling the caches afterwards. Samples are kept, not
dropped: dropping the interrupted ones would favour short blocks, and the share of them is
itself what tells a reader how disturbed the run was.

The readings (`involuntary_switches`, `migrations`) are small functions; the rest is pure.
"""

from __future__ import annotations

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
