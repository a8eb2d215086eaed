"""Rates and budgets have one set of bounds (`boundary.LIMITS`) for every command's flags and
the Action's inputs: the smallest rate allowed still gives a verdict, anything past the
bounds is one line naming the input, never a traceback from the statistics."""

from __future__ import annotations

import argparse
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support.runs import history, make_run, ok
from torch_bench.action.inputs import BISECT_INPUTS, read_inputs
from torch_bench.boundary import LIMITS, limited
from torch_bench.errors import UserError
from torch_bench.results.document import save_run
from torch_bench.store.layout import run_path

ACTION_INPUTS = {"false-alarm-rate": "false-alarm-rate", "per-pr-level": "per-pr-level",
                 "confirm-budget": "budget", "explain-budget": "budget",
                 "bisect-max-steps": "max-steps"}


def action(**values):
    return read_inputs({"TB_SUITES": "rnns", "TB_DEVICE": "cpu",
                        **{f"TB_{k.upper().replace('-', '_')}": v for k, v in values.items()}})


def short_history(tmp_path, spread):
    for run in history(3, {"steady": 10, "slower": 10}, spread=spread):
        save_run(run, tmp_path / "data" / run_path(run))
    head = make_run([ok("steady", 10, seed=11), ok("slower", 13, seed=12)], sha="b" * 40,
                    branch="feature", pr=5, run_id="head-1", created_at="2026-02-01T00:00:00Z")
    save_run(head, tmp_path / "head.json")


@pytest.mark.parametrize("spread", [0.01, 0.5])
def test_the_smallest_rates_allowed_still_give_verdicts_on_a_short_noisy_history(
        cli, tmp_path, spread):
    short_history(tmp_path, spread)
    done = cli("compare", "auto", "head.json", "--history", "data", "--json", "v.json",
               "--no-github", "--false-alarm-rate", "1e-6", "--per-pr-level", "1e-6")
    assert done.returncode == 0, done.stderr
    verdicts = json.loads((tmp_path / "v.json").read_text())["verdicts"]
    assert {v["name"] for v in verdicts} == {"steady", "slower"}


@pytest.mark.parametrize(("flag", "value"), [("--false-alarm-rate", "1e-12"),
                                             ("--per-pr-level", "1e-30"),
                                             ("--false-alarm-rate", "1e-320"),
                                             ("--confirm-budget", "1e300")])
def test_a_rate_or_budget_past_its_bounds_is_a_usage_error_naming_it(cli, tmp_path, flag,
                                                                     value):
    short_history(tmp_path, 0.01)
    done = cli("compare", "auto", "head.json", "--history", "data", "--no-github", flag, value)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"argument {flag}: {value!r} is out of range" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(("name", "value"), [("false-alarm-rate", "1e-320"),
                                             ("per-pr-level", "1e-320"),
                                             ("false-alarm-rate", "1e-12"),
                                             ("confirm-budget", "1e300"),
                                             ("explain-budget", "-1"),
                                             ("bisect-max-steps", "0"),
                                             ("bisect-max-steps", "-1")])
def test_the_action_refuses_what_the_cli_refuses_naming_the_input(name, value):
    with pytest.raises(UserError, match=f"Invalid value for '{name}' input: '{value}'"):
        action(**{name: value})


def test_the_bisect_sub_action_refuses_zero_steps():
    with pytest.raises(UserError, match="Invalid value for 'max-steps' input: '0'"):
        read_inputs({"TB_MAX_STEPS": "0"}, BISECT_INPUTS)


def accepts(parse, text):
    try:
        return parse(text)
    except (ValueError, argparse.ArgumentTypeError, UserError):
        return None


@settings(max_examples=200, deadline=None)
@given(name=st.sampled_from(sorted(ACTION_INPUTS)),
       value=st.one_of(st.floats(allow_nan=True, allow_infinity=True).map(repr),
                       st.integers(-10, 2000).map(str),
                       st.sampled_from(["1e-6", "0.5", "1", "0", "604800", "604801"])))
def test_the_action_input_and_the_flag_have_the_same_bounds(name, value):
    flag = accepts(limited(ACTION_INPUTS[name]), value)
    given_to_action = accepts(lambda text: action(**{name: text})[name], value)
    assert flag == given_to_action
    if flag is not None:
        limit = LIMITS[ACTION_INPUTS[name]]
        assert limit.low <= flag <= limit.high
