"""Chart geometry drawn on the server (render/svg_chart.py) and the names that tell
benchmarks apart (render/names.py)."""

from __future__ import annotations

import pytest

from torch_bench.render.names import common_prefix, own_params, param_spread, short_names
from torch_bench.render.svg_chart import (
    VIEW,
    ChangePoint,
    date_ticks,
    nice_step,
    trend_chart,
    value_axis,
)


@pytest.mark.parametrize(("span", "step"), [(4.0, 1.0), (0.2, 0.05), (9.0, 2.5), (700, 200),
                                            (0.0031, 0.001)])
def test_steps_are_round(span, step):
    assert nice_step(span) == pytest.approx(step)


def test_a_step_in_the_values_fits_the_axis_and_noise_looks_small():
    low, high, ticks, unit = value_axis([10.0, 10.1, 12.5, 12.4], "ms")
    assert low <= 10.0 and high >= 12.5 and unit == "ms"
    assert [label for _, label in ticks] == ["9", "10", "11", "12", "13"]
    low, high, ticks, _ = value_axis([100.0, 100.2, 99.9], "ms")  # 0.3% of noise
    assert (high - low) / 100 >= 0.1  # drawn on at least 10% of the level


def test_labels_share_the_display_unit_of_the_largest():
    low, high, ticks, unit = value_axis([800.0, 1200.0], "ms")
    assert unit == "s"
    assert [label for _, label in ticks] == ["0.6", "0.8", "1.0", "1.2", "1.4"]
    _, _, ticks, unit = value_axis([2048.0, 4096.0], "MB")
    assert unit == "GB" and [label for _, label in ticks] == ["1", "2", "3", "4", "5"]
    _, _, ticks, unit = value_axis([123_456.0, 150_000.0], "items/s")  # SI prefixes
    assert unit == "k items/s" and ticks[0][1] == "120"
    _, _, ticks, unit = value_axis([1.82e9, 2.4e9], "items/s")
    assert unit == "G items/s" and [label for _, label in ticks][:2] == ["1.6", "1.8"]
    assert value_axis([1.3, 1.41], "ratio")[2][1][1] == "1.30"


def test_an_axis_across_zero_labels_zero_without_a_sign():
    _, _, ticks, _ = value_axis([-0.3, 0.3], "1")
    assert "0.0" in [label for _, label in ticks] or "0" in [label for _, label in ticks]
    assert not any(label in ("-0", "-0.0", "-0.00") for _, label in ticks)


def test_an_axis_starts_at_zero_when_zero_is_close():
    low, *_ = value_axis([0.2, 5.0], "ms")
    assert low == 0
    low, *_ = value_axis([40.0, 50.0], "ms")
    assert low > 0


def test_dates_label_the_axis_day_by_day_or_hour_by_hour():
    days = [f"2026-01-{d:02d}T12:00:00Z" for d in range(1, 13)]
    ticks = date_ticks(days)
    assert ticks[0] == (0, "Jan 1", False) and ticks[-1] == (11, "Jan 12", False)
    assert len(ticks) == 6 and [minor for *_, minor in ticks] == [False, True, False, True,
                                                                  True, False]
    hours = [f"2026-01-01T{h:02d}:00:00Z" for h in range(10)]
    assert date_ticks(hours)[0][1] == "Jan 1 00:00"
    years = ["2025-12-30T00:00:00Z", "2026-01-02T00:00:00Z"]
    assert [label for _, label, _ in date_ticks(years)] == ["Dec 30 2025", "Jan 2 2026"]
    assert date_ticks(["2026-01-01T00:00:00Z"] * 3) == [(0, "Jan 1 00:00", False)]


def test_chart_places_band_change_points_and_environment_changes():
    values = [10.0] * 6 + [12.5] * 6
    times = [f"2026-01-{d:02d}T12:00:00Z" for d in range(1, 13)]
    chart = trend_chart(values, times, "ms", band=(12.0, 13.0), band_from=6,
                        change_points=[ChangePoint(6, True, "change point +25.0%")],
                        env_changes=[(6, "torch 2.5.0 → 2.6.0")],
                        quartiles=([v * 0.99 for v in values], [v * 1.5 for v in values]))
    assert chart.band is not None and chart.band[0] == pytest.approx(6 / 11 * VIEW, abs=0.1)
    [mark] = chart.change_points
    assert mark.css == "worse" and mark.x == pytest.approx(6 / 11 * VIEW, abs=0.1)
    assert chart.last == (VIEW, mark.y)
    [env] = chart.env_lines
    assert mark.x > env.x > 5 / 11 * VIEW
    points = [tuple(map(float, p.split(","))) for p in chart.line.split()]
    assert len(points) == 12 and points[0][0] == 0 and points[-1][0] == VIEW
    assert all(0 <= y <= VIEW for _, y in points)
    assert [t.at for t in chart.y_ticks] == sorted((t.at for t in chart.y_ticks), reverse=True)
    assert chart.unit == "ms" and "12" in " ".join(t.label for t in chart.y_ticks)
    ribbon = [tuple(map(float, p.split(","))) for p in chart.spread.split()]
    assert len(ribbon) == 2 * len(values)  # along q3, back along q1
    assert all(0 <= y <= VIEW for _, y in ribbon)  # q3 at 1.5x the median: clipped
    assert min(y for _, y in ribbon) == 0


def test_empty_and_single_point_charts_draw():
    assert trend_chart([], [], "ms").line == ""
    one = trend_chart([3.0], ["2026-01-01T00:00:00Z"], "ms")
    assert one.line == f"{VIEW / 2:g},{one.last[1]:g}"


def test_names_lose_their_common_prefix_not_their_end():
    names = [f"benchmarks/test_synthetic.py::test_case_{k:03d}" for k in range(3)]
    assert common_prefix(names) == "benchmarks/test_synthetic.py::"
    assert short_names(names)[names[1]] == "…test_case_001"
    assert short_names(["bert", "gpt2"]) == {"bert": "bert", "gpt2": "gpt2"}
    assert short_names(["lstm", "lstm"]) == {"lstm": "lstm"}
    assert short_names(["test_case_1", "test_case_2"])["test_case_1"] == "…1"


def test_card_params_put_what_differs_first():
    suite = [{"model": "bert", "device": "cuda", "dtype": d, "batch_size": b, "mode": m}
             for d in ("float32", "float16") for b in (1, 8, 16) for m in ("train", "eval")]
    suite.append({"model": "t5"})
    spread = param_spread(suite)
    assert own_params("bert", suite[0], {}, spread) == (
        "batch_size=1, dtype=float32, mode=train, device=cuda")
    assert own_params("bert", suite[0], {"device": "cuda"}, spread) == (
        "batch_size=1, dtype=float32, mode=train")
    # among the cards of one name and metric, what tells them apart comes before the rest
    latency = param_spread(p for p in suite[:6] if p.get("dtype") == "float32")
    assert own_params("bert", suite[0], {}, latency, spread) == (
        "batch_size=1, mode=train, dtype=float32, device=cuda")
