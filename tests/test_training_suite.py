import pytest

from torch_bench.config import build_run_config
from torch_bench.errors import UserError
from torch_bench.measure.timer import TimingPolicy
from torch_bench.runner import plan_cases
from torch_bench.suites import get_suite
from torch_bench.suites.base import CaseContext
from torch_bench.suites.training import TrainingRun, make_optimizer, parity
from torch_bench.zoo import textdata

SUITE = get_suite("training")
CTX = CaseContext("cpu", TimingPolicy())


def plan(**options):
    defaults = {o.name: o.default for o in SUITE.options}
    (case,) = SUITE.plan(defaults | {"backend": "aot_eager", "epochs": 2, "samples": 64,
                                     "batch_size": (16,)} | options, "cpu")
    return case


def test_native_and_compiled_train_from_the_same_start_and_agree():
    results = SUITE.run_case(plan(evaluate=True), CTX)
    found = {(r.metric, r.params.get("runtime")): r for r in results
             if "epoch" not in r.params}
    native, compiled = found["loss", "native"], found["loss", "compiled"]
    assert native.params["backend"] == "eager" and compiled.params["backend"] == "aot_eager"
    curve = native.extra["loss_curve"]
    assert len(curve) == 2 * 4 and len(native.samples) == 4  # steps; the final epoch's
    # The same first loss: the compiled run starts from the initial weights, not trained ones.
    assert compiled.extra["loss_curve"][0] == pytest.approx(curve[0], rel=1e-6)
    assert compiled.extra["loss_curve"] == pytest.approx(curve, rel=1e-3)
    assert found["epoch_time", "native"].extra["first_epoch_excluded"]
    assert len(found["epoch_time", "compiled"].samples) == 1
    assert 0 <= found["accuracy", "compiled"].summary.median <= 1
    verdict = found["loss_ratio", None]
    assert verdict.status == "pass" and verdict.summary.median == pytest.approx(1, rel=1e-3)


def fake_run(*epoch_losses):
    return TrainingRun(tuple(epoch_losses), tuple(epoch_losses), (1.0,) * len(epoch_losses),
                       None)


def test_parity_rule_compares_the_final_epoch_within_the_tolerance():
    case = plan()
    assert parity(case, fake_run(0.9, 0.50), fake_run(2.0, 0.52), 0.05).status == "pass"
    worse = parity(case, fake_run(0.9, 0.50), fake_run(0.1, 0.53), 0.05)
    assert worse.status == "fail_accuracy"
    assert worse.summary.median == pytest.approx(1.06)
    assert "exceeds native 0.5 by more than 5%" in worse.error


def test_optimizers_are_made_without_capturable_on_cpu():
    import torch

    for name in ("adam", "adamw", "sgd"):
        optimizer, capturable = make_optimizer(name, [torch.nn.Parameter(torch.ones(1))], 0.1,
                                               "cpu")
        assert not capturable and optimizer.defaults["lr"] == 0.1


def test_synthetic_data_is_reproducible_and_balanced_enough():
    a, b = textdata.synthetic(256, seed=3), textdata.synthetic(256, seed=3)
    assert a.tokens.equal(b.tokens) and a.labels.equal(b.labels)
    assert 0.2 < a.labels.float().mean() < 0.8


def test_hugging_face_datasets_need_the_package():
    try:
        import datasets  # noqa: F401
    except ImportError:
        with pytest.raises(ValueError, match="needs the `datasets` package"):
            textdata.parse_dataset("hf:imdb")
    with pytest.raises(ValueError, match="expected synthetic or hf:NAME"):
        textdata.parse_dataset("imdb")


def test_a_backend_that_fails_is_reported_with_the_native_results_kept():
    results = SUITE.run_case(plan(backend="no_such_backend", epochs=1, samples=16), CTX)
    statuses = {(r.metric, r.params.get("runtime")): r.status for r in results}
    assert statuses == {("loss", "native"): "ok", ("epoch_time", "native"): "ok",
                        ("loss", "compiled"): "fail_to_run",
                        ("epoch_time", "compiled"): "fail_to_run",
                        ("loss_ratio", None): "fail_to_run"}
    assert "compiled training:" in results[-1].error and "no_such_backend" in results[-1].error


def test_zoo_models_train_for_parity_like_the_compile_suite_names_them():
    config = build_run_config(suites=["training"], cli_options={
        "models": "text_classification,mlp", "batch_size": "16"})
    assert [p.case.name for p in plan_cases(config)] == ["text_classification", "mlp"]
    case = plan(models=("mlp",))
    assert case.name == "mlp" and case.options["target"]
    results = SUITE.run_case(case, CTX)
    by = {(r.metric, r.params.get("runtime")): r for r in results}
    native, compiled = by[("loss", "native")], by[("loss", "compiled")]
    curve = native.extra["loss_curve"]
    assert curve[-1] < curve[0]  # fitting the targets works
    assert compiled.extra["loss_curve"][0] == pytest.approx(curve[0], rel=1e-4)  # same start
    assert by[("loss_ratio", None)].status == "pass"
    with pytest.raises(UserError, match="not a model of the training suite"):
        build_run_config(suites=["training"], cli_options={"models": "nope"})
