import math

import pytest

from torch_bench.measure.timer import TimingPolicy
from torch_bench.results.schema import failed, measured
from torch_bench.suites import get_suite
from torch_bench.suites.base import CaseContext
from torch_bench.suites.compile import summarize

FAST = CaseContext("cpu", TimingPolicy(warmup=1, min_repeats=3, max_repeats=5, max_time_s=0.2))
SUITE = get_suite("compile")


def cases(**options):
    defaults = {o.name: o.default for o in SUITE.options} | {"backend": "aot_eager"}
    return SUITE.plan(defaults | options, "cpu")


def run(**options):
    (case,) = cases(**options)
    return SUITE.run_case(case, FAST)


def by_metric(results):
    return {(r.metric, r.params.get("runtime")): r for r in results}


def test_a_passing_model_reports_every_measurement():
    results = by_metric(run(models=("mlp",), modes=("inference",)))
    assert set(results) == {("speedup", None), ("latency", "eager"), ("latency", "compiled"),
                            ("compile_time", None), ("peak_memory", "eager"),
                            ("peak_memory", "compiled"), ("memory_ratio", None),
                            ("graph_count", None), ("graph_breaks", None)}
    assert {r.status for r in results.values()} == {"pass"}
    eager, compiled = results["latency", "eager"], results["latency", "compiled"]
    assert len(eager.samples) == len(compiled.samples) >= 3  # interleaved rounds
    assert math.isclose(results["speedup", None].summary.median,
                        eager.summary.median / compiled.summary.median)
    assert results["graph_count", None].summary.median == 1
    assert results["graph_breaks", None].summary.median == 0
    assert results["compile_time", None].summary.median > 0
    assert results["memory_ratio", None].extra["method"] == "cpu_allocations_profiled"
    assert results["peak_memory", "eager"].summary.median > 0


def test_training_mode_compares_loss_and_gradients_and_passes():
    results = run(models=("mlp",), modes=("training",), batch_size=3)
    assert {r.status for r in results} == {"pass"}
    assert results[0].params["batch_size"] == 3


def test_a_model_wrong_only_when_compiled_fails_accuracy(child_can_import_support):
    results = run(models=("support.zoo_models:perturbed",), modes=("training",),
                  backend="eager")
    assert {r.status for r in results} == {"fail_accuracy"}
    assert "max abs diff 0.5" in results[0].error and "fp64" in results[0].error
    assert by_metric(results)["speedup", None].summary is not None  # still timed


@pytest.mark.parametrize("model, status, message", [
    ("broken", "model_fail_to_load", "loading the model: ImportError: weights"),
    ("crashing", "fail_to_run", "eager: RuntimeError: shape mismatch"),
    ("restless", "eager_two_runs_differ", "two eager runs differ: out.outputs"),
    ("hungry", "oom", "can't allocate memory"),
])
def test_failures_become_statuses(child_can_import_support, model, status, message):
    results = run(models=(f"support.zoo_models:{model}",), modes=("inference",))
    assert [r.metric for r in results] == ["speedup", "latency", "compile_time", "memory_ratio"]
    assert {r.status for r in results} == {status}
    assert message in results[0].error


def test_skipped_models_do_not_run(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("skip: {training: [mlp]}\nbatch_size: {mlp: 5}\n")
    planned = cases(models=("mlp",), compile_config=str(path))
    assert [c.params["batch_size"] for c in planned] == [5, 5]
    results = SUITE.run_case(planned[1], FAST)
    assert {r.status for r in results} == {"skipped"}
    assert results[0].error == "listed in skip.training"


def fake_case(name, status, speedup, compile_ms, ratio, mode="inference"):
    params = {"mode": mode, "backend": "inductor", "device": "cpu", "dtype": "float32"}
    if status not in ("pass", "fail_accuracy"):
        return [failed("compile", name, m, status, "x", params=params)
                for m in ("speedup", "compile_time", "memory_ratio")]
    return [measured("compile", name, "speedup", [speedup], params=params, status=status),
            measured("compile", name, "latency", [1.0], params={**params, "runtime": "eager"},
                     status=status),
            measured("compile", name, "compile_time", [compile_ms], params=params,
                     status=status),
            measured("compile", name, "memory_ratio", [ratio], params=params, status=status)]


def test_summary_is_over_passing_models_per_mode_backend_and_device():
    results = [*fake_case("a", "pass", 2.0, 100, 1.0), *fake_case("b", "pass", 8.0, 300, 0.5),
               *fake_case("c", "fail_accuracy", 100.0, 1, 9.0),
               *fake_case("d", "skipped", 0, 0, 0), *fake_case("e", "oom", 0, 0, 0),
               *fake_case("a", "fail_to_run", 0, 0, 0, mode="training")]
    summary = {(r.params["mode"], r.metric): r for r in summarize(results)}
    inference = {m: summary["inference", m] for m in
                 ("speedup", "pass_rate", "compile_time", "memory_ratio")}
    assert inference["speedup"].summary.median == pytest.approx(4.0)  # geometric mean
    assert inference["pass_rate"].summary.median == pytest.approx(2 / 4)  # skipped excluded
    assert inference["compile_time"].summary.median == pytest.approx(200)
    assert inference["memory_ratio"].summary.median == pytest.approx(0.75)
    assert all(r.name == "summary" and r.params == {"mode": "inference", "backend": "inductor",
                                                    "device": "cpu"} for r in inference.values())
    assert summary["training", "pass_rate"].summary.median == pytest.approx(0)
    assert summary["training", "speedup"].status == "skipped"
    assert summary["training", "speedup"].error == "no model passed"


@pytest.mark.slow
def test_inductor_compiles_a_tiny_model():
    results = by_metric(run(models=("mlp",), modes=("inference",), backend="inductor"))
    assert results["speedup", None].status == "pass"
    assert results["graph_count", None].summary.median == 1


def test_a_transformer_with_a_key_value_cache_in_its_output_passes():
    results = by_metric(run(models=("tiny_gpt2",), modes=("inference",)))
    assert results["speedup", None].status == "pass"
