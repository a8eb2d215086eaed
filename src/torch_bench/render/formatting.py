"""Numbers as the dashboard shows them: values with a unit scaled to their size, changes as signed
percentages with better/worse decided by the metric's direction."""

from __future__ import annotations

from torch_bench.render import units

# A change smaller than this (as a fraction) is shown without a better/worse colour.
NEUTRAL_BAND = 0.01


def format_value(value: float | None, unit: str) -> str:
    """The value with its unit scaled to its size (units.py: SI prefixes for rates and
    counts, the unit's own scale for times and memory); a dash when there is none."""
    return units.format_value(value, unit)


def relative_change(new: float | None, old: float | None) -> float | None:
    if new is None or old is None or old == 0:
        return None
    return new / old - 1


def format_change(change: float | None) -> str:
    if change is None:
        return "—"
    return f"{change * 100:+.1f}%"


def change_class(change: float | None, direction: str) -> str:
    """CSS class: 'better', 'worse' or 'same'."""
    if change is None or abs(change) < NEUTRAL_BAND:
        return "same"
    better = change < 0 if direction == "lower" else change > 0
    return "better" if better else "worse"
