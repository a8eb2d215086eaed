"""Self-hosted GPU runners: the pre-flight, the environment and NVML memory read only the GPUs
this job may use (CUDA_VISIBLE_DEVICES, indices or UUIDs, matched in NVML by UUID), and
processes are matched by pid only where NVML's pids are this job's.

NVML is replaced by a fake host of eight GPUs that answers as pynvml does; the PID namespace
check is also run for real inside a new PID namespace (`unshare`) where the system allows."""

import os
import shutil
import subprocess
import sys
import types
from dataclasses import dataclass, field

import pytest

from torch_bench.measure import environment, gpus, memory, preflight
from torch_bench.measure.gpus import NvmlDevice, resolve_visible

MB = 2**20


@dataclass
class Proc:
    pid: int
    usedGpuMemory: int | None = None


@dataclass
class FakeGpu:
    uuid: str
    name: str = "NVIDIA H100 80GB HBM3"
    used_mb: int = 500
    processes: list = field(default_factory=list)
    temperature_c: int = 40
    migs: list = field(default_factory=list)  # FakeGpu slices


class NVMLError(Exception):
    pass


def uuid_of(index: int) -> str:
    return f"GPU-{index:02d}c0ffee-aaaa-bbbb-cccc-{index:012d}"


def fake_nvml(gpus_: list[FakeGpu]):
    """A pynvml module over `gpus_`; handles are the FakeGpu objects themselves."""
    nvml = types.ModuleType("pynvml")
    nvml.NVML_CLOCK_SM, nvml.NVML_CLOCK_MEM = 1, 2
    nvml.NVML_TEMPERATURE_GPU, nvml.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN = 0, 1
    every = {g.uuid: g for g in gpus_} | {m.uuid: m for g in gpus_ for m in g.migs}

    def by_uuid(uuid):
        uuid = uuid if isinstance(uuid, str) else uuid.decode()
        if uuid not in every:
            raise NVMLError("Not Found")
        return every[uuid]

    def mig_count(handle):
        if not handle.migs:
            raise NVMLError("Not Supported")
        return 7

    def mig_by_index(handle, slot):
        if slot >= len(handle.migs):
            raise NVMLError("Not Found")
        return handle.migs[slot]

    nvml.nvmlInit = lambda: None
    nvml.nvmlShutdown = lambda: None
    nvml.nvmlSystemGetDriverVersion = lambda: "550.54.15"
    nvml.nvmlDeviceGetCount = lambda: len(gpus_)
    nvml.nvmlDeviceGetHandleByIndex = lambda index: gpus_[index]
    nvml.nvmlDeviceGetHandleByUUID = by_uuid
    nvml.nvmlDeviceGetUUID = lambda h: h.uuid
    nvml.nvmlDeviceGetName = lambda h: h.name
    nvml.nvmlDeviceGetMemoryInfo = lambda h: types.SimpleNamespace(total=80 * 1024 * MB,
                                                                    used=h.used_mb * MB)
    nvml.nvmlDeviceGetComputeRunningProcesses = lambda h: list(h.processes)
    nvml.nvmlDeviceGetGraphicsRunningProcesses = lambda h: []
    nvml.nvmlDeviceGetTemperature = lambda h, kind: h.temperature_c
    nvml.nvmlDeviceGetTemperatureThreshold = lambda h, kind: 90
    nvml.nvmlDeviceGetClockInfo = lambda h, kind: 1980
    nvml.nvmlDeviceGetMaxClockInfo = lambda h, kind: 1980
    nvml.nvmlDeviceGetPowerManagementLimit = lambda h: 700_000
    nvml.nvmlDeviceGetPowerManagementDefaultLimit = lambda h: 700_000
    nvml.nvmlDeviceGetPerformanceState = lambda h: 0
    nvml.nvmlDeviceGetCurrentClocksEventReasons = lambda h: 0
    nvml.nvmlDeviceGetMaxMigDeviceCount = mig_count
    nvml.nvmlDeviceGetMigDeviceHandleByIndex = mig_by_index
    return nvml


@pytest.fixture
def host(monkeypatch):
    """An 8-GPU host, one runner per GPU; NVML sees this test in the host's PID namespace."""
    machine = [FakeGpu(uuid_of(i), used_mb=1000 + i) for i in range(8)]
    monkeypatch.setitem(sys.modules, "pynvml", fake_nvml(machine))
    monkeypatch.setattr(gpus, "pid_namespace", lambda: "host")
    return machine


def gpu_findings(environ, own_pids=()):
    readings = preflight.read_gpus(own_pids=own_pids, environ=environ)
    return readings, preflight.evaluate(readings, cpu=None)


