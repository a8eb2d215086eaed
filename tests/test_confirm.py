"""Targeted confirmation: A/B rounds of only the flagged and undecided benchmarks, until settled
or out of budget."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from support.runs import history, make_run, ok, untrusted
from test_ab import checkout
from torch_bench.analyze.confirm import (
    confirm,
    leaning,
    leaning_shift,
    name_filter,
    shift_witnesses,
    targets,
)
from torch_bench.analyze.rule import Outcome, RulePolicy
from torch_bench.analyze.shift import MIN_BENCHMARKS
from torch_bench.analyze.verdicts import Kind, compare_runs
from torch_bench.report.markdown import format_report

LEVELS = {f"b{i}": 10.0 + i for i in range(8)}


def first_look(head_factors: dict[str, float], spread: float = 0.02):
    """A PR judged against 12 runs of history (run-to-run log sd `spread`): the head's
    single run."""
    base = make_run([ok(n, m, seed=300 + j) for j, (n, m) in enumerate(LEVELS.items())],
                    created_at="2026-01-01T00:00:00Z", run_id="base")
    head = make_run([ok(n, m * head_factors.get(n, 1.0), seed=400 + j)
                     for j, (n, m) in enumerate(LEVELS.items())], sha="b" * 40, run_id="head")
    return compare_runs([base], [head], history(12, LEVELS, spread=spread))


class Rounds:
    """A measurer whose code really is `true_factors` slower on the head; records calls."""

    def __init__(self, true_factors: dict[str, float], seconds_per_round: float = 10.0,
                 noise: float = 0.01):
        self.true = true_factors
        self.noise = noise
        self.calls: list[tuple[int, str]] = []
        self.now = 0.0
        self.cost = seconds_per_round

    def clock(self) -> float:
        return self.now

    def __call__(self, index: int, only: str):
        import re

        self.calls.append((index, only))
        self.now += self.cost
        rng = np.random.default_rng(900 + index)
        chosen = {n: m for n, m in LEVELS.items() if re.fullmatch(only, f"demo/{n}")}

        def noise() -> float:
            return float(np.exp(rng.normal(0, self.noise)))

        def side(factors, tag):
            return make_run([ok(n, m * factors.get(n, 1.0) * noise(),
                                seed=int(rng.integers(1 << 30))) for n, m in chosen.items()],
                            run_id=f"{tag}{index}", created_at=f"2026-02-{1 + index:02d}T00:00:00Z")

        return side({}, "base"), side(self.true, "head")


def test_a_fluke_regression_is_cleared_and_a_real_one_confirmed():
    # b1 is really 10% slower; b2 only looked 10% slower on the head's one run
    first = first_look({"b1": 1.10, "b2": 1.10})
    assert {v.name for v in first.of_kind(Kind.REGRESSION)} == {"b1", "b2"}
    rounds = Rounds({"b1": 1.10})
    after = confirm(first, rounds, budget_s=300, policy=RulePolicy(), clock=rounds.clock)
    found = {v.name: v for v in after.verdicts}
    assert found["b1"].kind is Kind.REGRESSION and found["b1"].confirmed is True
    assert found["b2"].kind is Kind.UNCHANGED and found["b2"].confirmed is False
    assert "A/B rounds" in found["b2"].note and "no change beyond" in found["b2"].note
    # only the two were measured, and the others kept their verdicts
    assert all(only == name_filter(targets(first)) or "b1" in only or "b2" in only
               for _, only in rounds.calls)
    assert "b0" not in rounds.calls[0][1]
    assert found["b0"] == {v.name: v for v in first.verdicts}["b0"]
    summary = after.to_dict()["confirmation"]
    assert summary["benchmarks"] == 2 and summary["settled"] == 2
    assert 2 <= summary["rounds"] <= 20


def test_a_fluke_the_budget_could_neither_call_nor_clear_is_let_go_early_as_inconclusive():
    # rounds so noisy that the 20 the budget holds could not resolve half of b2's first +10%,
    # and they read nothing: measuring on would only spend the budget
    first = first_look({"b2": 1.10})
    assert {v.name for v in first.of_kind(Kind.REGRESSION)} == {"b2"}
    rounds = Rounds({}, noise=0.08)
    after = confirm(first, rounds, budget_s=300, policy=RulePolicy(), clock=rounds.clock,
                    max_rounds=20)
    b2 = {v.name: v for v in after.verdicts}["b2"]
    assert b2.kind is Kind.INCONCLUSIVE and b2.confirmed is False
    assert re.fullmatch(r"regression on one run; \d+ A/B rounds read [+-]\d+\.\d%, more rounds "
                        r"within the budget could neither call nor clear it", b2.note)
    assert 5 <= len(rounds.calls) < 20
    summary = after.to_dict()["confirmation"]
    assert summary["let_go"] == 1 and summary["settled"] == 0
    assert "1 let go (more rounds would hardly have settled them)" in format_report(after)


def test_a_fluke_the_budget_can_still_clear_is_measured_on_until_cleared():
    # the rounds read nothing from the first quarter on (calling it is futile), yet the rounds
    # the budget holds can resolve half its first +10%: it is measured until cleared
    first = first_look({"b2": 1.10})
    rounds = Rounds({}, noise=0.04)
    after = confirm(first, rounds, budget_s=300, policy=RulePolicy(), clock=rounds.clock,
                    max_rounds=20)
    b2 = {v.name: v for v in after.verdicts}["b2"]
    assert b2.kind is Kind.UNCHANGED and b2.confirmed is False
    assert "no change beyond" in b2.note
    assert 5 < len(rounds.calls) < 20  # past the first quarter, where futility is first asked
    assert after.to_dict()["confirmation"]["let_go"] == 0


def test_a_real_regression_in_noisy_rounds_is_measured_on_not_let_go():
    first = first_look({"b2": 1.10})
    rounds = Rounds({"b2": 1.10}, noise=0.08)
    after = confirm(first, rounds, budget_s=300, policy=RulePolicy(), clock=rounds.clock,
                    max_rounds=20)
    b2 = {v.name: v for v in after.verdicts}["b2"]
    assert b2.kind is Kind.REGRESSION and b2.confirmed is True
    assert after.to_dict()["confirmation"]["let_go"] == 0


def test_rounds_stop_at_the_budget_and_an_unsettled_regression_is_inconclusive():
    first = first_look({"b3": 1.10})
    rounds = Rounds({"b3": 1.02}, seconds_per_round=100.0)  # too little to settle in time
    after = confirm(first, rounds, budget_s=250, policy=RulePolicy(), clock=rounds.clock)
    found = {v.name: v for v in after.verdicts}
    assert len(rounds.calls) == 2  # a third round would pass 250 s
    assert found["b3"].kind in (Kind.INCONCLUSIVE, Kind.UNCHANGED)
    if found["b3"].kind is Kind.INCONCLUSIVE:
        assert "did not settle it within the budget" in found["b3"].note
    assert after.to_dict()["confirmation"]["rounds"] == 2


def test_an_unsettled_regression_says_what_its_rounds_read_and_how_sure():
    first = first_look({"b3": 1.25})
    # three rounds fit the budget, each as noisy as the change is large: nothing settles
    rounds = Rounds({"b3": 1.25}, seconds_per_round=100.0, noise=0.25)
    after = confirm(first, rounds, budget_s=350, policy=RulePolicy(), clock=rounds.clock)
    b3 = {v.name: v for v in after.verdicts}["b3"]
    assert b3.kind is Kind.INCONCLUSIVE and len(rounds.calls) == 3
    said = re.search(r"did not settle it within the budget: they read ([+-][0-9.]+)% "
                     r"\(95% interval ([+-][0-9.]+)% to ([+-][0-9.]+)%\)$", b3.note)
    assert said, b3.note
    read, low, high = (float(x) for x in said.groups())
    assert low < read < high
    assert after.extra["confirmation"].unsettled


def test_a_slowdown_the_noisy_history_hid_is_measured_again_and_found():
    # a busy runner: runs move 8% from one to the next, so one head run cannot call +10%
    first = first_look({"b5": 1.10}, spread=0.08)
    seen = {v.name: v for v in first.verdicts}["b5"]
    assert seen.kind is Kind.UNCHANGED and seen.assessment.detectable > 0.10
    assert leaning(seen)
    rounds = Rounds({"b5": 1.10})
    after = confirm(first, rounds, budget_s=300, policy=RulePolicy(), clock=rounds.clock)
    found = {v.name: v for v in after.verdicts}
    assert found["b5"].kind is Kind.REGRESSION and "A/B rounds" in found["b5"].note
    # the benchmarks that did not lean were left alone
    measured = "".join(only for _, only in rounds.calls)
    for name, verdict in seen_all(first).items():
        if verdict.kind is Kind.UNCHANGED and not leaning(verdict):
            assert f"/{name})" not in measured and f"/{name}|" not in measured
            assert found[name] == verdict


def test_an_unchanged_benchmark_with_a_small_change_seen_does_not_lean():
    quiet = seen_all(first_look({"b5": 1.001}))["b5"]
    assert quiet.kind is Kind.UNCHANGED and not leaning(quiet)
    # an unchanged head on the noisy runner: the rounds stay targeted
    assert len(targets(first_look({}, spread=0.08))) < len(LEVELS) / 2


def test_a_leaning_benchmark_is_settled_only_when_called_and_let_go_when_the_rounds_read_nothing():
    from dataclasses import replace

    from torch_bench.analyze.confirm import futile, settled

    first = seen_all(first_look({"b5": 1.12}, spread=0.08))["b5"]
    assert first.kind is Kind.UNCHANGED and leaning(first)
    seen = first.assessment.relative_ratio - 1
    rounds_saw = replace(first, assessment=replace(first.assessment, ratio=1.0, shift=0.0,
                                                   z=0.0, detectable=0.8 * seen))
    # rounds that could have seen the first change do not settle it...
    assert not settled(first, rounds_saw)
    # ... rounds reading nothing of it let it go, rounds reading much of it do not
    assert futile(first, rounds_saw, 5, 20, RulePolicy())
    reading = replace(rounds_saw, assessment=replace(rounds_saw.assessment, ratio=1.1, z=2.0))
    assert not futile(first, reading, 5, 20, RulePolicy())
    the_other_way = replace(reading, assessment=replace(reading.assessment, ratio=0.9, z=-2.0))
    assert not futile(first, the_other_way, 5, 20, RulePolicy())
    assert not futile(first, rounds_saw, 3, 20, RulePolicy())  # too few rounds to tell
    assert not futile(first, rounds_saw, 20, 20, RulePolicy())  # no rounds left to save
    # an alert is cleared by rounds that could have seen half the change, and never let go
    alert = replace(first, kind=Kind.REGRESSION)
    assert not settled(alert, rounds_saw) and not futile(alert, rounds_saw, 5, 20, RulePolicy())
    assert settled(alert, replace(rounds_saw, assessment=replace(rounds_saw.assessment,
                                                                 detectable=0.4 * seen)))


def confirm_leaning(first_factor: float, true_factor: float, noise: float):
    """b5 leans on a first look against a noisy history (+`first_factor`); rounds of `noise`
    where it is really `true_factor`, 27 s each in a 600 s budget (20 rounds): (first look,
    after confirmation, the rounds)."""
    first = first_look({"b5": first_factor}, spread=0.08)
    assert leaning(seen_all(first)["b5"])
    rounds = Rounds({"b5": true_factor}, seconds_per_round=27.0, noise=noise)
    return first, confirm(first, rounds, budget_s=600, policy=RulePolicy(),
                          clock=rounds.clock), rounds


def test_an_unchanged_leaning_benchmark_is_let_go_after_a_few_rounds_not_the_whole_budget():
    first, after, rounds = confirm_leaning(1.10, 1.0, noise=0.08)
    assert len(rounds.calls) <= 6  # of the 20 the budget holds
    b5 = seen_all(after)["b5"]
    assert b5.kind is Kind.UNCHANGED and b5.assessment == seen_all(first)["b5"].assessment
    assert "would hardly have called a change that size" in b5.note
    assert "could have seen" not in b5.note  # the early looks' resolution, not the answer
    summary = after.to_dict()["confirmation"]
    assert summary["let_go"] == 1 and summary["settled"] == 0
    assert "1 let go" in after.extra["confirmation"].describe()


def test_a_real_change_the_rounds_read_most_of_is_called_not_cleared_as_unchanged():
    # the rounds' resolution reaches the first reading (+13%) while they still read +11%
    # of a real +10%: going on calls it
    _, after, _ = confirm_leaning(1.12, 1.10, noise=0.08)
    assert seen_all(after)["b5"].kind is Kind.REGRESSION


def test_a_real_change_below_the_minimum_effect_is_let_go_not_measured_to_the_budget():
    # quiet rounds read a real +1.5%: they will never call it (the minimum effect is 2%)
    _, after, rounds = confirm_leaning(1.12, 1.015, noise=0.005)
    assert len(rounds.calls) <= 6
    assert seen_all(after)["b5"].kind is Kind.UNCHANGED
    assert after.to_dict()["confirmation"]["let_go"] == 1


def test_a_real_change_the_other_way_than_the_first_reading_is_called_not_let_go():
    # the first run leaned +12%; the code is really 10% faster
    _, after, _ = confirm_leaning(1.12, 0.90, noise=0.08)
    assert seen_all(after)["b5"].kind is Kind.IMPROVEMENT


def test_a_leaning_benchmark_the_rounds_do_not_settle_stays_unchanged_and_says_what_they_read():
    first = first_look({"b5": 1.12}, spread=0.08)
    # two noisy rounds fit in the budget
    rounds = Rounds({"b5": 1.06}, seconds_per_round=100.0, noise=0.05)
    after = seen_all(confirm(first, rounds, budget_s=250, policy=RulePolicy(),
                             clock=rounds.clock))
    assert len(rounds.calls) == 2
    assert after["b5"].kind is Kind.UNCHANGED
    assert after["b5"].assessment == seen_all(first)["b5"].assessment
    assert "2 A/B rounds read +" in after["b5"].note
    assert "not settled within the budget" in after["b5"].note


def seen_all(comparison):
    return {v.name: v for v in comparison.verdicts}


def test_the_looks_are_counted_over_the_rounds_the_budget_holds():
    from torch_bench.analyze.confirm import MAX_ROUNDS, rounds_the_budget_holds

    assert rounds_the_budget_holds(600, 27, MAX_ROUNDS) == 20
    assert rounds_the_budget_holds(600, 45, MAX_ROUNDS) == 13
    assert rounds_the_budget_holds(100, 90, MAX_ROUNDS) == 2  # rounds judge from two on
    # A budget that holds more rounds than a fixed 8 uses them: a real +8% hidden by an 8%
    # run-to-run history, measured with 8% noise a round, is found within 20 rounds...
    first = first_look({"b5": 1.08}, spread=0.08)
    rounds = Rounds({"b5": 1.08}, seconds_per_round=27.0, noise=0.08)
    after = seen_all(confirm(first, rounds, budget_s=600, policy=RulePolicy(),
                             clock=rounds.clock))
    assert after["b5"].kind is Kind.REGRESSION
    assert 8 < len(rounds.calls) <= 20
    # ... and a cap on the rounds is kept
    rounds = Rounds({"b5": 1.08}, seconds_per_round=27.0, noise=0.08)
    confirm(first, rounds, budget_s=600, policy=RulePolicy(), clock=rounds.clock, max_rounds=8)
    assert len(rounds.calls) <= 8


def test_the_last_looks_are_judged_near_the_plain_rate():
    # 8 rounds of 8% noise: with each look at 1% / 7 (Bonferroni over the looks), a real +9%
    # stays unchanged ("read +10.9%, could have seen ±12.2%"); the levels that keep the rate
    # for the last rounds call it at the sixth.
    from torch_bench.analyze.confirm import look_policy

    first = first_look({"b5": 1.08}, spread=0.08)
    rounds = Rounds({"b5": 1.09}, seconds_per_round=27.0, noise=0.08)
    capped = seen_all(confirm(first, rounds, budget_s=600, policy=RulePolicy(),
                              clock=rounds.clock, max_rounds=8))
    assert capped["b5"].kind is Kind.REGRESSION and len(rounds.calls) < 8
    # A +8% the 8 rounds do not settle: what they could have seen is finer (±12.2% before)
    rounds = Rounds({"b5": 1.08}, seconds_per_round=27.0, noise=0.08)
    unsettled = seen_all(confirm(first, rounds, budget_s=600, policy=RulePolicy(),
                                 clock=rounds.clock, max_rounds=8))

    seen = re.search(r"could have seen ±([\d.]+)%", unsettled["b5"].note)
    assert seen and float(seen.group(1)) < 11.0
    assert look_policy(RulePolicy(), 8, 8).alpha > 3 * RulePolicy().alpha / 7
    assert look_policy(RulePolicy(), 2, 8).alpha < RulePolicy().alpha / 7


def test_nothing_to_confirm_measures_nothing():
    first = first_look({})
    rounds = Rounds({})
    assert confirm(first, rounds, budget_s=300, policy=RulePolicy(),
                   clock=rounds.clock) is first
    assert rounds.calls == []


EVERYTHING = dict.fromkeys(LEVELS)


def test_a_head_run_that_was_a_burst_as_a_whole_is_cleared_by_the_rounds():
    # the head's one run was 20% slower as a whole (a neighbour on the runner), the code not
    first = first_look(dict.fromkeys(EVERYTHING, 1.20))
    assert first.run_shift.outcome is Outcome.WORSE and first.has_regression
    rounds = Rounds({})
    after = confirm(first, rounds, budget_s=300, policy=RulePolicy(), clock=rounds.clock)
    assert after.run_shift.outcome is Outcome.UNSURE and after.run_shift.confirmed is False
    assert not after.has_regression
    assert after.run_shift.reason.endswith("the head's runs moved, not the code")
    assert "no change beyond" in after.run_shift.reason
    # the rounds measured enough timings to take a run shift, and stopped once it was clear
    assert sum(f"demo/{n}" in rounds.calls[0][1].replace("\\", "")
               for n in LEVELS) >= MIN_BENCHMARKS
    assert 2 <= len(rounds.calls) < 20
    summary = after.to_dict()["confirmation"]
    assert summary["whole_run"] == "cleared"
    assert after.to_dict()["run_shift"]["verdict"] == "unsure"
    report = format_report(after)
    assert "so it is not flagged" in report and "whole run" not in report.splitlines()[0]
    assert "the whole run's shift cleared" in report


def test_a_real_slowdown_of_the_whole_suite_is_confirmed_and_still_flagged():
    first = first_look(dict.fromkeys(EVERYTHING, 1.10))
    assert first.run_shift.outcome is Outcome.WORSE
    rounds = Rounds(dict.fromkeys(EVERYTHING, 1.10))
    after = confirm(first, rounds, budget_s=300, policy=RulePolicy(), clock=rounds.clock)
    assert after.run_shift.outcome is Outcome.WORSE and after.run_shift.confirmed is True
    assert after.has_regression
    assert after.run_shift.reason.startswith("confirmed: ") \
        and "A/B rounds with the base read +10." in after.run_shift.reason
    assert after.to_dict()["confirmation"]["whole_run"] == "confirmed"
    assert "confirmed: " in format_report(after)


def test_a_whole_run_shift_the_budget_cannot_settle_is_not_flagged():
    first = first_look(dict.fromkeys(EVERYTHING, 1.20))
    rounds = Rounds(dict.fromkeys(EVERYTHING, 1.20), seconds_per_round=100.0, noise=0.4)
    after = confirm(first, rounds, budget_s=250, policy=RulePolicy(), clock=rounds.clock)
    assert len(rounds.calls) == 2
    assert after.run_shift.outcome is Outcome.UNSURE and not after.has_regression
    assert "did not settle it within the budget" in after.run_shift.reason
    assert after.to_dict()["confirmation"]["whole_run"] == "not settled"


def test_the_whole_run_is_re_measured_on_timings_that_did_not_move_away_from_it():
    # a burst slowed the head's run 20% as a whole, and b1's code really is 30% slower: b1 is
    # re-measured for itself, and the run's shift on the others alone, the same every round
    first = first_look({n: 1.20 * (1.30 if n == "b1" else 1.0) for n in EVERYTHING})
    assert first.run_shift.outcome is Outcome.WORSE
    assert "b1" in {v.name for v in targets(first)}
    witnesses = shift_witnesses(first, targets(first))
    assert "b1" not in {v.name for v in witnesses} and len(witnesses) >= MIN_BENCHMARKS
    rounds = Rounds({"b1": 1.30})
    after = confirm(first, rounds, budget_s=300, policy=RulePolicy(), clock=rounds.clock)
    assert after.run_shift.outcome is Outcome.UNSURE and after.run_shift.confirmed is False
    found = {v.name: v for v in after.verdicts}
    assert found["b1"].kind is Kind.REGRESSION
    assert found["b1"].assessment.relative_ratio == pytest.approx(1.30, abs=0.03)
    settled_at = int(after.run_shift.reason.split()[0])
    assert all(f"demo/{w.name}" in only for _, only in rounds.calls[:settled_at]
               for w in witnesses)
    assert after.to_dict()["confirmation"]["shift_timings"] == len(witnesses)


class UntrustedHeads(Rounds):
    def __call__(self, index: int, only: str):
        base, head = super().__call__(index, only)
        return base, untrusted(head)


def test_rounds_whose_head_failed_its_pre_flight_check_do_not_clear_the_whole_run():
    first = first_look(dict.fromkeys(EVERYTHING, 1.20))
    rounds = UntrustedHeads({})
    after = confirm(first, rounds, budget_s=100, policy=RulePolicy(), clock=rounds.clock)
    assert after.to_dict()["confirmation"]["whole_run"] == "not settled"
    assert "did not settle it within the budget" in after.run_shift.reason


def test_a_whole_run_within_history_is_not_re_measured():
    first = first_look({"b1": 1.10})
    assert first.run_shift.outcome not in (Outcome.WORSE, Outcome.BETTER)
    assert shift_witnesses(first, targets(first)) == []


HOST_STATES = (1.00, 1.07, 0.94, 1.05, 0.95)  # five runs of history on hosts of a noisy fleet


def on_a_noisy_fleet(head_factor: float):
    """A head run whose every timing is `head_factor` slower, against 5 runs of history
    each moved as a whole by its host (`HOST_STATES`): the run-level shifts' spread is
    learned from 4 degrees of freedom, and the whole run's test cannot call a 10% move."""
    runs = [make_run([ok(n, m * state * (1 + 0.002 * ((i + j) % 3)), seed=500 + 10 * i + j)
                      for j, (n, m) in enumerate(LEVELS.items())],
                     sha=f"{i:040x}", created_at=f"2025-12-{1 + i:02d}T00:00:00Z",
                     run_id=f"hist-{i}")
            for i, state in enumerate(HOST_STATES)]
    head = make_run([ok(n, m * head_factor, seed=600 + j)
                     for j, (n, m) in enumerate(LEVELS.items())], sha="b" * 40, run_id="head")
    return compare_runs(runs[-1:], [head], runs)


