import re

import pytest

from torch_bench.errors import UserError
from torch_bench.measure.timer import TimingPolicy
from torch_bench.suites import get_suite
from torch_bench.suites.base import CaseContext
from torch_bench.suites.transformer_steps import Step, Unsupported, first_call

FAST = TimingPolicy(warmup=1, min_repeats=3, max_repeats=3, max_time_s=0.1)
SUITE = get_suite("transformers")
METRICS = ["latency", "throughput", "token_throughput"]


def options(**overrides):
    return {o.name: o.default for o in SUITE.options} | {
        "batch_size": (2,), "seq_lengths": (8,)} | overrides


def run_one(**overrides):
    (case,) = SUITE.plan(options(**overrides), "cpu")
    return SUITE.run_case(case, CaseContext("cpu", FAST))


def test_the_plan_is_the_grid_with_the_parameters_the_csv_reads():
    cases = SUITE.plan(options(models=("tiny-bert", "tiny-t5"), batch_size=(1, 2),
                               seq_lengths=(8, 16), torchscript=True), "cpu")
    assert len(cases) == 2 * 2 * 2 * 2  # models x modes x batch sizes x sequence lengths
    first = cases[0].params
    assert {k: first[k] for k in ("model", "batch_size", "sequence_length", "mode")} == {
        "model": "tiny-bert", "batch_size": 1, "sequence_length": 8, "mode": "inference"}
    assert {c.params["mode"]: c.params["torchscript"] for c in cases} == {
        "inference": True, "train": False}  # tracing is for inference only
    with pytest.raises(UserError, match="choose one"):
        SUITE.plan(options(torchscript=True, compile="eager"), "cpu")


@pytest.mark.parametrize("model", ["tiny-bert", "tiny-gpt2", "tiny-t5"])
@pytest.mark.parametrize("mode", ["inference", "train"])
def test_every_tiny_model_in_both_modes(model, mode):
    results = run_one(models=(model,), mode=(mode,))
    assert [(r.metric, r.status) for r in results] == [(m, "ok") for m in METRICS]
    latency, samples_per_s, tokens_per_s = (r.summary.median for r in results)
    assert samples_per_s == pytest.approx(2 * 1e3 / latency, rel=1e-6)
    assert tokens_per_s == pytest.approx(2 * 8 * 1e3 / latency, rel=1e-6)
    assert results[0].params["model"] == model and results[0].extra["first_call_ms"] > 0


def test_base_model_training_uses_a_stand_in_loss():
    results = run_one(models=("tiny-t5",), mode=("train",), head="base")
    assert [r.status for r in results] == ["ok"] * 3


def test_torchscript_trace_and_compile_for_inference():
    traced = run_one(models=("tiny-t5",), mode=("inference",), torchscript=True)
    assert traced[0].status == "ok" and traced[0].extra["trace_time_ms"] > 0
    compiled = run_one(models=("tiny-gpt2",), mode=("inference",), compile="eager")
    assert compiled[0].status == "ok" and compiled[0].params["compile"] == "eager"


def test_bf16_runs_or_is_skipped_with_the_reason():
    results = run_one(models=("tiny-bert",), mode=("train",), dtype=("bf16",))
    assert results[0].params["dtype"] == "bf16"
    assert results[0].status == "ok" or (
        results[0].status == "skipped" and "bf16 is not supported on cpu" in results[0].error)


def test_an_unsupported_half_precision_operation_becomes_skipped():
    def fails():
        raise RuntimeError('"addmm_impl_cpu_" not implemented for \'Half\'')

    with pytest.raises(Unsupported, match="fp16 is not supported on cpu for this model"):
        first_call(Step(fails), "fp16", "cpu")
    with pytest.raises(RuntimeError):  # in fp32 the same error is a real error
        first_call(Step(fails), "fp32", "cpu")


def test_too_long_sequences_are_skipped_and_unloadable_models_say_why(monkeypatch):
    long = run_one(models=("tiny-gpt2",), mode=("inference",), seq_lengths=(600,))
    assert {r.status for r in long} == {"skipped"}
    assert "exceeds the model's 512 positions" in long[0].error
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    hub = run_one(models=("org/not-cached-model",), mode=("inference",))
    assert {r.status for r in hub} == {"model_fail_to_load"}
    assert "HF_HUB_OFFLINE is set" in hub[0].error


def test_memory_trace_is_kept_and_rendered_with_the_grid_tables():
    results = run_one(models=("tiny-bert",), mode=("train",), trace_memory=True, trace_top=3,
                      batch_size=(16,), seq_lengths=(128,))
    trace = results[0].extra["memory_trace"]
    assert 0 < len(trace["top"]) <= 3 and trace["lines_traced"] > 100
    assert trace["top"][0]["cpu_mb"] > 0
    skipped = run_one(models=("tiny-gpt2",), mode=("train",), seq_lengths=(600,))
    text = "\n".join(SUITE.render(results + skipped))
    assert " TRAIN - LATENCY - RESULT " in text
    assert "tiny-bert" in text and "N/A (skipped)" in text
    assert "memory trace: tiny-bert (mode=train, batch_size=16" in text


@pytest.mark.parametrize("name,text,message", [
    ("mode", "inference,serve", "unknown value(s) serve"),
    ("dtype", "fp8", "unknown dtype 'fp8'"),
    ("head", "both", "expected one of auto, lm, base"),
    ("torchscript", "maybe", "expected one of"),
    ("models", "./missing/config.json", "no such configuration file"),
])
def test_bad_option_values_are_refused(name, text, message):
    option = next(o for o in SUITE.options if o.name == name)
    with pytest.raises(ValueError, match=re.escape(message)):
        option.parse(text)
