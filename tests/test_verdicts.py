"""Every verdict kind, from run documents built in code."""

from __future__ import annotations

import re

import pytest

from support.runs import BASE_ENV, bad, history, make_run, ok, untrusted, where_p_is
from torch_bench.analyze.rule import DEFAULT_POLICY, Outcome, RulePolicy
from torch_bench.analyze.verdicts import Kind, compare_runs, confirm_regressions
from torch_bench.report.actions import step_outputs, warning_annotations
from torch_bench.report.markdown import ReportContext, format_report
from torch_bench.results.schema import measured

HISTORY = history(20, {"steady": 10, "slower": 10, "faster": 10, "noisy": 10, "tput": 100})


def verdicts_by_name(comparison):
    return {v.name: v for v in comparison.verdicts}


def test_every_kind_from_one_comparison():
    base = make_run([ok("steady", 10, seed=1), ok("slower", 10, seed=2), ok("faster", 10, seed=3),
                     ok("gone", 5, seed=4), ok("breaks", 5, seed=5), bad("heals", "error"),
                     ok("noisy", 10, seed=6, cv=0.6, n=8),
                     ok("tput", 100, metric="throughput", seed=7),
                     ok("wrong", 0.9, metric="accuracy", status="pass"), bad("skip", "skipped")])
    head = make_run([ok("steady", 10, seed=11), ok("slower", 11.5, seed=12),
                     ok("faster", 8, seed=13), ok("fresh", 5, seed=14),
                     bad("breaks", "timeout", error="took too long"), ok("heals", 3, seed=15),
                     ok("noisy", 12, seed=16, cv=0.6, n=8),
                     ok("tput", 80, metric="throughput", seed=17),
                     bad("wrong", "fail_accuracy", metric="accuracy"), ok("skip", 1, seed=18)],
                    sha="b" * 40)
    found = verdicts_by_name(compare_runs([base], [head], HISTORY))
    assert {name: v.kind for name, v in found.items()} == {
        "steady": Kind.UNCHANGED, "slower": Kind.REGRESSION, "faster": Kind.IMPROVEMENT,
        "gone": Kind.REMOVED, "fresh": Kind.NEW, "breaks": Kind.NEWLY_FAILING,
        "heals": Kind.FIXED, "noisy": Kind.UNCHANGED, "tput": Kind.INCONCLUSIVE,
        "wrong": Kind.NEWLY_FAILING, "skip": Kind.INCONCLUSIVE,
    }
    assert found["breaks"].note == "took too long"
    assert (found["wrong"].base_status, found["wrong"].head_status) == ("pass", "fail_accuracy")
    assert found["slower"].assessment.history_runs == 20
    # no throughput in the history: a 20% drop, but the run-to-run noise is unknown
    assert found["tput"].note == "not enough history (1 runs; 3 needed)"
    # a head run far noisier inside than history's runs is judged by its own noise: +20% is
    # within what it could have seen, and the verdict says how much that is
    assert found["noisy"].assessment.detectable > 0.25


def test_a_different_environment_is_not_comparable_and_names_the_versions():
    base = make_run([ok("steady", 10, seed=1), ok("slower", 10, seed=2)])
    newer = {**BASE_ENV, "torch": "2.14.0", "fingerprint": "fp-test-0002"}
    head = make_run([ok("steady", 10, seed=11), ok("slower", 12, seed=12)], env=newer)
    comparison = compare_runs([base], [head], HISTORY)
    assert {v.kind for v in comparison.verdicts} == {Kind.NOT_COMPARABLE}
    assert [(d.field, d.base, d.head) for d in comparison.environment] == [
        ("torch", "2.13.0", "2.14.0")]
    forced = compare_runs([base], [head], HISTORY, ignore_environment=True)
    assert verdicts_by_name(forced)["slower"].kind is Kind.REGRESSION


