"""The evaluation script's vectorised rule must be the rule the tool applies."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

from torch_bench.analyze.noise import NoiseEstimate
from torch_bench.analyze.rule import Outcome, assess

SCRIPT = Path(__file__).parents[1] / "benchmarks" / "detector_eval.py"


def load_script():
    spec = importlib.util.spec_from_file_location("detector_eval", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_vectorised_rule_agrees_with_the_tool():
    script = load_script()
    rng = np.random.default_rng(7)
    reps = 40
    history = script.draw_runs(rng, reps, 20, 0.03, 0.05, 1.0)
    medians = np.median(history, axis=2)
    spread = script.robust_spread(medians)
    base = script.draw_runs(rng, reps, 3, 0.03, 0.05, 1.0)
    head = script.draw_runs(rng, reps, 3, 0.03, 0.05, 1.1)
    fast = script.our_rule(base, head, spread, 0.02)
    for i in range(reps):
        a = assess(list(base[i]), list(head[i]), NoiseEstimate.from_medians(medians[i]),
                   lower_is_better=True)
        assert (a.outcome is Outcome.WORSE) == bool(fast[i]), i
    assert 0 < fast.sum() < reps  # the draws exercise both answers
