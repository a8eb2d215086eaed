"""The machine's own speed divided out of the verdicts, where every run timed the speed
reference beside its samples."""

from __future__ import annotations

import numpy as np
import pytest

from support.runs import make_run
from torch_bench.analyze.speed_scaling import speed_ratios, speed_scaling
from torch_bench.analyze.verdicts import Kind, compare_runs
from torch_bench.measure.speed_reference import REFERENCE
from torch_bench.measure.timer import TimingPolicy, measure
from torch_bench.results.schema import measured

COSTS = {"attention": 1.8, "conv": 1.5, "lstm": 3.1, "matmul": 1.4}
MACHINE_SPREAD = 0.15  # per result: the host ran this much faster or slower (log sd)


def result(name: str, cost: float, speed: float, rng, *, reference: str | None = REFERENCE,
           n: int = 40):
    """Samples of `cost` ms on a machine running at `speed` (1: nominal), with the speed
    reference (0.5 ms nominal) timed after each block."""
    noise = rng.normal(0.0, 0.01, (2, n))
    samples = cost * speed * np.exp(noise[0])
    extra = {"clock": "cpu"}
    if reference is not None:
        extra.update(reference=reference,
                     reference_samples=[float(v) for v in 0.5 * speed * np.exp(noise[1])])
    return measured("busy", name, "latency", [float(v) for v in samples], extra=extra)


def runs(count: int, seed: int, *, slower: dict[str, float] | None = None,
         speeds: dict[str, float] | None = None, reference: str | None = REFERENCE,
         label: str = "hist"):
    rng = np.random.default_rng(seed)
    found = []
    for i in range(count):
        results = []
        for name, cost in COSTS.items():
            speed = (speeds or {}).get(name) or float(np.exp(rng.normal(0, MACHINE_SPREAD)))
            results.append(result(name, cost * (slower or {}).get(name, 1.0), speed, rng,
                                  reference=reference))
        found.append(make_run(results, sha=f"{seed + i:040x}", run_id=f"{label}-{i:03d}",
                              created_at=f"2026-01-{1 + i:02d}T00:00:00Z"))
    return found


def without_reference(run):
    from dataclasses import replace

    stripped = [replace(r, extra={k: v for k, v in r.extra.items()
                                  if k not in ("reference", "reference_samples")})
                for r in run.results]
    return replace(run, results=tuple(stripped))


def verdict_of(name: str, history, head) -> Kind:
    return judged(name, history, head).kind


def judged(name: str, history, head):
    comparison = compare_runs([history[-1]], head, history)
    return next(v for v in comparison.verdicts if v.name == name)


def test_a_slowdown_hidden_by_a_fast_moment_of_the_machine_is_found():
    history = runs(10, seed=1)
    head = runs(1, seed=2, slower={"lstm": 1.10}, speeds={"lstm": 0.85}, label="head")
    assert verdict_of("lstm", history, head) is Kind.REGRESSION
    # The same numbers without the reference: the machine's 15% swings hide 10%.
    raw = verdict_of("lstm", [without_reference(r) for r in history],
                     [without_reference(r) for r in head])
    assert raw is not Kind.REGRESSION


def test_a_slow_moment_of_the_machine_is_not_a_regression():
    history = runs(10, seed=3)
    head = runs(1, seed=4, speeds={"conv": 1.3}, label="head")  # within history's states
    scaled = judged("conv", history, head)
    assert scaled.kind is Kind.UNCHANGED
    # Levels stay in milliseconds, near the benchmark's cost on the nominal machine.
    assert 1.0 < scaled.assessment.base_median < 2.2
    assert 1.0 < scaled.assessment.head_median < 2.2
    # Without the reference the rule is as safe, but can only promise a much coarser bound.
    raw = judged("conv", [without_reference(r) for r in history],
                 [without_reference(r) for r in head])
    assert raw.kind is not Kind.REGRESSION
    assert scaled.assessment.detectable < 0.05
    assert raw.assessment.detectable > 3 * scaled.assessment.detectable


def test_a_benchmark_is_scaled_only_when_every_run_has_the_same_reference():
    history = runs(10, seed=5)
    head = runs(1, seed=6, label="head")
    keys = [r.benchmark_id for r in head[0].results]
    assert set(speed_scaling(history, head, keys).scales) == set(keys)
    older = [without_reference(history[0]), *history[1:]]
    assert speed_scaling(older, head, keys).scales == {}
    other = runs(1, seed=7, reference="another-block", label="other")
    assert speed_scaling(history, other, keys).scales == {}


