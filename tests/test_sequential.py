"""The levels of the looks at A/B rounds: looking after every round keeps the false-alarm rate."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from torch_bench.analyze.sequential import known_variance_levels, look_levels, spent


def z_crossing(levels, rounds: int, walks: int = 200_000, seed: int = 7) -> float:
    """The share of seeded random walks (the rounds' summed differences of an unchanged
    benchmark, variance known) that cross a look's boundary at least once."""
    steps = np.random.default_rng(seed).standard_normal((walks, rounds))
    looks = np.arange(2, rounds + 1)
    z = np.cumsum(steps, axis=1)[:, 1:] / np.sqrt(looks)
    return float((z >= stats.norm.isf(np.asarray(levels))).any(axis=1).mean())


def t_crossing(levels, rounds: int, walks: int = 100_000, seed: int = 8) -> float:
    """The same for t tests of the rounds so far (base and head, pooled variance), on rounds
    other than those the levels were calibrated on."""
    rng = np.random.default_rng(seed)
    base, head = rng.standard_normal((2, walks, rounds))
    crossed = np.zeros(walks, dtype=bool)
    for k, level in zip(range(2, rounds + 1), levels, strict=True):
        b, h = base[:, :k], head[:, :k]
        t = (h.mean(1) - b.mean(1)) / np.sqrt((b.var(1, ddof=1) + h.var(1, ddof=1)) / k)
        crossed |= stats.t.sf(t, 2 * k - 2) <= level
    return float(crossed.mean())


@pytest.mark.parametrize("rounds, alpha", [(20, 0.01), (8, 0.01), (13, 0.05)])
def test_an_unchanged_benchmark_crosses_a_look_at_the_false_alarm_rate(rounds, alpha):
    levels = look_levels(rounds, alpha)
    assert len(levels) == rounds - 1  # a look after every round from the second
    assert alpha * 0.85 < t_crossing(levels, rounds) < alpha * 1.1
    # The boundaries for a known variance cross at the rate with a z...
    known = known_variance_levels(rounds, alpha)
    assert alpha * 0.9 < z_crossing(known, rounds) < alpha * 1.1
    # ... and too often with a t, whose variance, learned from the rounds, is shared by
    # every look of one benchmark.
    if rounds == 20:
        assert t_crossing(known, rounds) > alpha * 1.08
    # Each look at alpha / looks (Bonferroni) stays well below the rate: the looks share
    # their rounds.
    assert t_crossing([alpha / len(levels)] * len(levels), rounds) < alpha * 0.8


def test_the_last_looks_are_near_the_plain_rate_and_the_first_near_bonferroni():
    levels = look_levels(20, 0.01)
    bonferroni = 0.01 / 19
    assert levels[-1] > 6 * bonferroni
    assert bonferroni / 2 < levels[0] < bonferroni
    assert all(b >= a for a, b in zip(levels[1:], levels[2:], strict=False))  # looser later


def test_one_look_is_at_most_the_plain_rate():
    assert known_variance_levels(2, 0.01) == pytest.approx((0.01,), rel=1e-3)
    assert 0.009 < look_levels(2, 0.01)[0] <= 0.01
    assert look_levels(1, 0.01) == ()
    assert spent(0.01, 1.0) == pytest.approx(0.01)
    assert spent(0.01, 0.0) == 0.0
    assert spent(0.01, 0.5, gamma=0) == pytest.approx(0.005)


def test_conditional_power_under_the_current_trend():
    from torch_bench.analyze.sequential import conditional_power

    # rounds on course to end exactly at the boundary pass it half the time
    assert conditional_power(2.4 * math.sqrt(0.25), 0.25, 2.4) == pytest.approx(0.5)
    # reading nothing after a tenth of the rounds: the rest would hardly call it
    assert conditional_power(0.0, 0.1, 2.4) < 0.01
    assert conditional_power(3.0, 0.5, 2.4) > 0.95
    assert conditional_power(2.5, 1.0, 2.4) == 1.0 and conditional_power(2.3, 1.0, 2.4) == 0.0
