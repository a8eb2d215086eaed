"""Changes on the dashboard are coloured only beyond the verdict rule's run-to-run noise."""

from __future__ import annotations

import math
import random

import pytest

from torch_bench.render.markers import ChangeMark
from torch_bench.render.model import Point, RunInfo, Series
from torch_bench.render.noise_band import change_css, noise_band, noise_medians
from torch_bench.render.pages import suite_row


def run(index: int, branch: str = "main") -> RunInfo:
    return RunInfo(index=index, run_id=f"r{index}", created_at=f"2026-01-01T00:{index:02d}:00Z",
                   date="2026-01-01 00:00", sha=f"{index:040x}", short_sha=f"{index:08x}",
                   branch=branch, message="m", url=None, pr_number=None, pr_title="", gpu="CPU",
                   torch="2.5.0", cuda="", driver="", fingerprint="f")


def series_of(medians, direction="lower", branches=None) -> Series:
    branches = branches or ["main"] * len(medians)
    points = tuple(Point(run(i, b), m, m * 0.99, m * 1.01, 5)
                   for i, (m, b) in enumerate(zip(medians, branches, strict=True)))
    return Series(key="k", benchmark_id="b", suite="rnns", name="lstm", metric="forward_time",
                  unit="ms", direction=direction, params={}, points=points, last_status="ok")


def noisy_history(n: int, cv: float, seed: int = 1) -> list[float]:
    rng = random.Random(seed)
    return [10.0 * math.exp(rng.gauss(0, cv)) for _ in range(n)]


def test_a_ten_percent_change_within_a_noisy_history_stays_neutral():
    history = noisy_history(20, cv=0.06)
    row = suite_row(series_of([*history, history[-1] * 1.098]), "main")
    assert row.vs_previous == "+9.8%"
    assert row.vs_previous_css == "same"
    assert "noise band ±" in row.noise


def test_the_same_change_on_a_quiet_history_is_coloured_by_direction():
    history = noisy_history(20, cv=0.004)
    slower = suite_row(series_of([*history, history[-1] * 1.10]), "main")
    assert slower.vs_previous_css == "worse" and slower.vs_baseline_css == "worse"
    faster = suite_row(series_of([*history, history[-1] * 1.10], direction="higher"), "main")
    assert faster.vs_previous_css == "better"


def test_without_three_runs_of_history_nothing_is_coloured():
    row = suite_row(series_of([10.0, 10.0, 20.0]), "main")
    assert row.vs_previous == "+100.0%" and row.vs_previous_css == "same"
    assert "noise unknown" in row.noise


def test_with_fewer_runs_than_the_rule_judges_nothing_is_coloured():
    row = suite_row(series_of([10.0, 10.01, 9.99, 10.0, 20.0]), "main")  # 4 runs of history
    assert row.vs_previous_css == "same"
    assert "noise unknown" in row.noise


def test_the_band_widens_as_the_history_shrinks_like_the_rule():
    history = noisy_history(20, cv=0.02)
    long = noise_band(series_of([*history, 10.0]), "main")
    short = noise_band(series_of([*history[-5:], 10.0]), "main")
    assert short.z > long.z > 3.0


def test_small_changes_beyond_tiny_noise_need_the_minimum_effect():
    band = noise_band(series_of([10.0] * 30 + [10.1]), "main")
    assert band.log_half_width == pytest.approx(0.0, abs=1e-9)
    assert change_css(0.01, "lower", band) == "same"  # below the 2% minimum effect
    assert change_css(0.05, "lower", band) == "worse"


def test_noise_is_learned_after_the_newest_change_point_on_the_baseline_branch():
    medians = [10.0] * 10 + [12.5] * 6 + [99.0]
    branches = ["main"] * 13 + ["pr"] + ["main"] * 3
    series = series_of(medians, branches=branches)
    mark = ChangeMark(index=10, before=10.0, after=12.5, ratio=1.25, regression=True)
    assert noise_medians(series, "main", [mark]) == [12.5] * 5  # the "pr" point is left out
    assert len(noise_medians(series, "main")) == 15


def test_a_step_a_few_runs_back_is_not_taken_for_noise():
    history = noisy_history(12, cv=0.004)
    values = [*history[:8], *(v * 1.25 for v in history[8:]), history[-1] * 1.25 * 1.10]
    step = ChangeMark(index=8, before=10.0, after=12.5, ratio=1.25, regression=True)
    band = noise_band(series_of(values), "main", [step])  # 4 runs since the step, 5 needed
    assert band.spread is not None and band.percent < 5  # learned around the step, not over it
    assert change_css(0.10, "lower", band) == "worse"


def test_fewer_runs_than_the_rule_needs_colour_nothing():
    band = noise_band(series_of(noisy_history(5, cv=0.004)), "main")  # 4 before the newest
    assert band.spread is None
    assert change_css(0.30, "lower", band) == "same"
