"""Figures that misled the seeds' users: `--amp` with float32 autocast to float32 (nothing);
performance mode, which checks no accuracy, reported a pass rate of 1; the training suite,
asked for a model it lacks, listed the compile suite's models."""

from __future__ import annotations

import pytest

from torch_bench.config import build_run_config
from torch_bench.errors import UserError
from torch_bench.results.schema import measured
from torch_bench.suites.compile import OPTIONS as COMPILE_OPTIONS
from torch_bench.suites.compile import plan, summarize


def compile_options(**given):
    return {**{o.name: o.default for o in COMPILE_OPTIONS}, "models": ("mlp",), **given}


@pytest.mark.parametrize("device,autocast", [("cpu", "bfloat16"), ("cuda", "float16")])
def test_amp_with_float32_autocasts_to_the_seeds_16_bit_dtype(device, autocast):
    cases = plan(compile_options(amp=True, modes=("inference",)), device)
    assert {c.params["dtype"] for c in cases} == {autocast}
    assert {c.params["amp"] for c in cases} == {True}


def test_amp_keeps_a_16_bit_dtype_asked_for_and_no_amp_keeps_float32():
    asked = plan(compile_options(amp=True, dtype=("float16",), modes=("inference",)), "cuda")
    assert {c.params["dtype"] for c in asked} == {"float16"}
    plain = plan(compile_options(modes=("inference",)), "cpu")
    assert {c.params["dtype"] for c in plain} == {"float32"}


def speedup_case(name: str, check: str | None):
    params = {"mode": "inference", "backend": "eager", "device": "cpu",
              **({"check": check} if check else {})}
    return [measured("compile", name, "speedup", [1.2], params=params),
            measured("compile", name, "compile_time", [50.0], params=params)]


def summary_of(results) -> dict:
    return {r.metric: r for r in summarize(results)}


def test_performance_mode_reports_pass_rate_as_not_measured():
    summary = summary_of(speedup_case("mlp", "performance") + speedup_case("lstm",
                                                                           "performance"))
    assert summary["pass_rate"].status == "skipped"
    assert "not measured" in summary["pass_rate"].error
    assert summary["speedup"].ok  # the speedups were measured


def test_checked_modes_still_report_their_pass_rate():
    summary = summary_of(speedup_case("mlp", None))
    assert summary["pass_rate"].ok and summary["pass_rate"].summary.median == pytest.approx(1)


def test_an_unknown_training_model_lists_the_training_suites_models():
    with pytest.raises(UserError) as refused:
        build_run_config(suites=["training"], cli_options={"models": "bert-base-cased"})
    message = str(refused.value)
    assert "not a model of the training suite" in message
    assert message.index("text_classification") < message.index("mlp")
