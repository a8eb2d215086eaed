"""The environment a run measured in, and its fingerprint.

Only results with the same fingerprint are compared by default: it hashes the fields that
change what a benchmark measures (hardware, library versions), not incidental ones.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
from collections.abc import Mapping
from importlib import metadata
from typing import Any

import psutil

from torch_bench.measure import gpus

FINGERPRINT_FIELDS = (
    "torch",
    "cuda",
    "cudnn",
    "python",
    "cpu_model",
    "cpu_count",
    "threads",
    "gpu_name",
    "gpu_count",
    "driver",
)


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def torch_environment() -> dict[str, Any]:
    import torch

    cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    return {
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": str(cudnn) if cudnn else None,
        "threads": torch.get_num_threads(),
        "cuda_available": torch.cuda.is_available(),
    }


def gpu_environment(environ: Mapping[str, str] = os.environ) -> dict[str, Any]:
    """Facts of the GPUs this job may use (CUDA_VISIBLE_DEVICES, matched in NVML by UUID),
    through NVML; empty when there is no NVIDIA driver. `gpu_count` and `gpu_name` are this
    job's (so one runner per GPU on an 8-GPU host records 1), `host_gpu_count` NVML's."""
    try:
        import pynvml

        pynvml.nvmlInit()
    except Exception:
        return {}
    try:
        devices = gpus.list_devices(pynvml)
        visible = gpus.resolve_visible(environ.get("CUDA_VISIBLE_DEVICES"), devices)
        described = [_describe_visible(pynvml, gpu) for gpu in visible]
        driver = pynvml.nvmlSystemGetDriverVersion()
    except Exception:
        return {}
    finally:
        pynvml.nvmlShutdown()
    first = described[0] if described else {}
    namespace = gpus.pid_namespace()
    return {
        "gpu_count": len(described),
        "gpu_name": first.get("name"),
        "driver": driver if isinstance(driver, str) else driver.decode(),
        "gpus": described,
        "host_gpu_count": len(devices),
        "cuda_visible_devices": environ.get("CUDA_VISIBLE_DEVICES"),
        "pid_namespace": namespace,
        "nvml_process_memory": "recorded (pid matched)" if namespace == "host" else
        "not recorded: NVML reports host pids and this job runs in a PID namespace of its own",
    }


def _describe_visible(pynvml, gpu: gpus.VisibleGpu) -> dict[str, Any]:
    described = _describe_gpu(pynvml, pynvml.nvmlDeviceGetHandleByIndex(gpu.nvml_index))
    described.update(cuda_index=gpu.cuda_index, nvml_index=gpu.nvml_index)
    if gpu.mig_uuid:
        described["mig_uuid"] = gpu.mig_uuid
    return described


def _describe_gpu(pynvml, handle) -> dict[str, Any]:
    def attempt(call, *args):
        try:
            return call(handle, *args)
        except Exception:
            return None

    name = pynvml.nvmlDeviceGetName(handle)
    uuid = attempt(pynvml.nvmlDeviceGetUUID)
    memory = attempt(pynvml.nvmlDeviceGetMemoryInfo)
    power = attempt(pynvml.nvmlDeviceGetPowerManagementLimit)
    return {
        "name": name if isinstance(name, str) else name.decode(),
        "uuid": uuid if isinstance(uuid, str) or uuid is None else uuid.decode(),
        "memory_mb": memory.total / 2**20 if memory else None,
        "power_limit_w": power / 1000 if power else None,
        "performance_state": attempt(pynvml.nvmlDeviceGetPerformanceState),
        "sm_clock_mhz": attempt(pynvml.nvmlDeviceGetClockInfo, pynvml.NVML_CLOCK_SM),
        "sm_clock_max_mhz": attempt(pynvml.nvmlDeviceGetMaxClockInfo, pynvml.NVML_CLOCK_SM),
        "memory_clock_mhz": attempt(pynvml.nvmlDeviceGetClockInfo, pynvml.NVML_CLOCK_MEM),
    }


def collect_environment(torch_facts: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """This machine's environment; `torch_facts` are `torch_environment()` as read elsewhere
    (the process the cases are forked from), else they are read here."""
    env: dict[str, Any] = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "ram_mb": round(psutil.virtual_memory().total / 2**20),
        "transformers": _version("transformers"),
        "gpu_count": 0,
        "gpu_name": None,
        "driver": None,
    }
    env.update(torch_facts if torch_facts is not None else torch_environment())
    env.update(gpu_environment())
    env["fingerprint"] = fingerprint(env)
    return env


def fingerprint(env: dict[str, Any]) -> str:
    """A short stable hash of the fields that make results comparable. Samples on the CPU
    clock (`env["clock"] == "cpu"`) are not comparable with wall times, so that clock is
    hashed too; a run on the wall clock keeps the fingerprint runs had before clocks were
    recorded."""
    picked = {name: env.get(name) for name in FINGERPRINT_FIELDS}
    if env.get("clock") == "cpu":
        picked["clock"] = "cpu"
    digest = hashlib.sha256(json.dumps(picked, sort_keys=True).encode()).hexdigest()
    return digest[:16]