def test_several_runs_a_side_are_pooled():
    base = [make_run([ok("slower", 10, seed=s)], run_id=f"b{s}") for s in (1, 2, 3)]
    head = [make_run([ok("slower", 10.4, seed=s)], run_id=f"h{s}") for s in (4, 5, 6)]
    wide = history(20, {"slower": 10}, spread=0.012)
    single = compare_runs(base[:1], head[:1], wide).verdicts[0]
    pooled = compare_runs(base, head, wide).verdicts[0]
    assert pooled.assessment.z > single.assessment.z * 1.5
    assert pooled.kind is Kind.REGRESSION


def test_a_re_run_confirms_a_real_regression_and_clears_a_fluke():
    base = make_run([ok("slower", 10, seed=2), ok("fluke", 10, seed=3)])
    head = make_run([ok("slower", 11.5, seed=12), ok("fluke", 11.5, seed=13)], sha="b" * 40)
    comparison = compare_runs([base], [head], history(20, {"slower": 10, "fluke": 10}))
    assert {v.kind for v in comparison.verdicts} == {Kind.REGRESSION}
    rerun = make_run([ok("slower", 11.6, seed=22), ok("fluke", 10.05, seed=23)], sha="b" * 40)
    confirmed = verdicts_by_name(confirm_regressions(comparison, [rerun]))
    assert confirmed["slower"].kind is Kind.REGRESSION and confirmed["slower"].confirmed
    assert confirmed["fluke"].kind is Kind.INCONCLUSIVE
    assert confirmed["fluke"].confirmed is False
    # what the re-run read, and how sure, tells a reader why it was not confirmed
    assert re.fullmatch(r"not confirmed by the re-run: it read \+0\.\d% \(95% interval "
                        r"-\d\.\d% to \+\d\.\d%\)", confirmed["fluke"].note), \
        confirmed["fluke"].note


def test_json_verdicts_carry_the_numbers():
    base = make_run([ok("slower", 10, seed=2)])
    head = make_run([ok("slower", 11.5, seed=12)], sha="b" * 40)
    data = compare_runs([base], [head], HISTORY).to_dict()
    assert data["counts"]["regression"] == 1
    entry = data["verdicts"][0]
    assert entry["verdict"] == "regression" and entry["benchmark_id"] == "demo/slower[]:latency"
    assert 1.1 < entry["ratio"] < 1.2 and entry["history_runs"] == 20


def test_an_untrusted_head_is_never_alerted_on():
    base = make_run([ok("slower", 10, seed=2), ok("faster", 10, seed=3), ok("breaks", 5, seed=5),
                     ok("steady", 10, seed=1)])
    head = untrusted(make_run([ok("slower", 11.5, seed=12), ok("faster", 8, seed=13),
                               bad("breaks", "oom"), ok("steady", 10, seed=11)],
                              sha="b" * 40))
    comparison = compare_runs([base], [head], HISTORY)
    found = verdicts_by_name(comparison)
    assert {name: v.kind for name, v in found.items()} == {
        "slower": Kind.INCONCLUSIVE, "faster": Kind.INCONCLUSIVE, "breaks": Kind.INCONCLUSIVE,
        "steady": Kind.UNCHANGED}
    assert found["slower"].note == "pre-flight check failed (measured as regression)"
    assert found["breaks"].note == "pre-flight check failed (measured as newly failing: ok -> oom)"
    assert found["slower"].assessment.ratio > 1.1  # the numbers are still shown
    assert comparison.untrusted_sides == ("head",) and not comparison.has_regression
    assert warning_annotations(comparison) == []
    assert step_outputs(comparison)["has-regression"] == "false"
    assert "pre-flight check failed on the head" in format_report(comparison, ReportContext())
    assert confirm_regressions(comparison, [make_run([ok("slower", 12, seed=9)])]) is comparison


def test_untrusted_runs_are_left_out_of_a_side_that_has_trusted_ones():
    base = [make_run([ok("x", 10, seed=1)], run_id="b1"),
            untrusted(make_run([ok("x", 7, seed=2)], run_id="b2"))]
    head = [make_run([ok("x", 10, seed=3)], run_id="h1"),
            untrusted(make_run([ok("x", 15, seed=4)], run_id="h2"))]
    comparison = compare_runs(base, head, history(20, {"x": 10}))
    assert [v.kind for v in comparison.verdicts] == [Kind.UNCHANGED]
    assert comparison.left_out == ("b2", "h2") and comparison.untrusted_sides == ()
    assert [r.run_id for r in comparison.base_runs] == ["b1"]


