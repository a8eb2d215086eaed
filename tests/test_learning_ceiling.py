"""The learning-ceiling script measures what learning each benchmark's noise costs."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).parents[1] / "benchmarks" / "learning_ceiling.py"


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("learning_ceiling", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_a_variance_learned_from_history_estimates_the_one_the_oracle_knows(script):
    model = script.DE.MODELS[0]  # normal: runs independent, as the learned variance assumes
    logs, _, known = script.draw_prs(np.random.default_rng(3), model, 0.05, 10, 400)
    own, moderated, df = script.learned_variances(logs, 10)
    assert 0.85 < own.mean() / known.mean() < 1.15
    assert 0.85 < moderated.mean() / known.mean() < 1.15
    # moderation lends the suite's degrees of freedom, never takes the benchmark's own away
    assert (df >= 9).all() and np.median(df) > 9


def test_a_threshold_calibrated_on_unchanged_prs_holds_on_fresh_ones(script):
    model = script.DE.MODELS[0]
    rng = np.random.default_rng(5)
    first = script.draw_prs(rng, model, 0.05, 5, 600)
    fresh = script.draw_prs(rng, model, 0.05, 5, 600)
    statistic = [stats / np.sqrt(script.learned_variances(logs, 5)[0])
                 for logs, stats, _ in (first, fresh)]
    assert 0.004 < script._detection(*statistic) < 0.02


def test_with_five_runs_of_history_learning_costs_detection_and_moderation_wins_some_back(
        script):
    model = script.DE.MODELS[0]
    found = script.cell(model, 0.05, 5, null_count=600, changed_count=300, seed=11)[0.10]
    assert found["oracle"] > found["moderated"] + 0.05
    assert found["moderated"] > found["learned"] + 0.05
    # the per-PR guarantee is paid for in detection
    assert found["per PR"] < found["moderated"] - 0.03