def test_a_whole_suite_slowdown_one_run_could_not_call_is_found_by_the_rounds():
    first = on_a_noisy_fleet(1.10)
    shift = first.run_shift
    assert shift.outcome is Outcome.UNSURE and not first.has_regression
    assert leaning_shift(shift, RulePolicy().min_effect) and shift.detectable > 0.2
    assert len(shift_witnesses(first, targets(first))) >= MIN_BENCHMARKS
    rounds = Rounds(dict.fromkeys(EVERYTHING, 1.10))
    after = confirm(first, rounds, budget_s=300, policy=RulePolicy(), clock=rounds.clock)
    shift = after.run_shift
    assert shift.outcome is Outcome.WORSE and after.has_regression
    assert shift.ratio == pytest.approx(1.10, abs=0.02) and shift.found_in_rounds >= 2
    assert shift.reason.startswith(f"found by {shift.found_in_rounds} A/B rounds with the base")
    assert re.search(r"; one head run read \+(9|10)\.\d%, within the run-level shifts seen in "
                     "history$", shift.reason)
    assert len(rounds.calls) == shift.found_in_rounds < 30
    assert after.to_dict()["confirmation"]["whole_run"] == "found"
    report = format_report(after)
    assert report.splitlines()[0].count("whole run 10.") == 1
    assert "**Run-level regression: the whole run is 10." in report


