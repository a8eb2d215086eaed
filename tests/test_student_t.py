"""The rule's tail functions name the tails scipy.stats names: direction, sign and range."""

from __future__ import annotations

import pytest
from scipy import stats

from torch_bench.analyze.student_t import normal_sf, t_isf, t_sf


@pytest.mark.parametrize("z", [0.5, 2.0, 3.0, 4.0, 6.0])
def test_normal_tail_matches_scipy(z):
    assert normal_sf(z) == pytest.approx(stats.norm.sf(z), rel=1e-12)


@pytest.mark.parametrize("df", [1, 2, 3, 4, 7.5, 19, 40, 200, 5000])
@pytest.mark.parametrize("t", [-2.0, 0.0, 0.3, 1.7, 4.1, 19.2, 250.0])
def test_t_tail_matches_scipy(t, df):
    assert t_sf(t, df) == pytest.approx(stats.t.sf(t, df), rel=1e-9, abs=1e-300)


@pytest.mark.parametrize("df", [1, 2, 4, 9, 19, 38, 1000])
@pytest.mark.parametrize("z", [3.0, 4.0])
def test_threshold_quantile_matches_scipy(z, df):
    p = normal_sf(z)
    assert t_isf(p, df) == pytest.approx(stats.t.isf(p, df), rel=1e-8)


def test_quantile_refuses_probabilities_outside_the_upper_half():
    with pytest.raises(ValueError):
        t_isf(0.7, 3)
