"""The operator-level difference between a base and a head profile of one case.

Operators are compared by name (and device: an operator's CPU time, a kernel's GPU time),
per profiled step. When an operator ran with other input shapes on one side than on the
other, its change is also split by shapes (`OpChange.by_shape`), so "aten::addmm grew" comes
with "[64, 256] is new, [64, 128] vanished". Changes are ordered by the size of their effect
on the step, largest first: what a reader should look at first is at the top.

A change is *notable* when it moves the step by at least `max(min_us, min_share x base
step time)`: smaller ones are within what two profiles of the same code differ by.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from torch_bench.results.op_profile import Compilation, OpProfile, OpRow

MIN_US = 1.0  # a change under a microsecond per step is never notable
MIN_SHARE = 0.02  # ... nor one under 2% of the base step's profiled time


@dataclass(frozen=True)
class OpChange:
    name: str
    device: str
    shapes: str | None  # None: every shape of the operator together
    base_us: float  # per step; 0 when absent on the base
    head_us: float
    base_calls: float
    head_calls: float
    by_shape: tuple[OpChange, ...] = ()  # when the two sides ran different shapes

    @property
    def delta_us(self) -> float:
        return self.head_us - self.base_us

    @property
    def relative(self) -> float | None:
        """Head / base - 1; None for an operator the base did not run."""
        return self.head_us / self.base_us - 1 if self.base_us > 0 else None

    @property
    def kind(self) -> str:
        if self.base_calls == 0 and self.head_calls > 0:
            return "new"
        if self.head_calls == 0 and self.base_calls > 0:
            return "vanished"
        if self.delta_us > 0:
            return "grew"
        return "shrank" if self.delta_us < 0 else "same"

    @property
    def calls_changed(self) -> bool:
        return round(self.base_calls, 3) != round(self.head_calls, 3)


@dataclass(frozen=True)
class OpDiff:
    """Base against head for one case, with the changes largest first."""

    label: str
    window: str
    changes: tuple[OpChange, ...]
    base_total_us: float  # every row's self time per step
    head_total_us: float
    base_kernels: float  # kernel launches per step (0 on a CPU)
    head_kernels: float
    base_compilation: Compilation | None
    head_compilation: Compilation | None
    floor_us: float  # the smallest notable change

    def notable(self) -> list[OpChange]:
        return [c for c in self.changes if is_notable(c, self.floor_us)]

    @property
    def compilation_changed(self) -> bool:
        b, h = self.base_compilation, self.head_compilation
        if b is None and h is None:
            return False
        return (b.graph_breaks if b else 0, b.frames if b else 0, b.graphs if b else 0) \
            != (h.graph_breaks if h else 0, h.frames if h else 0, h.graphs if h else 0)


def is_notable(change: OpChange, floor_us: float) -> bool:
    return abs(change.delta_us) >= floor_us or (
        change.kind in ("new", "vanished") and max(change.base_us, change.head_us) >= floor_us)


def _grouped(rows: Iterable[OpRow]) -> dict[tuple[str, str], dict[str, tuple[float, float]]]:
    """(name, device) -> shapes -> (self us, calls), rows with equal keys summed."""
    grouped: dict[tuple[str, str], dict[str, tuple[float, float]]] = defaultdict(dict)
    for row in rows:
        us, calls = grouped[(row.name, row.device)].get(row.shapes, (0.0, 0.0))
        grouped[(row.name, row.device)][row.shapes] = (us + row.self_us, calls + row.calls)
    return grouped


def _sum(by_shape: dict[str, tuple[float, float]]) -> tuple[float, float]:
    return (sum(us for us, _ in by_shape.values()), sum(c for _, c in by_shape.values()))


def _largest_first(changes: Iterable[OpChange]) -> tuple[OpChange, ...]:
    return tuple(sorted(changes, key=lambda c: (-abs(c.delta_us), c.name, c.shapes or "")))


def operator_changes(base: Sequence[OpRow], head: Sequence[OpRow]) -> tuple[OpChange, ...]:
    """Every operator of either side as a change, largest effect first."""
    before, after = _grouped(base), _grouped(head)
    changes = []
    for key in before.keys() | after.keys():
        b, h = before.get(key, {}), after.get(key, {})
        split = ()
        if b and h and set(b) != set(h):
            split = _largest_first(
                OpChange(key[0], key[1], shapes, *_pair(b.get(shapes), h.get(shapes)))
                for shapes in b.keys() | h.keys())
        (b_us, b_calls), (h_us, h_calls) = _sum(b), _sum(h)
        changes.append(OpChange(key[0], key[1], None, b_us, h_us, b_calls, h_calls, split))
    return _largest_first(changes)


def _pair(b: tuple[float, float] | None, h: tuple[float, float] | None):
    b, h = b or (0.0, 0.0), h or (0.0, 0.0)
    return b[0], h[0], b[1], h[1]


def _kernels(profile: OpProfile) -> float:
    return sum(r.calls for r in profile.rows if r.device != "cpu")


def diff_profiles(base: OpProfile, head: OpProfile, min_us: float = MIN_US,
                  min_share: float = MIN_SHARE) -> OpDiff:
    base_total = sum(r.self_us for r in base.rows)
    return OpDiff(
        label=head.label or base.label,
        window=head.window or base.window,
        changes=operator_changes(base.rows, head.rows),
        base_total_us=base_total,
        head_total_us=sum(r.self_us for r in head.rows),
        base_kernels=_kernels(base),
        head_kernels=_kernels(head),
        base_compilation=base.compilation,
        head_compilation=head.compilation,
        floor_us=max(min_us, min_share * base_total),
    )
