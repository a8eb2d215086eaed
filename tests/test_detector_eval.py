"""The evaluation script's vectorised rule must be the rule the tool applies."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from torch_bench.analyze.noise import NoiseEstimate
from torch_bench.analyze.rule import Outcome, assess

SCRIPT = Path(__file__).parents[1] / "benchmarks" / "detector_eval.py"


def load_script():
    spec = importlib.util.spec_from_file_location("detector_eval", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(("history", "runs"), [(20, 3), (5, 1), (2, 1)])
def test_vectorised_rule_agrees_with_the_tool(history, runs):
    script = load_script()
    rng = np.random.default_rng(7)
    reps = 40
    model = script.OffsetModel("bimodal", "bimodal", 0.3, 0.1)
    offsets = model.draw(rng, reps, history + 2 * runs, 0.02)
    medians = np.median(script.draw_samples(rng, offsets[:, :history], 0.03), axis=2)
    base = script.draw_samples(rng, offsets[:, history:history + runs], 0.03)
    head = script.draw_samples(rng, offsets[:, history + runs:], 0.03, 1.12)
    fast = script.our_rule(base, head, medians)
    for i in range(reps):
        a = assess(list(base[i]), list(head[i]), NoiseEstimate.from_medians(list(medians[i])),
                   lower_is_better=True)
        assert (a.outcome is Outcome.WORSE) == bool(fast[i]), i
    if history >= 5:
        assert 0 < fast.sum() < reps  # the draws exercise both answers
    else:
        assert fast.sum() == 0  # not enough history: never a regression


def test_every_offset_model_has_the_run_cv_it_claims():
    script = load_script()
    rng = np.random.default_rng(3)
    for model in script.MODELS:
        if model.kind in ("normal", "t"):
            offsets = model.draw(rng, 20_000, 5, 0.05)
            assert offsets.std() == pytest.approx(script.sigma(0.05), rel=0.1), model.name
