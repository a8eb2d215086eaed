"""Inline SVG sparklines, so tables show a trend without JavaScript."""

from __future__ import annotations

from collections.abc import Sequence

WIDTH, HEIGHT, PAD = 120, 28, 2
MIN_RELATIVE_SPAN = 0.05  # a range narrower than 5% of the level is drawn at that scale


def sparkline_points(values: Sequence[float]) -> str:
    """The `points` attribute of an SVG polyline drawing `values` left to right."""
    if not values:
        return ""
    low, high = min(values), max(values)
    # Noise of a fraction of a percent should look flat, not fill the whole height.
    span = max(high - low, MIN_RELATIVE_SPAN * abs(low + high) / 2) or 1.0
    low = (low + high) / 2 - span / 2
    step = (WIDTH - 2 * PAD) / max(len(values) - 1, 1)
    coords = (
        f"{PAD + i * step:.1f},{HEIGHT - PAD - (v - low) / span * (HEIGHT - 2 * PAD):.1f}"
        for i, v in enumerate(values)
    )
    return " ".join(coords)