def test_a_leaning_whole_run_the_rounds_read_nothing_in_is_let_go_unflagged():
    first = on_a_noisy_fleet(1.10)  # a slower host on the head's run, the code unchanged
    rounds = Rounds({})
    after = confirm(first, rounds, budget_s=300, policy=RulePolicy(), clock=rounds.clock)
    assert after.run_shift.outcome is Outcome.UNSURE and not after.has_regression
    assert after.run_shift.reason.endswith(
        "more rounds within the budget would hardly have called a move that size")
    assert after.run_shift.reason.startswith("within the run-level shifts seen in history; ")
    assert after.to_dict()["confirmation"]["whole_run"] == "let go"
    assert len(rounds.calls) < 30  # the 300 s budget holds 30 rounds of 10 s


def test_a_whole_run_that_moved_little_or_well_within_its_resolution_does_not_lean():
    first = on_a_noisy_fleet(1.01)
    shift = first.run_shift
    assert abs(shift.ratio - 1) < RulePolicy().min_effect and shift.detectable is not None
    assert not leaning_shift(shift, RulePolicy().min_effect)
    assert shift_witnesses(first, targets(first)) == []
    # above the minimum effect, but under a third of what the test could have seen
    first = on_a_noisy_fleet(1.05)
    shift = first.run_shift
    assert RulePolicy().min_effect < shift.ratio - 1 < shift.detectable / 3
    assert not leaning_shift(shift, RulePolicy().min_effect)
    assert shift_witnesses(first, targets(first)) == []