def test_another_runners_job_on_another_gpu_does_not_untrust_ours(host):
    host[1].processes = [Proc(5001, 30_000 * MB)]  # the runner of GPU 1 is busy
    readings, report = gpu_findings({"CUDA_VISIBLE_DEVICES": "0"})
    assert [r.index for r in readings] == [0]
    assert report.trusted
    readings, report = gpu_findings({"CUDA_VISIBLE_DEVICES": "1"})
    assert not report.trusted
    (failed,) = [f for f in report.findings if f.severity == "fail"]
    assert "cuda:0 = GPU 1" in failed.message and "5001" in failed.message


def test_without_cuda_visible_devices_every_gpu_is_checked(host):
    host[6].processes = [Proc(777)]
    readings, report = gpu_findings({})
    assert [r.index for r in readings] == list(range(8)) and not report.trusted


def test_memory_is_read_from_the_gpu_torch_calls_cuda_0(host):
    host[3].processes = [Proc(os.getpid(), 2048 * MB)]
    figures = memory.nvml_memory_mb(0, os.getpid(), environ={"CUDA_VISIBLE_DEVICES": "3"})
    assert figures["nvml_device_memory"] == pytest.approx(1003)  # GPU 3, not GPU 0
    assert figures["nvml_process_memory"] == pytest.approx(2048)
    # cuda:1 under "6,2" is NVML's GPU 2
    figures = memory.nvml_memory_mb(1, os.getpid(), environ={"CUDA_VISIBLE_DEVICES": "6,2"})
    assert figures["nvml_device_memory"] == pytest.approx(1002)


def test_torchs_own_uuid_of_the_device_wins_over_the_variable(host):
    bare = uuid_of(5)[len("GPU-"):]  # torch prints the UUID without the prefix
    figures = memory.nvml_memory_mb(0, os.getpid(), uuid=bare, environ={})
    assert figures["nvml_device_memory"] == pytest.approx(1005)


def test_uuid_lists_are_matched_by_uuid_and_by_unique_prefix(host):
    value = f"{uuid_of(5)},{uuid_of(2)[:12]}"
    readings, _ = gpu_findings({"CUDA_VISIBLE_DEVICES": value})
    assert [(r.cuda_index, r.index) for r in readings] == [(0, 5), (1, 2)]
    figures = memory.nvml_memory_mb(1, os.getpid(), environ={"CUDA_VISIBLE_DEVICES": value})
    assert figures["nvml_device_memory"] == pytest.approx(1002)


DEVICES = [NvmlDevice(i, uuid_of(i)) for i in range(8)]


@pytest.mark.parametrize("value, nvml_indices", [
    (None, list(range(8))),
    ("", []),  # an empty variable hides every GPU
    ("3", [3]),
    (" 4, 1 ", [4, 1]),
    ("1,9,3", [1]),  # ends at the first index past the last GPU
    ("2,-1,3", [2]),  # a negative index ends the list
    ("-1", []),
    ("1gpu", [1]),  # read as C's strtoul reads it
    ("5,5", []),  # a repeated entry hides them all
    ("0,GPU-00c0ffee", [0]),  # a list is of indices or of UUIDs, as its first entry
    (f"{uuid_of(7)},3", [7]),
    ("GPU-0", []),  # a prefix shared by several GPUs names none
    ("GPU-04c0ffee", [4]),  # a unique prefix
    ("GPU-ffffffff", []),
])
def test_cuda_visible_devices_is_read_as_cuda_reads_it(value, nvml_indices):
    assert [g.nvml_index for g in resolve_visible(value, DEVICES)] == nvml_indices


def test_mig_slices_are_found_by_their_uuid_and_their_parent_gpu():
    devices = [NvmlDevice(0, uuid_of(0)),
               NvmlDevice(1, uuid_of(1), ("MIG-aaaa1111-0000", "MIG-bbbb2222-0000"))]
    (gpu,) = resolve_visible("MIG-bbbb", devices)
    assert (gpu.nvml_index, gpu.mig_uuid) == (1, "MIG-bbbb2222-0000")
    (old,) = resolve_visible(f"MIG-GPU-{uuid_of(1)[4:]}/1/0", devices)
    assert old.nvml_index == 1 and old.mig_uuid.endswith("/1/0")


