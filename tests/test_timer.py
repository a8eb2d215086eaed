import gc
import time

import pytest

from torch_bench.measure.timer import TimingPolicy, measure


def test_tiny_operation_is_timed_in_blocks():
    calls = []
    timing = measure(lambda: calls.append(1), TimingPolicy(warmup=2, max_time_s=5))
    assert timing.number > 100  # a block of one append would be mostly timer overhead
    assert len(timing.samples_ms) >= 10
    assert all(s > 0 for s in timing.samples_ms)
    assert sorted(timing.samples_ms)[len(timing.samples_ms) // 2] < 0.01  # an append: < 10 us
    assert timing.threads >= 1


def test_collector_is_off_while_timing_and_restored_after():
    seen = []
    measure(lambda: seen.append(gc.isenabled()), TimingPolicy(warmup=0, max_repeats=10))
    assert gc.isenabled()
    # Calibration runs before the timed loop; every call inside the loop sees gc disabled.
    assert seen[-1] is False


class TurnClock:
    """Reads the given milliseconds in turn, however long the calls really took: a spread
    that the machine's load cannot change."""

    name = "wall"

    def __init__(self, *readings: float) -> None:
        self.readings = readings
        self.stops = 0

    def start(self) -> None:
        pass

    def stop(self) -> float:
        self.stops += 1
        return self.readings[(self.stops - 1) % len(self.readings)]


def test_stops_early_when_spread_is_small():
    timing = measure(lambda: time.sleep(0.002),
                     TimingPolicy(warmup=1, min_repeats=5, max_repeats=500, max_time_s=10,
                                  target_rel_iqr=0.5), clock=TurnClock(2.0, 2.1))
    assert timing.stop_reason == "spread"
    assert len(timing.samples_ms) == 5
    assert all(s >= 2.0 for s in timing.samples_ms)


class StepClock:
    """Seconds that move on by `step` at every reading: a time budget that ends after a known
    number of readings, however long the calls really take."""

    def __init__(self, step: float) -> None:
        self.step = step
        self.readings = 0

    def __call__(self) -> float:
        self.readings += 1
        return self.readings * self.step


def test_time_budget_ends_a_noisy_measurement():  # 2 and 8 ms in turn: never settles
    budget = StepClock(0.01)  # the 0.3 s budget: spent at the 31st reading
    timing = measure(lambda: None,
                     TimingPolicy(warmup=0, min_repeats=5, max_repeats=10_000, max_time_s=0.3,
                                  target_rel_iqr=0.01), clock=TurnClock(2.0, 8.0), now=budget)
    assert timing.stop_reason == "time"
    assert timing.number == 1
    # one reading to set the deadline, then one after each sample from the fifth on
    assert len(timing.samples_ms) == budget.readings - 1 + 4 == 34


def test_setup_runs_untimed_before_each_call():
    order = []
    timing = measure(lambda: order.append("call"), TimingPolicy(warmup=1, max_repeats=10),
                     setup=lambda: order.append("setup"))
    assert timing.number == 1
    assert order[:4] == ["setup", "call", "setup", "call"]
    assert order.count("setup") == order.count("call")


def test_repeat_bounds_win_over_the_time_budget():
    timing = measure(lambda: time.sleep(0.001),
                     TimingPolicy(warmup=0, min_repeats=20, max_repeats=20, max_time_s=0.01),
                     clock=TurnClock(1.0))  # 1 ms calls however busy the machine
    assert len(timing.samples_ms) == 20


def test_nloops_takes_exactly_that_many_samples_of_one_call_each():
    calls = []
    timing = measure(lambda: calls.append(1),
                     TimingPolicy(warmup=2, nloops=7, max_time_s=0.001, target_rel_iqr=1.0))
    assert len(timing.samples_ms) == 7 and timing.number == 1
    assert len(calls) == 2 + 7  # warmup, then one call per sample: no calibration blocks
    assert timing.extra()["loops"] == 1 and timing.stop_reason == "nloops"


def test_a_recorded_calls_per_sample_count_is_reused_instead_of_calibrating():
    calls = []
    policy = TimingPolicy(warmup=0, min_repeats=4, max_repeats=4, loops={"forward_time": 37})
    timing = measure(lambda: calls.append(1), policy, metric="forward_time")
    assert timing.number == 37 and timing.extra()["loops"] == 37
    assert len(calls) == 4 * 37  # no calibration calls
    calibrated = measure(lambda: calls.append(1), policy, metric="backward_time")
    assert calibrated.number > 100  # not recorded for this metric: calibrated as before


def test_one_call_longer_than_the_budget_is_warmed_once_timed_once_and_done():
    calls = []
    # every call reads 5 s on the device's clock; the budget is 1 s and 10 samples are asked
    timing = measure(lambda: calls.append(1),
                     TimingPolicy(warmup=3, min_repeats=10, max_repeats=20, max_time_s=1.0),
                     clock=TurnClock(5000.0))
    assert len(calls) == 2  # one warm-up call (it may compile), one timed: no calibration
    assert timing.stop_reason == "time" and timing.number == 1
    assert timing.samples_ms == (5000.0,)


def test_without_warmup_the_first_timed_call_still_ends_it():
    calls = []
    timing = measure(lambda: calls.append(1),
                     TimingPolicy(warmup=0, min_repeats=10, max_repeats=20, max_time_s=1.0),
                     clock=TurnClock(5000.0))
    assert timing.stop_reason == "time" and len(timing.samples_ms) == 1


@pytest.mark.parametrize("call_ms, budget_s, bounds", [
    (500.0, 1.0, (10, 20)),  # within the budget
    (500.0, 0.2, (10, 20)),  # over the budget, but under a second: ten are cheap enough
    (5000.0, 1.0, (10, 10)),  # a count fixed by the caller is taken whatever it costs
], ids=["within", "under-a-second", "fixed-count"])
def test_the_repeat_bounds_hold_unless_one_long_call_spends_the_budget(call_ms, budget_s,
                                                                        bounds):
    timing = measure(lambda: None,
                     TimingPolicy(warmup=1, min_repeats=bounds[0], max_repeats=bounds[1],
                                  max_time_s=budget_s, target_rel_iqr=0.5),
                     clock=TurnClock(call_ms))
    assert len(timing.samples_ms) >= 10