def test_a_leaning_whole_run_the_rounds_find_faster_is_an_improvement_not_a_failure():
    first = on_a_noisy_fleet(1.10)  # a slower host on the head's run; the code is faster
    rounds = Rounds(dict.fromkeys(EVERYTHING, 0.90))
    after = confirm(first, rounds, budget_s=300, policy=RulePolicy(), clock=rounds.clock)
    assert after.run_shift.outcome is Outcome.BETTER and not after.has_regression
    assert after.run_shift.found_in_rounds >= 2
    headline = format_report(after).splitlines()[0]
    assert re.search(r"whole run \d+\.\d% faster", headline) and "regression" not in headline


def test_a_whole_run_s_rounds_are_judged_at_its_share_of_a_small_per_pr_level():
    # per-PR level 1% with a 1% false-alarm rate: the whole run's share is 0.5%, and rounds
    # that re-measure a leaning run (a fresh test) must not spend more than that
    found = {}
    for level in (0.05, 0.01):
        policy = RulePolicy(fdr=level)
        first = on_a_noisy_fleet(1.10)
        rounds = Rounds(dict.fromkeys(EVERYTHING, 1.10))
        after = confirm(first, rounds, budget_s=300, policy=policy, clock=rounds.clock)
        found[level] = after.run_shift
        assert after.run_shift.outcome is Outcome.WORSE
    assert found[0.05].found_in_rounds == found[0.01].found_in_rounds
    assert found[0.01].threshold > found[0.05].threshold


