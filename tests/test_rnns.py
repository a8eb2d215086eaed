import pytest
import torch

from torch_bench.measure.timer import TimingPolicy
from torch_bench.suites import get_suite
from torch_bench.suites.base import CaseContext

FAST = TimingPolicy(warmup=1, min_repeats=3, max_repeats=5, max_time_s=0.2)
SIZES = {"seq_length": 4, "num_layers": 2, "input_size": 8, "hidden_size": 8,
         "batch_size": (2,)}


def cases(**overrides):
    suite = get_suite("rnns")
    options = {o.name: o.default for o in suite.options} | SIZES | overrides
    return suite, suite.plan(options, "cpu")


LAYERED = ("cudnn", "aten", "jit_multilayer")


@pytest.mark.parametrize("variant", [
    "cudnn", "aten", "jit", "jit_premul", "jit_premul_bias", "jit_simple", "jit_multilayer",
    "py", "vl_cudnn", "vl_jit", "vl_py"])
def test_each_variant_times_forward_and_backward_in_its_fastrnns_group(variant):
    suite, planned = cases(variants=(variant,))
    results = suite.run_case(planned[0], CaseContext("cpu", FAST))
    group = "vl_lstm" if variant.startswith("vl_") else "lstm"
    assert [(r.group, r.metric, r.status) for r in results] == [
        (group, "forward_time", "ok"), (f"{group}-backward", "backward_time", "ok")]
    assert all(len(r.samples) >= 3 for r in results)
    assert results[0].params["num_layers"] == (2 if variant in LAYERED else 1)


def lstm_and_inputs(layers=1):
    torch.manual_seed(0)
    lstm = torch.nn.LSTM(3, 5, layers)
    x, h, c = torch.randn(4, 2, 3), torch.randn(layers, 2, 5), torch.randn(layers, 2, 5)
    return lstm, x, h, c


@pytest.mark.parametrize("loop", ["lstm_loop", "premul_lstm_loop", "premul_bias_lstm_loop",
                                  "simple_lstm_loop"])
def test_every_single_layer_loop_computes_the_library_lstm(loop):
    from torch_bench.models import lstm as lstm_models

    lstm, x, h, c = lstm_and_inputs()
    expected, (hy, cy) = lstm(x, (h, c))
    weights = (lstm.weight_ih_l0, lstm.weight_hh_l0, lstm.bias_ih_l0, lstm.bias_hh_l0)
    for fn in (getattr(lstm_models, loop), lstm_models.scripted(getattr(lstm_models, loop))):
        *out, hx, cx = fn(x, h[0], c[0], *weights)
        if out:
            torch.testing.assert_close(out[0], expected)
        torch.testing.assert_close((hx, cx), (hy[0], cy[0]))


def test_multilayer_and_variable_length_loops_compute_the_library_lstm():
    from torch_bench.models import lstm as lstm_models

    lstm, x, h, c = lstm_and_inputs(layers=2)
    weights = [getattr(lstm, f"{kind}_l{layer}") for layer in range(2)
               for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
    expected, (hy, cy) = lstm(x, (h, c))
    out, hx, cx = lstm_models.multilayer_lstm_loop(x, h, c, weights)
    torch.testing.assert_close((out, hx, cx), (expected, hy, cy))

    lstm, _, h, c = lstm_and_inputs()
    sequences = [torch.randn(4, 3), torch.randn(2, 3)]
    packed, (hy, cy) = lstm(torch.nn.utils.rnn.pack_sequence(sequences), (h, c))
    padded, _ = torch.nn.utils.rnn.pad_packed_sequence(packed)
    weights = (lstm.weight_ih_l0, lstm.weight_hh_l0, lstm.bias_ih_l0, lstm.bias_hh_l0)
    out, hx, cx = lstm_models.varlen_lstm_loop(sequences, h[0], c[0], *weights)
    torch.testing.assert_close(out, torch.cat([padded[:4, 0], padded[:2, 1]]))
    torch.testing.assert_close((hx, cx), (hy[0], cy[0]))


def test_scripted_variant_is_skipped_where_scripting_is_gone(monkeypatch):
    monkeypatch.delattr(torch.jit, "script")
    suite, planned = cases(variants=("jit", "vl_jit", "jit_multilayer"))
    for case in planned:
        results = suite.run_case(case, CaseContext("cpu", FAST))
        assert [r.status for r in results] == ["skipped", "skipped"]
        assert "torch.jit.script is not available" in results[0].error


def test_a_fixed_sample_count_is_honoured_over_the_time_budget():
    suite, planned = cases(variants=("py",))
    fixed = TimingPolicy(warmup=1, min_repeats=20, max_repeats=20, max_time_s=0.01)
    results = suite.run_case(planned[0], CaseContext("cpu", fixed))
    assert [len(r.samples) for r in results] == [20, 20]


def test_nloops_gives_per_iteration_samples_as_fastrnns_writes_them():
    suite, planned = cases(variants=("aten",))
    results = suite.run_case(planned[0], CaseContext("cpu", TimingPolicy(warmup=1, nloops=9)))
    assert [len(r.samples) for r in results] == [9, 9]
    assert [r.extra["loops"] for r in results] == [1, 1]