def test_untrusted_history_runs_do_not_teach_the_noise():
    quiet = history(20, {"slower": 10}, spread=0.01)
    wild = [untrusted(run) for run in history(30, {"slower": 10}, spread=0.5, seed=7)]
    base = make_run([ok("slower", 10, seed=2)])
    head = make_run([ok("slower", 11.5, seed=12)], sha="b" * 40)
    clean = compare_runs([base], [head], quiet).verdicts[0]
    mixed = compare_runs([base], [head], [*quiet, *wild]).verdicts[0]  # wild ones newest
    assert mixed.assessment.history_runs == 20
    assert mixed.assessment.noise == clean.assessment.noise
    assert mixed.kind is Kind.REGRESSION


def with_extra(result, **extra):
    from dataclasses import replace

    return replace(result, extra={**result.extra, **extra})


def test_a_change_of_calls_per_sample_is_an_environment_change():
    base = make_run([with_extra(ok("slower", 10, seed=2), loops=4),
                     with_extra(ok("steady", 10, seed=1), loops=6)])
    head = make_run([with_extra(ok("slower", 12, seed=12), loops=8),
                     with_extra(ok("steady", 10, seed=11), loops=6)], sha="b" * 40)
    found = verdicts_by_name(compare_runs([base], [head], HISTORY))
    assert found["slower"].kind is Kind.NOT_COMPARABLE
    assert found["slower"].note == "calls per sample differ (base 4, head 8)"
    assert found["steady"].kind is Kind.UNCHANGED


def contended(name, median, seed):
    """A CPU-clock result whose samples show contention: every fifth block was interrupted by
    another process and took 1.5 times as long."""
    plain = ok(name, median, seed=seed)
    switches = [1 if i % 5 == 0 else 0 for i in range(len(plain.samples))]
    slowed = [s * 1.5 if n else s for s, n in zip(plain.samples, switches, strict=True)]
    return measured(plain.suite, name, plain.metric, slowed,
                    extra={"clock": "cpu", "involuntary_switches": switches,
                           "interrupted_share": 0.2})


def test_a_head_run_whose_samples_show_contention_is_not_called_a_regression():
    head = make_run([contended("slower", 11.5, seed=12), ok("steady", 10, seed=11)],
                    sha="b" * 40)
    found = verdicts_by_name(compare_runs([HISTORY[-1]], [head], HISTORY))
    assert found["slower"].kind is Kind.INCONCLUSIVE
    assert found["slower"].note.startswith("measured as regression, but the head's 20% of its "
                                           "samples were interrupted by other processes")


def test_ab_rounds_under_a_steady_neighbour_call_a_real_change_though_both_sides_show_it():
    # Interleaved rounds have the same neighbours on both sides: contention both show is part
    # of the rounds' spread, not a reason to doubt every call; the slower side's alone is.
    def rounds(side, factor, seed, busy=True):
        timed = contended if busy else (lambda name, median, seed: ok(name, median, seed=seed))
        return [make_run([timed("slower", 10 * factor, seed + i),
                          timed("steady", 10, seed + 50 + i)],
                         sha=("a" if side == "base" else "b") * 40, run_id=f"{side}-{i}",
                         created_at=f"2026-01-01T00:{i:02d}:00Z")
                for i in range(5)]

    found = verdicts_by_name(compare_runs(rounds("base", 1.0, 300), rounds("head", 1.1, 400),
                                          side_by_side=True))
    assert found["slower"].kind is Kind.REGRESSION
    assert found["slower"].assessment.relative_ratio == pytest.approx(1.1, rel=0.02)
    assert found["steady"].kind is Kind.UNCHANGED
    lopsided = verdicts_by_name(compare_runs(rounds("base", 1.0, 300, busy=False),
                                             rounds("head", 1.1, 400), side_by_side=True))
    assert lopsided["slower"].kind is Kind.INCONCLUSIVE
    assert lopsided["slower"].note.startswith("measured as regression, but the head's 20%")


