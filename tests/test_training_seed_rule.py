"""Training parity as dynamo's training_loss.py judges it (`--loss-rule seed`), the compiling
epoch reported on its own, and the seed's PASSED/FAILED report."""

import pytest

from test_training_suite import CTX, SUITE, plan
from torch_bench.suites.training import (
    TrainingRun,
    render,
    seed_check,
    seed_loss_points,
    seed_parity,
)


def test_loss_points_are_running_means_of_every_n_steps_within_each_epoch():
    losses = [1.0, 3.0, 5.0, 7.0, 9.0] + [2.0, 2.0, 4.0, 4.0, 6.0]  # two epochs of 5 steps
    assert seed_loss_points(losses, 5, every=2) == [2.0, 6.0, 2.0, 4.0]  # remainders dropped
    assert seed_loss_points(losses, 5, every=100) == []


def test_seed_check_is_an_absolute_margin_over_the_last_ten_points_divided_by_ten():
    native = [1.0] * 12
    assert seed_check(native, [1.09] * 12)[0]  # 1.09 <= 1.0 + 0.1
    ok, ref, res = seed_check(native, [1.11] * 12)
    assert not ok and (ref, res) == pytest.approx((1.0, 1.11))
    # fewer than ten points: still divided by ten, as the seed does
    assert seed_check([1.0, 1.0], [1.4, 1.4]) == pytest.approx((True, 0.2, 0.28))
    assert seed_check([], [])[0]  # no point: passes, as in the seed


def fake_run(losses, epochs):
    per = len(losses) // epochs
    means = tuple(sum(losses[i:i + per]) / per for i in range(0, len(losses), per))
    return TrainingRun(tuple(losses), means, (5.0,) * epochs, None)


def test_seed_parity_is_recorded_with_the_figures_it_compared():
    case = plan(loss_rule="seed", loss_every=2)
    native, compiled = fake_run([1.0] * 8, 2), fake_run([1.0] * 4 + [1.6] * 4, 2)
    verdict = seed_parity(case, native, compiled, 2)
    assert verdict.status == "fail_accuracy" and verdict.params["loss_rule"] == "seed"
    assert verdict.extra["loss_points"] == 4
    assert verdict.extra["native_verdict_loss"] == pytest.approx(0.4)
    assert verdict.extra["compiled_verdict_loss"] == pytest.approx(0.52)
    # relative rule would call a 5% rise a failure; the seed's absolute 0.1 does not
    relaxed = seed_parity(case, fake_run([2.0] * 8, 2), fake_run([2.1] * 8, 2), 2)
    assert relaxed.status == "pass"
    none = seed_parity(case, native, compiled, 100)
    assert none.status == "pass" and "no loss point" in none.extra["note"]


def test_a_seed_run_reports_the_compiling_epoch_and_prints_passed():
    results = SUITE.run_case(plan(loss_rule="seed", loss_every=2), CTX)
    first = [r for r in results if r.metric == "epoch_time" and r.params.get("epoch") == "first"]
    assert {r.params["runtime"] for r in first} == {"native", "compiled"}
    assert all(len(r.samples) == 1 for r in first)
    (verdict,) = [r for r in results if r.metric == "loss_ratio"]
    assert verdict.status == "pass" and verdict.extra["loss_points"] == 4
    lines = render(results)
    assert lines[0].startswith("[PASSED] text_classification")
    assert lines[1] == "Train model on 2 epochs with backend aot_eager and optimizer adam:"
    assert lines[2].startswith("PyTorch spent") and "without the first" in lines[2]
    assert lines[3].startswith("TorchDynamo spent")
