"""One budget for a PR job's time after measuring its head (input `pr-budget`): A/B,
confirmation and explain take from it in turn, and the summary says what it bought."""

from __future__ import annotations

import pytest

from torch_bench.action import pr_budget
from torch_bench.action.inputs import read_inputs
from torch_bench.errors import UserError


def inputs(**values):
    return read_inputs({f"TB_{k.upper()}": v for k, v in values.items()} | {"TB_DEVICE": "cpu"})


def test_auto_gives_as_long_as_measuring_took():
    budget = pr_budget.make_budget(inputs(), measuring_s=48.0)
    assert budget.auto and budget.seconds == pytest.approx(48.0)
    fixed = pr_budget.make_budget(inputs(pr_budget="120"), measuring_s=48.0)
    assert not fixed.auto and fixed.seconds == pytest.approx(120.0)
    for bad in ("-1", "soon", "inf"):
        with pytest.raises(UserError, match="Invalid value for 'pr-budget' input"):
            inputs(pr_budget=bad)


def test_stages_take_what_is_left_in_turn():
    budget = pr_budget.PrBudget(seconds=100.0, measuring_s=100.0)
    confirm = pr_budget.bounded(inputs(), budget, "confirmation")
    assert confirm["confirm-budget"] == pytest.approx(100.0)
    budget.spent["confirmation"] = 70.0
    explain = pr_budget.bounded(inputs(), budget, "explain")
    assert explain["explain-budget"] == pytest.approx(30.0)
    budget.spent["explain"] = 40.0  # explain starts no case past its budget, but may end late
    assert pr_budget.bounded(inputs(), budget, "explain")["explain-budget"] == 0.0
    line = budget.summary()
    assert "100 s (pr-budget)" in line and "confirmation 70 s" in line and "0 s left" in line
    assert "explain cut from 600 s to 30 s" in line


def test_ab_runs_only_when_its_runs_fit():
    budget = pr_budget.PrBudget(seconds=50.0, measuring_s=50.0)
    assert budget.ab_cost() == pytest.approx(300.0) and not budget.ab_fits()  # 6 runs
    assert pr_budget.PrBudget(seconds=300.0, measuring_s=50.0).ab_fits()


def test_a_history_too_thin_to_judge_gets_its_ab_under_auto_and_a_number_bounds_it():
    # auto: A/B is the PR's only verdict on a thin history, so it runs though it costs 6x
    auto = pr_budget.make_budget(inputs(), measuring_s=50.0)
    assert not auto.ab_fits() and auto.ab_left_out("auto") is None
    fixed = pr_budget.make_budget(inputs(pr_budget="120"), measuring_s=50.0)
    assert "A/B left out: it takes about 300 s (6 runs), 120 s were left" in \
        fixed.ab_left_out("auto")
    assert fixed.ab_left_out("always") is None  # asked for whatever it costs
    assert pr_budget.make_budget(inputs(pr_budget="300"), 50.0).ab_left_out("auto") is None
    assert pr_budget.make_budget(inputs(pr_budget="0"), 50.0).ab_left_out("auto")