def test_a_clear_change_needs_no_within_run_test_of_the_processes():
    sizes = [15] * 4
    base = make_run([with_extra(ok("slower", 10, seed=2), process_sizes=sizes)])
    head = make_run([with_extra(ok("slower", 11.5, seed=12), process_sizes=sizes)],
                    sha="b" * 40)
    [verdict] = compare_runs([base], [head], HISTORY).verdicts
    assert verdict.kind is Kind.REGRESSION  # 15% against 1% run-to-run noise


SUITE = {f"b{i}": 1.0 + i for i in range(8)}


def shared_history(n, host_spread, seed=500):
    """`n` base-branch runs of SUITE whose timings move together by `host_spread` (log sd)
    from run to run, each also by 0.5% on its own."""
    import numpy as np

    rng = np.random.default_rng(seed)
    runs = []
    for i in range(n):
        host = float(np.exp(rng.normal(0, host_spread)))
        results = [ok(name, m * host * float(np.exp(rng.normal(0, 0.005))), seed=seed + 10 * i + j)
                   for j, (name, m) in enumerate(SUITE.items())]
        runs.append(make_run(results, sha=f"{i:040x}", created_at=f"2025-12-{1 + i:02d}T00:00:00Z",
                             run_id=f"shared-{i:03d}"))
    return runs


def suite_pair(factor, slower=None):
    base = make_run([ok(n, m, seed=60 + j) for j, (n, m) in enumerate(SUITE.items())])
    head = make_run([ok(n, m * factor * (1.2 if n == slower else 1.0), seed=80 + j)
                     for j, (n, m) in enumerate(SUITE.items())], sha="b" * 40)
    return [base], [head]


def test_a_slower_host_is_one_shift_not_a_wall_of_regressions():
    base, head = suite_pair(1.08)
    comparison = compare_runs(base, head, shared_history(12, host_spread=0.04))
    assert {v.kind for v in comparison.verdicts} == {Kind.UNCHANGED}
    shift = comparison.run_shift  # against the level of 13 runs whose host moves by 4%
    assert shift.ratio == pytest.approx(1.08, rel=0.04) and shift.benchmarks == 8
    assert shift.outcome is Outcome.UNSURE
    assert not comparison.has_regression
    report = format_report(comparison)
    assert f"Run-level shift: the whole run is {(shift.ratio - 1) * 100:.1f}% slower than its " \
           "baseline" in report
    assert "within the run-level shifts seen in history" in report


def test_a_real_global_slowdown_is_reported_once():
    base, head = suite_pair(1.10)
    comparison = compare_runs(base, head, shared_history(12, host_spread=0.005))
    assert {v.kind for v in comparison.verdicts} == {Kind.UNCHANGED}
    assert comparison.run_shift.outcome is Outcome.WORSE and comparison.has_regression
    assert comparison.to_dict()["run_shift"]["verdict"] == "worse"
    report = format_report(comparison)
    said = f"{(comparison.run_shift.ratio - 1) * 100:.1f}% slower"
    assert comparison.run_shift.ratio == pytest.approx(1.10, rel=0.01)
    # the benchmarks, each judged relative to the whole run, said to be so
    assert re.match(rf"### torch-bench: whole run {said}; no change beyond ±\d+\.\d% in 8 "
                    r"benchmarks relative to the run&#39;s shift\n", report)
    assert report.count(said) == 2  # the headline and its line, nothing per benchmark


def one_slowed(factor, name="b3", seed=80):
    return make_run([ok(n, m * (factor if n == name else 1.0), seed=seed + j)
                     for j, (n, m) in enumerate(SUITE.items())], sha="b" * 40)


BETWEEN_THE_LIMITS = 0.05 * 0.9 / 8  # BH's first limit over 8 tests at 4% and 5% around it