@pytest.mark.slow
def test_compare_confirms_with_real_checkouts(cli, tmp_path):
    checkout(tmp_path / "base", {"same": 1.0, "slow": 1.0})
    checkout(tmp_path / "head", {"same": 1.0, "slow": 1.3})
    head = cli("run", "--suite", "abwork.suite", "--no-preflight", "--processes", "1",
               "--out", "head.json", env={"PYTHONPATH": str(tmp_path / "head")})
    assert head.returncode == 0, head.stderr
    base = cli("run", "--suite", "abwork.suite", "--no-preflight", "--processes", "1",
               "--out", "base.json", env={"PYTHONPATH": str(tmp_path / "base")})
    assert base.returncode == 0, base.stderr
    data = json.loads((tmp_path / "base.json").read_text())
    done = cli("compare", "base.json", "head.json", "--confirm-base", "base",
               "--confirm-head", "head", "--confirm-budget", "3600", "--confirm-max-rounds", "4",
               "--confirm-run-args", "--suite abwork.suite --no-preflight",
               "--json", "v.json", "--no-github")
    assert done.returncode == 0, done.stderr
    result = json.loads((tmp_path / "v.json").read_text())
    verdicts = {v["name"]: v for v in result["verdicts"]}
    # one base run teaches no noise: both are undecided, the rounds decide
    assert verdicts["slow"]["verdict"] == "regression"
    assert verdicts["same"]["verdict"] == "unchanged"
    assert result["confirmation"]["benchmarks"] >= 1 and data["results"]
    assert "confirmation round 2" in done.stderr