def with_reference_slower(run, name: str, factor: float):
    """`run` with the reference of `name` reading `factor` slower, its samples unchanged: the
    fixed block alone hit a state of the machine."""
    from dataclasses import replace

    results = [replace(r, extra={**r.extra, "reference_samples": [
        v * factor for v in r.extra["reference_samples"]]}) if r.name == name else r
        for r in run.results]
    return replace(run, results=tuple(results))


def test_a_change_measured_in_a_state_history_never_showed_is_not_called():
    history = runs(10, seed=8, speeds=dict.fromkeys(COSTS, 1.0))
    head = [with_reference_slower(runs(1, seed=9, speeds=dict.fromkeys(COSTS, 1.0),
                                       label="head")[0], "conv", 1.4)]
    conv = judged("conv", history, head)
    # sample / reference reads a 29% improvement, the samples alone nothing: neither can be
    # vouched for in a state beyond history's, so more measurement decides (confirmation)
    assert conv.kind is Kind.INCONCLUSIVE
    assert conv.note.startswith("measured as improvement, but the head's speed reference "
                                "read beyond every state history shows")
    assert judged("lstm", history, head).kind is Kind.UNCHANGED
    keys = [r.benchmark_id for r in head[0].results]
    conv_id = next(key for key in keys if key.startswith("busy/conv"))
    assert speed_scaling(history, head, keys).unseen_state == {conv_id}
    # A/B rounds are measured interleaved, in the same states.
    assert speed_scaling(history, head, keys, seen_states_only=False).unseen_state == set()
    # Fewer than five reference runs show no range of states.
    assert speed_scaling(history[-4:], head, keys).unseen_state == set()
    # Once history has seen that state, the ratio is judged as any other.
    seen_before = [*history[:-1], with_reference_slower(history[-1], "conv", 1.4)]
    assert speed_scaling(seen_before, head, keys).unseen_state == set()


def test_a_slowdown_stays_hidden_when_one_run_lacks_the_reference():
    history = runs(10, seed=1)
    history[0] = without_reference(history[0])
    head = runs(1, seed=2, slower={"lstm": 1.10}, speeds={"lstm": 0.85}, label="head")
    assert verdict_of("lstm", history, head) is not Kind.REGRESSION


@pytest.mark.parametrize("extra", [
    {"reference": REFERENCE, "reference_samples": [0.5, 0.5]},  # fewer than the samples
    {"reference": REFERENCE, "reference_samples": [0.5, 0.0, 0.5]},
    {"reference": REFERENCE, "reference_samples": [0.5, "x", 0.5]},
    {"reference_samples": [0.5, 0.5, 0.5]},  # unnamed
    {"reference": REFERENCE, "reference_samples": [[0.5], [0.5], [0.5]]},  # nested
])
def test_a_malformed_reference_is_not_used(extra):
    assert speed_ratios(measured("busy", "x", "latency", [1.0, 1.1, 1.2], extra=extra)) is None


def test_only_times_are_divided_by_the_reference():
    extra = {"reference": REFERENCE, "reference_samples": [0.5, 0.5, 0.5]}
    assert speed_ratios(measured("busy", "x", "latency", [1.0, 1.1, 1.2], extra=extra))
    assert speed_ratios(measured("busy", "x", "throughput", [1.0, 1.1, 1.2],
                                 extra=extra)) is None


def test_the_timer_times_the_reference_after_every_block_on_the_cpu_clock_only():
    policy = TimingPolicy(warmup=1, min_repeats=5, max_repeats=5, clock="cpu", reference=True)
    timing = measure(lambda: sum(range(2000)), policy)
    extra = timing.extra()
    assert extra["reference"] == REFERENCE
    assert len(extra["reference_samples"]) == len(timing.samples_ms) == 5
    assert all(v > 0 for v in extra["reference_samples"])
    wall = measure(lambda: sum(range(2000)), TimingPolicy(
        warmup=1, min_repeats=5, max_repeats=5, clock="wall", reference=True)).extra()
    assert "reference_samples" not in wall
    off = measure(lambda: sum(range(2000)), TimingPolicy(
        warmup=1, min_repeats=5, max_repeats=5, clock="cpu")).extra()
    assert "reference_samples" not in off