def test_the_whole_run_takes_its_share_of_the_per_pr_level_from_the_benchmarks():
    """The whole run's test (at 1%) and the benchmarks' Benjamini-Hochberg family share the
    per-PR level (5%): the family gets 4%, so that together they name a false regression on
    an unchanged PR at most 5% of the time. A benchmark whose p lies between the first
    discovery's limits at 4% and at 5% (of 8) is a regression only where the whole run is
    not tested beside it."""
    runs = history(12, SUITE, spread=0.02)
    base, _ = suite_pair(1.0)

    def compared(factor, apart):
        return compare_runs(base, [one_slowed(factor)], runs, whole_run_apart=apart)

    def p_of(factor):
        return verdicts_by_name(compared(factor, True))["b3"].assessment.p_value

    factor = where_p_is(p_of, BETWEEN_THE_LIMITS)
    apart, shared = compared(factor, True), compared(factor, False)
    assert 0.05 * 0.8 / 8 < p_of(factor) < 0.05 / 8 and factor - 1 > 0.02
    assert verdicts_by_name(apart)["b3"].kind is Kind.REGRESSION
    assert shared.run_shift is not None and shared.run_shift.benchmarks == 8
    verdict = verdicts_by_name(shared)["b3"]
    assert verdict.kind is Kind.INCONCLUSIVE
    assert "at the benchmarks' share (0.04) of the per-PR level (0.05)" \
        in verdict.assessment.reason
    assert not shared.has_regression
    assert "the whole run's test takes 1% of it" in format_report(shared)

    # A re-run of the flagged benchmarks settles them, not the report: the whole level.
    rerun = confirm_regressions(apart, [one_slowed(factor)])
    assert verdicts_by_name(rerun)["b3"].confirmed is True


def test_a_whole_run_above_its_share_says_so_where_the_share_is_below_the_rate():
    """With a per-PR level under twice the false-alarm rate the whole run's share is half the
    level: a shift with p between the two is not flagged, and the report says why."""
    runs = shared_history(12, host_spread=0.02)

    def compared(factor, policy=DEFAULT_POLICY):
        return compare_runs(*suite_pair(factor), runs, policy=policy)

    # the smallest whole-suite slowdown called at the rate: its p just under 1%
    factor = where_p_is(lambda f: float(compared(f).run_shift.outcome is not Outcome.WORSE),
                        0.5)
    assert compared(factor).run_shift.outcome is Outcome.WORSE
    shift = compared(factor, RulePolicy(alpha=0.01, fdr=0.01)).run_shift
    assert shift.outcome is Outcome.UNSURE and shift.ratio > 1.02
    assert "not below the whole run's share of the per-PR level (0.005)" in shift.reason


def test_a_per_pr_level_of_1_leaves_the_benchmarks_uncorrected_beside_the_whole_run():
    assert RulePolicy(fdr=1.0).family_level(beside_whole_run=True) == 1.0
    assert RulePolicy(fdr=0.05).family_level(beside_whole_run=True) == pytest.approx(0.04)


def wandering_runs(first, count, factor=1.0, branch="main", period=28):
    """Runs `first` to `first + count - 1` of SUITE on a machine whose state carries over
    from run to run: the whole suite follows a slow wave of 5% (and 1% of its own), so
    consecutive runs sit close together and the head's runs, one after another, can sit
    together at a crest the history never reached."""
    import math

    import numpy as np

    rng = np.random.default_rng(first)
    runs = []
    for i in range(first, first + count):
        state = factor * math.exp(0.05 * math.sin(2 * math.pi * i / period))
        results = [ok(name, m * state * float(np.exp(rng.normal(0, 0.01))), seed=100 * i + j)
                   for j, (name, m) in enumerate(SUITE.items())]
        runs.append(make_run(results, sha=f"{i:040x}", branch=branch, run_id=f"{branch}-{i}",
                             created_at=f"2025-12-{1 + i:02d}T00:00:00Z"))
    return runs