@pytest.mark.slow
def test_an_unsettled_confirmation_keeps_its_rounds_documents_beside_the_report(cli, tmp_path):
    checkout(tmp_path / "base", {"same": 1.0, "slow": 1.0})
    checkout(tmp_path / "head", {"same": 1.0, "slow": 1.3})
    for side in ("base", "head"):
        done = cli("run", "--suite", "abwork.suite", "--no-preflight", "--processes", "1",
                   "--out", f"{side}.json", env={"PYTHONPATH": str(tmp_path / side)})
        assert done.returncode == 0, done.stderr
    (tmp_path / "out").mkdir()
    # a budget one round overruns: the rounds cannot settle anything
    done = cli("compare", "base.json", "head.json", "--confirm-base", "base",
               "--confirm-head", "head", "--confirm-budget", "0.5",
               "--confirm-run-args", "--suite abwork.suite --no-preflight",
               "--json", "out/v.json", "--no-github")
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "out" / "v.json").read_text())["confirmation"]
    kept = Path(summary["documents"])
    assert kept.parent == tmp_path / "out" and kept.name.startswith("confirmation-rounds-")
    assert {"base-confirm-round1.json", "head-confirm-round1.json"} <= \
        {p.name for p in kept.iterdir()}
    assert f"the rounds' run documents are in {kept}" in done.stderr


