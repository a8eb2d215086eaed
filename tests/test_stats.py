import math

import pytest

from torch_bench.results.stats import relative_iqr, summarize


def test_summary_of_a_worked_example():
    # 1..10: median 5.5, mean 5.5, sample std sqrt(55/6), quartiles 3.25 and 7.75, p90 9.1
    s = summarize(list(range(1, 11)))
    assert (s.n, s.median, s.mean, s.min, s.max) == pytest.approx((10, 5.5, 5.5, 1, 10))
    assert s.std == pytest.approx(math.sqrt(55 / 6))
    assert s.iqr == pytest.approx(4.5)
    assert s.p90 == pytest.approx(9.1)
    assert s.relative_iqr == pytest.approx(4.5 / 5.5)


def test_single_sample_has_no_spread():
    s = summarize([3.0])
    assert (s.std, s.iqr, s.median) == pytest.approx((0.0, 0.0, 3.0))


def test_empty_samples_are_refused():
    with pytest.raises(ValueError):
        summarize([])


def test_relative_iqr():
    assert relative_iqr([1, 1, 1, 1]) == 0
    assert relative_iqr([0, 0, 0]) == math.inf
