"""Two clocks and the interruptions behind every sample: CPU time beside the device's clock,
which clock the samples are, and blocks that lost the core to another process."""

import multiprocessing
import os
import statistics
import time

import pytest

from torch_bench.errors import UserError
from torch_bench.measure.clock_choice import choose_clock
from torch_bench.measure.environment import fingerprint
from torch_bench.measure.timer import CudaClock, TimingPolicy, measure

FEW = dict(warmup=1, min_repeats=6, max_repeats=6, max_time_s=5)


def sleep_then_spin():
    time.sleep(0.003)  # 3 ms waiting: wall time, no CPU time
    end = time.process_time() + 0.0005
    while time.process_time() < end:
        pass


def test_cpu_clock_samples_leave_out_waiting_and_keep_the_wall_time_beside_them():
    timing = measure(sleep_then_spin, TimingPolicy(clock="cpu", **FEW))
    extra = timing.extra()
    assert extra["clock"] == "cpu" and "cpu_samples" not in extra
    wall = extra["wall_samples"]
    assert len(wall) == len(timing.samples_ms) == 6
    # Every wall sample holds the 3 ms sleep; the CPU time of a sleep is next to nothing.
    assert min(wall) >= 3.0
    assert statistics.median(timing.samples_ms) < statistics.median(wall) - 2.0
    assert extra["cpu_wall_ratio"] < 0.8  # what `run` warns about on the CPU clock


def test_wall_clock_is_the_default_and_keeps_cpu_time_beside_it():
    timing = measure(sleep_then_spin, TimingPolicy(**FEW))
    extra = timing.extra()
    assert extra["clock"] == "wall" and "wall_samples" not in extra
    assert min(timing.samples_ms) >= 3.0
    assert len(extra["cpu_samples"]) == 6
    assert statistics.median(extra["cpu_samples"]) < statistics.median(timing.samples_ms) - 2.0
    assert len(extra["involuntary_switches"]) == 6 and 0 <= extra["interrupted_share"] <= 1


def _spin_on(cpu: int, seconds: float) -> None:
    os.sched_setaffinity(0, {cpu})
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def _spin_cpu(seconds: float):
    def spin():
        end = time.process_time() + seconds
        while time.process_time() < end:
            pass
    return spin


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs CPU affinity (Linux)")
def test_blocks_that_share_their_core_with_a_busy_process_are_marked_interrupted():
    cpu = min(os.sched_getaffinity(0))
    before = os.sched_getaffinity(0)
    hog = multiprocessing.get_context("spawn").Process(target=_spin_on, args=(cpu, 20.0))
    os.sched_setaffinity(0, {cpu})
    hog.start()
    try:
        time.sleep(0.3)  # the hog is spinning on our core
        # Blocks of 0.2 s of CPU work each: the scheduler must switch the hog in meanwhile.
        timing = measure(_spin_cpu(0.2), TimingPolicy(clock="cpu", warmup=0, min_repeats=3,
                                                      max_repeats=3, max_time_s=60,
                                                      loops={"latency": 1}), metric="latency")
    finally:
        hog.kill()
        hog.join()
        os.sched_setaffinity(0, before)
    extra = timing.extra()
    assert all(n > 0 for n in extra["involuntary_switches"])
    assert extra["interrupted_share"] == 1.0
    # The wall clock counted the hog's slices; CPU time did not.
    assert sum(extra["wall_samples"]) > sum(timing.samples_ms)


def test_the_cpu_clock_refuses_gpu_work():
    clock = CudaClock.__new__(CudaClock)  # no GPU here: only its name matters
    with pytest.raises(ValueError, match="GPU"):
        measure(lambda: None, TimingPolicy(clock="cpu", **FEW), clock)


def test_an_unknown_clock_is_rejected():
    with pytest.raises(ValueError, match="clock"):
        TimingPolicy(clock="sundial")


def test_auto_takes_cpu_time_on_one_thread_and_wall_time_otherwise():
    assert choose_clock("auto", "cpu", 1).clock == "cpu"
    many = choose_clock("auto", "cpu", 4)
    assert many.clock == "wall" and "--threads 1" in many.why
    assert choose_clock("auto", "cuda:0", 1).clock == "wall"
    assert choose_clock("wall", "cpu", 1).clock == "wall"


def test_cpu_time_of_many_threads_is_allowed_with_a_warning_and_of_a_gpu_refused():
    warned = choose_clock("cpu", "cpu", 4)
    assert warned.clock == "cpu" and "4 torch threads" in warned.warning
    assert choose_clock("cpu", "cpu", 1).warning is None
    with pytest.raises(UserError, match="--clock cpu: CPU time does not see the work a GPU"):
        choose_clock("cpu", "cuda", 1)


def test_cpu_clock_runs_get_their_own_fingerprint_and_wall_runs_keep_theirs():
    env = {"torch": "2.13.0", "threads": 1, "cpu_model": "x"}
    assert fingerprint({**env, "clock": "wall"}) == fingerprint(env)
    assert fingerprint({**env, "clock": "cpu"}) != fingerprint(env)
