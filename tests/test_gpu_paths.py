"""The GPU code paths, run without a GPU: torch.cuda (events, synchronize, allocator
statistics) and the pynvml module are replaced by fakes that behave as the real ones do.
What only a real GPU can confirm (event timing accuracy, real NVML figures) is listed in the
README."""

import sys
import types
from dataclasses import dataclass

import pytest
import torch

from torch_bench.measure import environment, memory
from torch_bench.measure.case_results import memory_results
from torch_bench.measure.timer import CudaClock, TimingPolicy, clock_for
from torch_bench.suites.base import CaseContext, CaseSpec, Output

MB = 2**20


class FakeCuda:
    """torch.cuda's timing and memory calls over a fake GPU timeline (milliseconds)."""

    def __init__(self):
        self.now_ms = 0.0
        self.calls = []
        self.allocated, self.reserved = 0, 0

    def install(self, monkeypatch):
        fake = self

        class Event:
            def __init__(self, enable_timing=False):
                assert enable_timing, "timing events must be created with enable_timing"
                self.at = None

            def record(self, stream=None):
                fake.calls.append("record")
                self.at = fake.now_ms

            def synchronize(self):
                fake.calls.append("event.synchronize")

            def elapsed_time(self, end):
                assert self.at is not None and end.at is not None, "event not recorded"
                return end.at - self.at

        monkeypatch.setattr(torch.cuda, "Event", Event)
        monkeypatch.setattr(torch.cuda, "synchronize",
                            lambda device=None: fake.calls.append(f"synchronize:{device}"))
        monkeypatch.setattr(torch.cuda, "reset_peak_memory_stats", fake.reset)
        monkeypatch.setattr(torch.cuda, "max_memory_allocated", lambda device=None: fake.allocated)
        monkeypatch.setattr(torch.cuda, "max_memory_reserved", lambda device=None: fake.reserved)
        return self

    def reset(self, device=None):
        self.calls.append(f"reset:{device}")
        self.allocated = self.reserved = 0


@pytest.fixture
def cuda(monkeypatch):
    return FakeCuda().install(monkeypatch)


def test_cuda_clock_times_between_events_after_synchronising(cuda):
    clock = clock_for("cuda:0")
    assert isinstance(clock, CudaClock)
    cuda.now_ms = 5.0
    clock.start()
    cuda.now_ms = 7.25  # the queued kernels take 2.25 ms on the GPU
    assert clock.stop() == pytest.approx(2.25)
    # the work queued before start() is waited for first; the end event is waited on
    assert cuda.calls == ["synchronize:cuda:0", "record", "record", "event.synchronize"]


def test_allocator_peaks_are_reset_then_read_in_mb(cuda):
    cuda.allocated, cuda.reserved = 300 * MB, 512 * MB
    memory.reset_cuda_peaks("cuda:0")
    assert cuda.calls == ["synchronize:cuda:0", "reset:cuda:0"]
    cuda.allocated, cuda.reserved = 96 * MB, 128 * MB
    assert memory.cuda_allocator_peaks_mb("cuda:0") == {
        "peak_allocated": pytest.approx(96.0), "peak_reserved": pytest.approx(128.0)}


@dataclass
class Process:
    pid: int
    usedGpuMemory: int | None