def test_many_targets_share_the_per_pr_level_so_an_unchanged_pr_fails_at_most_at_it():
    from torch_bench.analyze.confirm import target_policy

    # each target the rounds call fails the PR: 80 targets at 1% each would fail ~55% of
    # unchanged PRs; the benchmarks' share of the per-PR level (4%) is split among them
    assert target_policy(RulePolicy(), 3).alpha == RulePolicy().alpha
    assert target_policy(RulePolicy(), 80).alpha == pytest.approx(0.04 / 80)
    assert target_policy(RulePolicy(fdr=1.0), 80).alpha == RulePolicy().alpha  # no correction
    moved = {n: 1.12 if i % 2 else 0.89 for i, n in enumerate(LEVELS)}  # the run did not
    first = first_look(moved, spread=0.08)
    assert len(targets(first)) == len(LEVELS)
    rounds = Rounds({}, seconds_per_round=27.0, noise=0.02)
    after = confirm(first, rounds, budget_s=600, policy=RulePolicy(), clock=rounds.clock)
    summary = after.extra["confirmation"]
    assert summary.to_dict()["rate"] == pytest.approx(0.04 / len(LEVELS))
    assert f"the per-PR level split among {len(LEVELS)}" in summary.describe()
    assert not after.of_kind(Kind.REGRESSION)
