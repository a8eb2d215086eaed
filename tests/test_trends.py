"""Small-multiple trends: which benchmarks come first and what each card's data file holds."""

from __future__ import annotations

import pytest

from test_noise_colours import noisy_history, series_of
from torch_bench.render.markers import ChangeMark
from torch_bench.render.model import SiteModel
from torch_bench.render.noise_band import noise_band
from torch_bench.render.trends import TREND_POINTS, trend_cards, trend_payload


def renamed(series, key, name):
    from dataclasses import replace
    return replace(series, key=key, benchmark_id=key, name=name)


def test_regressions_come_first_then_improvements_then_the_rest():
    quiet = noisy_history(20, cv=0.004)
    flat = renamed(series_of([*quiet, quiet[-1]]), "a", "flat")
    slower = renamed(series_of([*quiet, quiet[-1] * 1.2]), "b", "slower")
    faster = renamed(series_of([*quiet, quiet[-1] * 0.8]), "c", "faster")
    model = SiteModel(runs=(), series=(flat, faster, slower), baseline_branch="main")
    bands = {s.key: noise_band(s, "main") for s in model.series}
    cards = trend_cards(model, {}, bands)
    assert [c.series.name for c in cards] == ["slower", "faster", "flat"]
    assert cards[0].flag == "+20.0% vs baseline" and cards[0].css == "worse"
    assert cards[2].flag == "" and cards[2].css == "same"


def test_a_recent_change_point_flags_the_card():
    series = series_of([10.0] * 8 + [12.0] * 8)
    mark = ChangeMark(index=8, before=10.0, after=12.0, ratio=1.2, regression=True)
    model = SiteModel(runs=(), series=(series,), baseline_branch="main")
    card = trend_cards(model, {series.key: [mark]}, {series.key: noise_band(series, "main")})[0]
    assert card.flag == "change point +20.0%" and card.css == "worse"


def test_trend_file_keeps_the_newest_points_and_maps_change_points_into_them():
    values = [10.0] * (TREND_POINTS + 50) + [12.0] * 30
    series = series_of(values)
    marks = [ChangeMark(index=3, before=9.0, after=10.0, ratio=1.1, regression=True),
             ChangeMark(index=TREND_POINTS + 50, before=10.0, after=12.0, ratio=1.2,
                        regression=True)]
    payload = trend_payload(series, marks, noise_band(series, "main", marks), "main")
    assert len(payload["median"]) == TREND_POINTS
    assert payload["change_points"] == [{"index": TREND_POINTS - 30, "regression": True}]
    low, high = payload["band"]
    assert low == pytest.approx(12.0) and high == pytest.approx(12.0)  # a flat level: no noise


def test_no_band_without_enough_history():
    series = series_of([10.0, 11.0])
    assert trend_payload(series, [], noise_band(series, "main"), "main")["band"] is None