def fake_pynvml(*, fail_init=False, processes=(), driver=b"550.54", failing=()):
    module = types.ModuleType("pynvml")
    module.NVML_CLOCK_SM, module.NVML_CLOCK_MEM = 1, 2
    state = {"initialised": 0}

    def init():
        if fail_init:
            raise RuntimeError("NVML Shared Library Not Found")
        state["initialised"] += 1

    def call(name, value):
        def function(*args):
            if name in failing:
                raise RuntimeError(f"{name}: not supported")
            return value(*args) if callable(value) else value
        return function

    module.nvmlInit = init
    module.nvmlShutdown = lambda: state.__setitem__("initialised", state["initialised"] - 1)
    module.nvmlDeviceGetCount = lambda: 1
    module.nvmlDeviceGetHandleByIndex = lambda index: f"handle{index}"
    module.nvmlSystemGetDriverVersion = lambda: driver
    module.nvmlDeviceGetName = call("name", b"NVIDIA A100-SXM4-40GB")
    module.nvmlDeviceGetUUID = call("uuid", "GPU-1234")
    module.nvmlDeviceGetMemoryInfo = call("memory", types.SimpleNamespace(
        total=40 * 1024 * MB, used=1536 * MB))
    module.nvmlDeviceGetPowerManagementLimit = call("power", 400_000)  # milliwatts
    module.nvmlDeviceGetPerformanceState = call("pstate", 0)
    module.nvmlDeviceGetClockInfo = call("clock", lambda handle, kind: 1410 if kind == 1 else 1215)
    module.nvmlDeviceGetMaxClockInfo = call("max_clock", 1410)
    module.nvmlDeviceGetComputeRunningProcesses = call("processes", list(processes))
    module.state = state
    return module


def test_nvml_memory_of_this_process_and_of_the_device(monkeypatch):
    nvml = fake_pynvml(processes=[Process(11, 64 * MB), Process(42, 700 * MB)])
    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    assert memory.nvml_memory_mb(0, pid=42) == {
        "nvml_device_memory": pytest.approx(1536.0),
        "nvml_process_memory": pytest.approx(700.0)}
    assert nvml.state["initialised"] == 0  # shut down again
    assert memory.nvml_memory_mb(0, pid=7) == {"nvml_device_memory": pytest.approx(1536.0)}


@pytest.mark.parametrize("nvml", [
    fake_pynvml(fail_init=True), fake_pynvml(failing=("memory",))])
def test_nvml_unavailable_or_failing_gives_no_figures(monkeypatch, nvml):
    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    assert memory.nvml_memory_mb(0, pid=1) == {}


def test_a_gpu_case_records_allocator_and_nvml_memory_as_results(monkeypatch, cuda):
    import os

    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml(
        processes=[Process(os.getpid(), 300 * MB)]))
    cuda.allocated, cuda.reserved = 200 * MB, 256 * MB
    case = CaseSpec("rnns", "cudnn", {"device": "cuda:0"}, (Output("forward_time", "lstm"),))
    results = {r.metric: r for r in memory_results(case, CaseContext("cuda:0", TimingPolicy()),
                                                    rss_before_mb=100.0)}
    assert set(results) == {"peak_rss", "peak_allocated", "peak_reserved",
                            "nvml_device_memory", "nvml_process_memory"}
    assert results["peak_allocated"].summary.median == pytest.approx(200.0)
    assert results["nvml_process_memory"].summary.median == pytest.approx(300.0)
    assert all(r.unit == "MB" for r in results.values())


def test_gpu_environment_fields_from_nvml(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml())
    env = environment.gpu_environment()
    assert (env["gpu_count"], env["gpu_name"], env["driver"]) == (
        1, "NVIDIA A100-SXM4-40GB", "550.54")
    (gpu,) = env["gpus"]
    assert gpu["uuid"] == "GPU-1234" and gpu["memory_mb"] == pytest.approx(40 * 1024)
    assert gpu["power_limit_w"] == pytest.approx(400.0) and gpu["performance_state"] == 0
    assert (gpu["sm_clock_mhz"], gpu["sm_clock_max_mhz"], gpu["memory_clock_mhz"]) == (
        1410, 1410, 1215)


def test_gpu_fields_nvml_cannot_read_are_left_empty_and_no_nvml_means_no_gpu(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml(failing=("power", "uuid")))
    (gpu,) = environment.gpu_environment()["gpus"]
    assert gpu["power_limit_w"] is None and gpu["uuid"] is None and gpu["name"]
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml(fail_init=True))
    assert environment.gpu_environment() == {}


def test_the_gpu_model_is_part_of_the_fingerprint(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml())
    with_gpu = environment.collect_environment()
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml(fail_init=True))
    without = environment.collect_environment()
    assert with_gpu["gpu_name"] == "NVIDIA A100-SXM4-40GB" and without["gpu_name"] is None
    assert with_gpu["fingerprint"] != without["fingerprint"]
