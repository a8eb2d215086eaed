import pytest
import torch

from torch_bench.measure.timer import TimingPolicy
from torch_bench.suites import get_suite
from torch_bench.suites.base import CaseContext

FAST = TimingPolicy(warmup=1, min_repeats=3, max_repeats=5, max_time_s=0.2)
SIZES = {"seq_length": 4, "num_layers": 2, "input_size": 8, "hidden_size": 8, "mini_batch": 2}


def cases(**overrides):
    suite = get_suite("rnns")
    options = {o.name: o.default for o in suite.options} | SIZES | overrides
    return suite, suite.plan(options, "cpu")


@pytest.mark.parametrize("variant", ["cudnn", "aten", "jit", "py"])
def test_each_variant_times_forward_and_backward(variant):
    suite, planned = cases(variants=(variant,))
    results = suite.run_case(planned[0], CaseContext("cpu", FAST))
    assert [(r.group, r.metric, r.status) for r in results] == [
        ("lstm", "forward_time", "ok"), ("lstm-backward", "backward_time", "ok")]
    assert all(len(r.samples) >= 3 for r in results)
    assert results[0].params["num_layers"] == (2 if variant in ("cudnn", "aten") else 1)


def test_hand_written_cell_matches_the_library_lstm():
    from torch_bench.suites.lstm_models import lstm_loop

    torch.manual_seed(0)
    lstm = torch.nn.LSTM(3, 5)
    x, h, c = torch.randn(4, 2, 3), torch.randn(1, 2, 5), torch.randn(1, 2, 5)
    expected, (hy, cy) = lstm(x, (h, c))
    out, hx, cx = lstm_loop(x, h[0], c[0], lstm.weight_ih_l0, lstm.weight_hh_l0,
                            lstm.bias_ih_l0, lstm.bias_hh_l0)
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(cx, cy[0])


def test_scripted_variant_is_skipped_where_scripting_is_gone(monkeypatch):
    monkeypatch.delattr(torch.jit, "script")
    suite, planned = cases(variants=("jit",))
    results = suite.run_case(planned[0], CaseContext("cpu", FAST))
    assert [r.status for r in results] == ["skipped", "skipped"]
    assert "torch.jit.script is not available" in results[0].error
