"""The training page shows the loss the parity verdict compared (not the last step), names
the rule that made it, and reports the first (compiling) epoch apart from the others."""

import pytest

from test_training_suite import CTX, SUITE, plan
from torch_bench.render.columns import run_facts
from torch_bench.render.data import training_curve
from torch_bench.render.formatting import format_value
from torch_bench.render.pages import training_context
from torch_bench.results.schema import measured, new_run


def loss_result(runtime, backend, curve, **extra):
    params = {"optimizer": "adam", "runtime": runtime, "backend": backend}
    return measured("training", "mlp", "loss", curve[-2:], params=params,
                    extra={"loss_curve": curve, **extra})


def context_of(results):
    facts = run_facts(new_run(results))["training"]
    curves = [training_curve(*fact) for fact in facts]
    return training_context({"runs": [{"run": "r", "date": "d", "sha": "s", "branch": "main",
                                       "message": "m", "curves": curves}]})


def test_the_table_shows_the_verdicts_figures_its_rule_and_the_compiling_epoch_apart():
    # last steps 0.10 and 0.30, but the verdict compared the last-epoch means 0.5 and 0.6
    native = loss_result("native", "eager", [1.0, 0.9, 0.10], verdict_loss=0.5,
                         verdict_rule="last_epoch_mean", epoch_times_ms=[100.0, 10.0, 12.0])
    compiled = loss_result("compiled", "inductor", [1.0, 0.9, 0.30], verdict_loss=0.6,
                           verdict_rule="last_epoch_mean",
                           epoch_times_ms=[5000.0, 8.0, 8.0])
    (row,) = context_of([native, compiled])["rows"]
    assert float(row["eager"]) == pytest.approx(0.5)
    assert float(row["compiled"]) == pytest.approx(0.6) and row["ratio"] == "1.200"
    assert row["rule"] == "last-epoch mean"
    assert row["compiled_epochs"] == (f"{format_value(5000.0, 'ms')} first · "
                                      f"{format_value(8.0, 'ms')} later")


def test_a_run_stored_before_the_verdicts_figure_shows_its_last_step_and_says_so():
    (row,) = context_of([loss_result("native", "eager", [1.0, 0.25]),
                         loss_result("compiled", "inductor", [1.0, 0.5])])["rows"]
    assert float(row["eager"]) == pytest.approx(0.25) and row["rule"] == "last step"
    assert row["compiled_epochs"] == "—"


@pytest.mark.slow
@pytest.mark.parametrize("rule", ["relative", "seed"])
def test_a_real_training_run_records_the_verdicts_figure_on_each_loss(rule):
    options = {"loss_rule": "seed", "loss_every": 2} if rule == "seed" else {}
    results = SUITE.run_case(plan(**options), CTX)
    (verdict,) = [r for r in results if r.metric == "loss_ratio"]
    losses = {r.params["runtime"]: r for r in results
              if r.metric == "loss" and "epoch" not in r.params}
    key = "{}_verdict_loss" if rule == "seed" else "{}_final_loss"
    for runtime, loss in losses.items():
        assert loss.extra["verdict_loss"] == pytest.approx(verdict.extra[key.format(runtime)])
        assert loss.extra["verdict_rule"] == ("seed" if rule == "seed" else "last_epoch_mean")
        assert len(loss.extra["epoch_times_ms"]) == 2
    if rule != "seed":  # the default rule's figure is the last epoch's mean loss
        native = losses["native"]
        assert native.extra["verdict_loss"] == pytest.approx(native.summary.mean)
