"""Invalid numbers from a case become an error on that result only."""

import pytest

from torch_bench.measure.sanity import value_problem, with_invalid_values_as_errors
from torch_bench.results.schema import measured


def result(samples, metric="latency", extra=None):
    return measured("s", "case", metric, samples, params={"device": "cpu"}, group="g",
                    extra=extra)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # numpy summarising infinities
@pytest.mark.parametrize(("samples", "metric", "problem"), [
    ([1.0, float("nan")], "latency", "sample 1 is nan ms: not a finite number"),
    ([float("-inf")], "throughput", "sample 0 is -inf samples/s: not a finite number"),
    ([3.0, -0.5], "latency", "sample 1 is -0.5 ms: a time cannot be negative"),
    ([-1.0], "peak_rss", "sample 0 is -1.0 MB: a memory cannot be negative"),
])
def test_each_invalid_value_is_named(samples, metric, problem):
    assert value_problem(result(samples, metric)) == problem


def test_valid_values_pass_even_a_negative_loss():
    assert value_problem(result([0.0, 1.5])) is None
    assert value_problem(result([-0.25], metric="loss")) is None


def test_only_the_bad_result_becomes_an_error_keeping_its_identity():
    good, bad = result([1.0, 2.0]), result([1.0], extra={"calls": [1, float("nan")]})
    checked = with_invalid_values_as_errors([good, bad])
    assert checked[0] is good
    assert checked[1].status == "error" and checked[1].summary is None
    assert checked[1].samples == () and checked[1].extra == {}
    kept = (checked[1].name, checked[1].group, checked[1].params)
    assert kept == ("case", "g", {"device": "cpu"})
    assert "extra['calls'][1] is not a finite number" in checked[1].error
