"""Trend charts drawn on the server, readable without JavaScript: a value axis in the unit of
the series, a date axis, the noise band, change points and environment changes.

Geometry only; templates/macros.html turns a `Chart` into markup. The plot is an SVG whose
drawing coordinates run 0..VIEW on both axes and are stretched to the plot box
(preserveAspectRatio="none", strokes that do not scale), so one drawing fits any width.
The axis labels are HTML text positioned in percent of that box: they keep their font size
on a phone and on a wide screen, where labels inside a scaled SVG would shrink with it.

Contract with static/dashboard.js (`drawChart`, which redraws a chart the same way when the
reader zooms or filters): the markup of the `chart` macro, `VIEW`, and the tick rules below
(`nice_step`, `value_axis`, `date_label`) are mirrored there; change them together.

Pure functions; no I/O.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from torch_bench.render.units import DisplayUnit
from torch_bench.render.units import display_unit as unit_for

VIEW = 1000  # drawing coordinates of the plot, both axes
Y_TICKS = 5  # about this many value labels
X_TICKS = 6  # date labels at 0, 20, ..., 100% of the axis
MINOR_X_TICKS = (1, 3, 4)  # those at 20, 60 and 80% are hidden on a phone
MIN_RELATIVE_SPAN = 0.1  # the value axis spans at least 10% of the level: noise looks small
PAD = 0.06  # room above and below the drawn values, as a share of their span
ZERO_PULL = 0.3  # the axis starts at zero when its low end is within 30% of the span of it
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


@dataclass(frozen=True)
class Tick:
    at: float  # position along the axis, percent of the plot box (y: from the top)
    label: str
    minor: bool = False  # left out on a narrow screen (date labels between the main ones)


@dataclass(frozen=True)
class Marker:
    x: float  # drawing coordinates
    y: float
    css: str  # "worse" or "better"
    label: str  # the hover text


@dataclass(frozen=True)
class Chart:
    line: str  # `points` of the SVG polyline
    spread: str  # `points` of the polygon of each run's interquartile range ("" without)
    y_ticks: tuple[Tick, ...]
    x_ticks: tuple[Tick, ...]
    band: tuple[float, float, float, float] | None  # x, y, width, height of the noise band
    change_points: tuple[Marker, ...]
    env_lines: tuple[Marker, ...]  # vertical dashed lines where the environment changed
    last: tuple[float, float] | None  # the newest point, drawn as a dot
    low: float  # the value axis' range
    high: float
    unit: str  # above the value axis: the display unit of its labels
    summary: str  # the chart in one sentence, for screen readers
    shown: DisplayUnit = DisplayUnit(1.0, "")  # that unit: every figure about the chart uses it

    @property
    def label_chars(self) -> int:
        """The widest value label, in characters: the room the axis needs."""
        return max((len(t.label) for t in self.y_ticks), default=1)


@dataclass(frozen=True)
class ChangePoint:
    index: int  # into the values
    regression: bool
    label: str


def nice_step(span: float, count: int = Y_TICKS) -> float:
    """A round step (1, 2, 2.5 or 5 times a power of ten) giving about `count` ticks."""
    raw = span / max(count - 1, 1)
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 2.5, 5, 10):
        if raw <= factor * power * 1.0001:
            return factor * power
    return 10 * power


def value_range(values: Sequence[float], extra: Sequence[float] = ()) -> tuple[float, float]:
    """The drawn range of `values` (and of `extra`, say the noise band): at least
    MIN_RELATIVE_SPAN of their level, padded, from zero when zero is close."""
    every = [v for v in (*values, *extra) if math.isfinite(v)]
    if not every:
        return 0.0, 1.0
    low, high = min(every), max(every)
    level = (abs(low) + abs(high)) / 2
    span = max(high - low, MIN_RELATIVE_SPAN * level) or 1.0
    middle = (low + high) / 2
    low, high = middle - span * (0.5 + PAD), middle + span * (0.5 + PAD)
    if min(every) >= 0 and low < ZERO_PULL * (high - low):
        low = 0.0  # never below zero for values that cannot be
    return low, high


def value_axis(values: Sequence[float], unit: str, extra: Sequence[float] = ()
               ) -> tuple[float, float, list[tuple[float, str]], str]:
    """(low, high, [(value, label)], unit title): the axis' range rounded out to whole
    steps, its labels as numbers in one display unit for all (`chart_unit`), and that
    unit."""
    low, high = value_range(values, extra)
    shown = chart_unit(values, unit, extra)
    size, symbol = shown.size, shown.symbol
    low, high = low / size, high / size  # steps are round in the unit shown
    step = nice_step(high - low)
    low, high = math.floor(low / step + 1e-9) * step, math.ceil(high / step - 1e-9) * step
    if high <= low:
        high = low + step
    decimals = max(0, -math.floor(math.log10(step) + 1e-9))
    if (step * 10 ** decimals) % 1 > 1e-6:
        decimals += 1  # a step of 2.5 times a power of ten
    count = round((high - low) / step)
    ticks = [((low + k * step) * size, f"{round(low + k * step, decimals + 3) + 0.0:,.{decimals}f}")
             for k in range(count + 1)]
    return low * size, high * size, ticks, axis_title(symbol)


@functools.cache
def x_positions(count: int) -> tuple[float, ...]:
    """The x drawing coordinate of each of `count` points spread over the plot in order (one
    point: the middle), rounded to a tenth; the same for every chart of that many points."""
    if count == 1:
        return (VIEW / 2,)
    last = count - 1
    return tuple(round(i * VIEW / last, 1) for i in range(count))


@functools.cache
def points_format(count: int, closed: bool = False) -> str:
    """A %-format giving the SVG `points` of `count` values (`closed`: forth along one edge,
    then back along the other, 2 x `count` values) from their y coordinates: the x
    coordinates are the same for every chart of that many points, formatted once."""
    xs = x_positions(count)
    return " ".join(f"{x:g},%g" for x in (xs + xs[::-1] if closed else xs))


def drawn_y(values: Sequence[float], low: float, high: float,
            clip: bool = False) -> np.ndarray:
    """The y drawing coordinate of each value on an axis from `low` to `high` (inverted: the
    top is 0), rounded to a tenth; with `clip`, kept inside the plot."""
    drawn = VIEW - (np.asarray(values, np.float64) - low) / (high - low) * VIEW
    if clip:
        drawn = np.clip(drawn, 0.0, float(VIEW))
    return np.round(drawn, 1) + 0.0  # + 0.0: no "-0"


def axis_title(symbol: str) -> str:
    """The unit written above the value axis ("" for bare numbers)."""
    return "" if symbol in ("1", "count") else symbol


def chart_unit(values: Sequence[float], unit: str, extra: Sequence[float] = ()) -> DisplayUnit:
    """The one display unit of a chart of `values` (and `extra`, say its noise band): the one
    that suits the largest end of its value axis. Its header, values, spreads and tooltips
    are written in it too."""
    low, high = value_range(values, extra)
    return unit_for(max(abs(low), abs(high)), unit)


@functools.lru_cache(maxsize=16384)  # every chart of a site shows the same newest runs
def parse_time(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def date_label(moment: datetime, with_time: bool, with_year: bool) -> str:
    text = f"{MONTHS[moment.month - 1]} {moment.day}"
    if with_year:
        text += f" {moment.year}"
    return text + (f" {moment.hour:02d}:{moment.minute:02d}" if with_time else "")


def date_ticks(times: Sequence[str], count: int = X_TICKS) -> list[tuple[int, str, bool]]:
    """(index, label, minor) of up to `count` points spread evenly in commit order, labelled
    by date ("Mar 4"), with the time of day when the points span less than three days and
    the year when they span two; a label equal to the one before it is left out."""
    moments = [parse_time(t) for t in times]
    known = [m for m in moments if m is not None]
    if not known:
        return []
    with_time = (max(known) - min(known)).total_seconds() < 3 * 86400
    with_year = min(known).year != max(known).year
    last = len(times) - 1
    slots: dict[int, bool] = {}  # index -> minor (a slot shared with a main one is main)
    for k in range(count):
        i = round(k * last / (count - 1))
        slots[i] = slots.get(i, True) and count == X_TICKS and k in MINOR_X_TICKS
    ticks: list[tuple[int, str, bool]] = []
    for i, minor in slots.items():
        moment = moments[i]
        if moment is None:
            continue
        label = date_label(moment, with_time, with_year)
        if not ticks or ticks[-1][1] != label:
            ticks.append((i, label, minor))
    return ticks


def trend_chart(values: Sequence[float], times: Sequence[str], unit: str, *,
                band: tuple[float, float] | None = None, band_from: int = 0,
                change_points: Sequence[ChangePoint] = (),
                env_changes: Sequence[tuple[int, str]] = (),
                quartiles: tuple[Sequence[float], Sequence[float]] | None = None) -> Chart:
    """The chart of `values` (oldest first, one per point of `times`) in commit order; the
    noise band is drawn from point `band_from` on (the last change point), each run's
    interquartile range (`quartiles`: q1 and q3 per point) as a shaded ribbon, clipped to
    the plot: the axis is chosen for the medians, not for the spread of single runs."""
    low, high, y_labels, title = value_axis(values, unit, band or ())
    shown = chart_unit(values, unit, band or ())
    last = max(len(values) - 1, 1)

    def x(i: float) -> float:
        return round(i * VIEW / last, 1) if len(values) > 1 else VIEW / 2

    def y(v: float) -> float:
        return round(VIEW - (v - low) / (high - low) * VIEW, 1)

    line = points_format(len(values)) % tuple(drawn_y(values, low, high).tolist())
    spread = ""
    if quartiles is not None and len(values):
        q1, q3 = (drawn_y(q, low, high, clip=True) for q in quartiles)
        spread = points_format(len(values), closed=True) % tuple(
            np.concatenate([q3, q1[::-1]]).tolist())
    drawn_band = None
    if band is not None and values:
        start = x(min(max(band_from, 0), len(values) - 1))
        top, bottom = y(band[1]), y(band[0])
        drawn_band = (start, top, round(VIEW - start, 1), round(max(bottom - top, 2.0), 1))
    marks = tuple(Marker(x(c.index), y(values[c.index]), "worse" if c.regression else "better",
                         c.label) for c in change_points if 0 <= c.index < len(values))
    lines = tuple(Marker(x(i - 0.5), 0.0, "env", label) for i, label in env_changes
                  if 0 < i < len(values))
    x_labels = [Tick(round(x(i) / VIEW * 100, 2), label, minor)
                for i, label, minor in date_ticks(times)]
    summary = (f"trend of the last {len(values)} runs, axis from {y_labels[0][1]} to "
               f"{y_labels[-1][1]} {title}".rstrip() if values else "no runs yet")
    return Chart(
        line=line, spread=spread,
        y_ticks=tuple(Tick(round(100 - (v - low) / (high - low) * 100, 2), label)
                      for v, label in y_labels),
        x_ticks=tuple(x_labels), band=drawn_band, change_points=marks, env_lines=lines,
        last=(x(len(values) - 1), y(values[-1])) if values else None,
        low=low, high=high, unit=title, summary=summary, shown=shown)
