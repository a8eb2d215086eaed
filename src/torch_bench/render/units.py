"""The unit a chart, a card or a table cell shows its values in: the stored unit's own scale
where it has one (ns ... s for times stored in ms, B ... TB for memory in MB), SI prefixes for
any other unit (1.82 G items/s), bare numbers for ratios. One display unit is chosen per chart,
from its largest value, and every figure about that chart (axis, values, spreads, header,
tooltip) is written in it.

Contract with static/dashboard.js (`displayUnit`, `SI_PREFIXES`): the same rule is mirrored
there; change both together.

Pure functions; no I/O.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from torch_bench.metrics import DISPLAY_SCALES, scaled

SI_PREFIXES = (("k", 1e3), ("M", 1e6), ("G", 1e9), ("T", 1e12), ("P", 1e15))
BARE_UNITS = ("1", "count")  # numbers without a unit; SI-prefixed when large
UNPREFIXED_UNITS = ("ratio",)  # shown as they are, whatever their size
SIGNIFICANT_DIGITS = 4
NO_VALUE = "—"


@dataclass(frozen=True)
class DisplayUnit:
    size: float  # one display unit, in the stored unit
    symbol: str  # written after each value ("" for bare numbers)

    def number(self, value: float) -> str:
        """`value` (in the stored unit) as a number in this unit, four significant digits."""
        return significant(value / self.size)

    def format(self, value: float | None) -> str:
        """`value` with this unit's symbol; a dash for none."""
        if value is None or not math.isfinite(value):
            return NO_VALUE
        number = self.number(value)
        return f"{number} {self.symbol}" if self.symbol else number


def display_unit(largest: float, unit: str) -> DisplayUnit:
    """The display unit for values of `unit` up to `largest` (in absolute value)."""
    largest = abs(largest)
    if unit in DISPLAY_SCALES:
        if largest == 0 or not math.isfinite(largest):
            return DisplayUnit(1.0, unit)
        number, symbol = scaled(largest, unit)
        return DisplayUnit(largest / number, symbol)
    bare = "" if unit in BARE_UNITS else unit
    if unit in UNPREFIXED_UNITS or not math.isfinite(largest):
        return DisplayUnit(1.0, bare if unit not in UNPREFIXED_UNITS else "")
    fitting = [(prefix, size) for prefix, size in SI_PREFIXES if largest >= size]
    if not fitting:
        return DisplayUnit(1.0, bare)
    prefix, size = fitting[-1]
    return DisplayUnit(size, f"{prefix} {bare}".strip() if bare else prefix)


def significant(number: float) -> str:
    """`number` with four significant digits (all of its whole part), grouped in thousands,
    trailing zeros dropped: 1,234, 12.35, 0.001234."""
    if number == 0:
        return "0"
    magnitude = math.floor(math.log10(abs(number)))
    decimals = max(0, SIGNIFICANT_DIGITS - 1 - magnitude)
    text = f"{number:,.{decimals}f}"
    text = text.rstrip("0").rstrip(".") if "." in text else text
    return "0" if text in ("-0", "") else text


def format_value(value: float | None, unit: str) -> str:
    """One value on its own, in the display unit that suits its size."""
    if value is None or not math.isfinite(value):
        return NO_VALUE
    return display_unit(value, unit).format(value)
