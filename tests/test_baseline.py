"""Choosing the baseline from history (pure; the git side is in test_compare_cli.py)."""

from __future__ import annotations

import pytest

from support.runs import BASE_ENV, make_run, ok, untrusted
from torch_bench.analyze.baseline import UntrustedBaseline, choose_baseline, explicit, noise_history


def run(sha, day, branch="main", fingerprint="fp-test-0001", run_id=None):
    env = {**BASE_ENV, "fingerprint": fingerprint}
    return make_run([ok("x", 1.0)], sha=sha, branch=branch, env=env,
                    created_at=f"2026-01-{day:02d}T00:00:00Z", run_id=run_id or f"{sha}-{day}")


HEAD = [run("h", 20, branch="feature", run_id="head")]


def test_all_runs_at_the_nearest_ancestor_with_results_are_the_baseline():
    history = [run("a1", 1), run("a2", 2), run("a2", 3), run("a3", 4),
               run("a2", 5, fingerprint="other")]
    chosen = choose_baseline(HEAD, history, base_branch="main", ancestors=["m", "a2", "a1"])
    assert [r.run_id for r in chosen.runs] == ["a2-2", "a2-3"]
    assert "1 commits before the merge-base" in chosen.how


def test_without_ancestry_the_latest_base_branch_runs_on_the_same_fingerprint():
    history = [run("a1", 1), run("a2", 2), run("r1", 3, branch="release"),
               run("a3", 4, fingerprint="other")]
    chosen = choose_baseline(HEAD, history, base_branch="main", ancestors=None)
    assert [r.run_id for r in chosen.runs] == ["a2-2"] and "latest" in chosen.how
    assert choose_baseline(HEAD, [run("a1", 1, fingerprint="other")], base_branch="main",
                           ancestors=None) is None


def test_noise_history_stops_at_the_baseline():
    history = [run(f"a{i}", i) for i in range(1, 8)]
    chosen = choose_baseline(HEAD, history, base_branch="main", ancestors=["a4"])
    assert [r.git["sha"] for r in noise_history(history, HEAD, "main", chosen)] == [
        "a1", "a2", "a3", "a4"]


def test_untrusted_runs_are_never_the_baseline_nor_the_noise():
    history = [run("a1", 1), run("a2", 2), untrusted(run("a2", 3)), untrusted(run("a3", 4)),
               run("a4", 5), untrusted(run("a5", 6))]
    at_base = choose_baseline(HEAD, history, base_branch="main", ancestors=["a3", "a2"])
    assert [r.run_id for r in at_base.runs] == ["a2-2"]  # a3 has only an untrusted run
    latest = choose_baseline(HEAD, history, base_branch="main", ancestors=None)
    assert [r.run_id for r in latest.runs] == ["a4-5"]
    assert [r.run_id for r in noise_history(history, HEAD, "main")] == ["a1-1", "a2-2", "a4-5"]
    assert choose_baseline(HEAD, [untrusted(run("a1", 1))], base_branch="main",
                           ancestors=["a1"]) is None


def test_an_explicit_baseline_leaves_untrusted_runs_out_and_refuses_only_untrusted_ones():
    chosen = explicit([run("a1", 1), untrusted(run("a1", 2))], "base/")
    assert [r.run_id for r in chosen.runs] == ["a1-1"]
    assert "1 untrusted run(s) left out" in chosen.how
    with pytest.raises(UntrustedBaseline, match="base.json: every run failed its pre-flight"):
        explicit([untrusted(run("a1", 1))], "base.json")
