"""The history evaluation draws the features it names, and its oracle takes them out."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).parents[1] / "benchmarks" / "history_eval.py"


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("history_eval", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_a_step_moves_only_its_benchmarks_from_three_to_eight_runs_back(script):
    rng = np.random.default_rng(1)
    for _ in range(50):
        f = script.draw_features(rng, "step", 12, 12)
        moved = np.flatnonzero(np.abs(f.history).sum(axis=0))
        assert moved.tolist() == [0]
        back = int((np.abs(f.history[:, 0]) > 0).sum())
        assert 3 <= back <= 8
        assert f.head[0, 0] == pytest.approx(f.history[-1, 0])
        assert abs(f.head[0, 0]) == pytest.approx(math.log(1.15))
    quarter = script.draw_features(rng, "step-quarter", 12, 12)
    assert np.flatnonzero(np.abs(quarter.history).sum(axis=0)).tolist() == [0, 1, 2]


def test_an_outlier_is_one_run_and_drift_a_ramp_into_the_head(script):
    rng = np.random.default_rng(2)
    f = script.draw_features(rng, "outlier-uneven", 10, 12)
    slow_runs = np.flatnonzero(f.history.sum(axis=1))
    assert slow_runs.size == 1
    assert math.log(1.3) * 0.7 <= f.history[slow_runs[0]].min()
    assert f.history[slow_runs[0]].max() <= math.log(1.4) * 1.3
    d = script.draw_features(rng, "drift", 10, 12)
    steps = np.diff(np.vstack([d.history, d.head])[:, 5])
    assert np.allclose(steps, math.log(1.005))
    assert script.draw_features(rng, "noisy-head", 10, 12).head_noise == 2.0


@pytest.mark.parametrize("fleet", ["step", "outlier", "drift-quarter"])
def test_the_oracle_s_statistic_is_centred_once_it_knows_the_features(script, fleet):
    rng = np.random.default_rng(3)
    suite = script.new_suite(rng, 12)
    d = [script.oracle_differences(*script.draw_pr(rng, suite, fleet, 10, 0.02, np.ones(12)))
         for _ in range(150)]
    rel = script.relative(np.array(d))
    # centred within a few standard errors, where an uncorrected step of 15% would be far off
    assert abs(rel[:, 0].mean()) < 4 * rel[:, 0].std() / math.sqrt(150)