def test_a_run_shift_of_a_machine_state_that_carries_over_is_not_called_a_slowdown():
    # History: runs 12-31 of the wave; head: runs 32-34, at its crest, 6% above the history's
    # level with the three of them close together. Judged as independent runs that is z = 4.
    # The suite's timings show the memory (the run shifts alone, 20 values, cannot), and the
    # shift test counts it.
    past = wandering_runs(12, 20)
    comparison = compare_runs(past[-1:], wandering_runs(32, 3, branch="pr"), past)
    shift = comparison.run_shift
    assert shift.ratio == pytest.approx(1.06, abs=0.01)
    assert shift.outcome is Outcome.UNSURE and not comparison.has_regression
    assert {v.kind for v in comparison.verdicts} == {Kind.UNCHANGED}
    # a real 25% slowdown on top of that state is still the whole run's, and reported
    slower = compare_runs(past[-1:], wandering_runs(32, 3, factor=1.25, branch="pr"), past)
    assert slower.run_shift.outcome is Outcome.WORSE and slower.has_regression


def test_benchmarks_that_did_not_move_with_a_run_beyond_history_are_not_called_changes():
    # Another load mix on the runner: the head run moved 7% as a whole, far beyond history's
    # run shifts, and two benchmarks did not move with it. Relative to the run they read 7%
    # faster, a change the code did not make.
    base = make_run([ok(n, m, seed=60 + j) for j, (n, m) in enumerate(SUITE.items())])
    # b1 even 2% faster (a change of the run's size and its own noise), b3 really slower
    moved = {"b1": 0.98, "b5": 1.0, "b3": 1.07 * 1.25}
    head = make_run([ok(n, m * moved.get(n, 1.07), seed=80 + j)
                     for j, (n, m) in enumerate(SUITE.items())], sha="b" * 40)
    comparison = compare_runs([base], [head], shared_history(12, host_spread=0.005))
    assert comparison.run_shift.outcome is Outcome.WORSE
    found = verdicts_by_name(comparison)
    for name in ("b1", "b5"):
        assert found[name].kind is Kind.INCONCLUSIVE
        assert found[name].assessment.relative_ratio == pytest.approx(moved[name] / 1.07,
                                                                      rel=0.02)
        assert found[name].note.startswith(
            "measured as improvement relative to its run, but the whole run was 7.")
    # a change larger than the run's own move is not the machine's doing
    assert found["b3"].kind is Kind.REGRESSION
    assert {v.kind for name, v in found.items() if name not in moved} == {Kind.UNCHANGED}
    # A/B rounds share the machine's states: there the same pattern is the code's doing, six
    # benchmarks 7% slower and two unchanged (a shift taken out of each round made the two
    # read as improvements and the six as unchanged).
    rounds = [make_run(list(r.results), sha=f"{i:040x}", run_id=f"base-{i}",
                       created_at=f"2025-12-{1 + i:02d}T00:00:00Z")
              for i, r in enumerate(shared_history(4, host_spread=0.005))]
    heads = [make_run([ok(n, m * (1.0 if n in ("b1", "b5") else 1.07), seed=90 + 10 * i + j)
                       for j, (n, m) in enumerate(SUITE.items())], sha="b" * 40,
                      run_id=f"head-{i}", created_at=f"2025-12-{1 + i:02d}T01:00:00Z")
             for i in range(4)]
    side_by_side = verdicts_by_name(compare_runs(rounds, heads, side_by_side=True))
    assert {side_by_side[name].kind for name in ("b1", "b5")} == {Kind.UNCHANGED}
    assert {v.kind for name, v in side_by_side.items() if name not in ("b1", "b5")} \
        == {Kind.REGRESSION}


def test_one_benchmark_slower_on_a_slower_host_is_judged_relative_to_the_run():
    base, head = suite_pair(1.05, slower="b3")
    found = verdicts_by_name(compare_runs(base, head, shared_history(12, host_spread=0.04)))
    assert found["b3"].kind is Kind.REGRESSION
    assert found["b3"].assessment.relative_ratio == pytest.approx(1.2, rel=0.02)
    assert {v.kind for name, v in found.items() if name != "b3"} == {Kind.UNCHANGED}