def test_a_job_on_another_mig_slice_does_not_untrust_ours(monkeypatch):
    ours, theirs = FakeGpu("MIG-aaaa1111-0000"), FakeGpu("MIG-bbbb2222-0000")
    theirs.processes = [Proc(9001)]
    parent = FakeGpu(uuid_of(0), migs=[ours, theirs], processes=[Proc(9001)])
    monkeypatch.setitem(sys.modules, "pynvml", fake_nvml([parent]))
    monkeypatch.setattr(gpus, "pid_namespace", lambda: "host")
    readings, report = gpu_findings({"CUDA_VISIBLE_DEVICES": "MIG-aaaa1111-0000"})
    assert readings[0].mig_uuid == "MIG-aaaa1111-0000" and report.trusted
    _, report = gpu_findings({"CUDA_VISIBLE_DEVICES": "MIG-bbbb2222-0000"})
    assert not report.trusted


def test_in_a_container_nvml_pids_are_never_taken_for_ours(host, monkeypatch):
    monkeypatch.setattr(gpus, "pid_namespace", lambda: "container")
    # NVML lists a host process whose pid happens to be this process's number in the container
    host[0].processes = [Proc(os.getpid(), 4096 * MB)]
    readings, report = gpu_findings({"CUDA_VISIBLE_DEVICES": "0"}, own_pids=[os.getpid()])
    assert readings[0].other_processes == (os.getpid(),) and not report.trusted
    (failed,) = [f for f in report.findings if f.severity == "fail"]
    assert "host pids" in failed.message and "PID namespace" in failed.message
    figures = memory.nvml_memory_mb(0, os.getpid(), environ={"CUDA_VISIBLE_DEVICES": "0"})
    assert "nvml_process_memory" not in figures and "nvml_device_memory" in figures
    env = environment.gpu_environment({"CUDA_VISIBLE_DEVICES": "0"})
    assert env["pid_namespace"] == "container"
    assert env["nvml_process_memory"].startswith("not recorded")


def test_in_the_host_namespace_our_own_pid_is_not_another_process(host):
    host[2].processes = [Proc(os.getpid())]
    _, report = gpu_findings({"CUDA_VISIBLE_DEVICES": "2"}, own_pids=[os.getpid()])
    assert report.trusted


def test_nvml_that_cannot_list_processes_is_a_warning_not_a_clean_bill(host):
    def refuse(handle):
        raise NVMLError("No Permission")

    sys.modules["pynvml"].nvmlDeviceGetComputeRunningProcesses = refuse
    sys.modules["pynvml"].nvmlDeviceGetGraphicsRunningProcesses = refuse
    _, report = gpu_findings({"CUDA_VISIBLE_DEVICES": "0"})
    (finding,) = [f for f in report.findings if f.check == "gpu_processes"]
    assert finding.severity == "warn" and "cannot list" in finding.message


def test_the_environment_records_this_jobs_gpus_and_runners_of_one_host_compare(host):
    host[5].name = host[0].name
    on_0 = environment.gpu_environment({"CUDA_VISIBLE_DEVICES": "0"})
    on_5 = environment.gpu_environment({"CUDA_VISIBLE_DEVICES": "5"})
    assert (on_5["gpu_count"], on_5["host_gpu_count"]) == (1, 8)
    (gpu,) = on_5["gpus"]
    assert (gpu["uuid"], gpu["nvml_index"], gpu["cuda_index"]) == (uuid_of(5), 5, 0)
    base = {"torch": "2.13.0", "cpu_model": "x"}
    assert environment.fingerprint({**base, **on_0}) == environment.fingerprint({**base, **on_5})
    everything = environment.gpu_environment({})
    assert everything["gpu_count"] == 8


def test_pid_namespace_reads_the_namespace_link(tmp_path):
    host_link, own_link = tmp_path / "host", tmp_path / "own"
    host_link.symlink_to(gpus.HOST_PID_NAMESPACE)
    own_link.symlink_to("pid:[4026532179]")
    assert gpus.pid_namespace(str(host_link)) == "host"
    assert gpus.pid_namespace(str(own_link)) == "container"
    assert gpus.pid_namespace(str(tmp_path / "missing")) == "unknown"


def test_a_process_in_a_pid_namespace_of_its_own_knows_it():
    unshare = shutil.which("unshare")
    probe = [sys.executable, "-c",
             "from torch_bench.measure.gpus import pid_namespace; print(pid_namespace())"]
    if unshare is None or subprocess.run([unshare, "-Urpf", "--mount-proc", "true"],
                                         capture_output=True).returncode != 0:
        pytest.skip("no unprivileged PID namespaces here")
    inside = subprocess.run([unshare, "-Urpf", "--mount-proc", *probe], capture_output=True,
                            text=True, check=True)
    assert inside.stdout.strip() == "container"
