"""Memory of the case's own process: peak RSS on CPU; allocator and NVML figures on GPU.

GPU functions are only called when CUDA is present; they are kept small and separate so
the CPU path never touches them.
"""

from __future__ import annotations

import os
import resource
import sys
from collections.abc import Mapping

import psutil

from torch_bench.measure import gpus

MB = 2**20


def current_rss_mb() -> float:
    return psutil.Process().memory_info().rss / MB


def peak_rss_mb() -> float:
    """Peak resident set size of this process since it started."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # Linux reports kilobytes, macOS bytes.
    return peak / MB if sys.platform == "darwin" else peak / 1024


def limit_address_space(limit_mb: float) -> None:
    """Cap this process's address space `limit_mb` above what it uses now, so that an
    allocation past the cap fails inside the process (a clean out-of-memory error) instead
    of bringing in the kernel's OOM killer."""
    current = psutil.Process().memory_info().vms
    cap = int(current + limit_mb * MB)
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


def reset_cuda_peaks(device) -> None:
    import torch

    torch.cuda.synchronize(device)
    torch.cuda.reset_peak_memory_stats(device)


def cuda_allocator_peaks_mb(device) -> dict[str, float]:
    import torch

    torch.cuda.synchronize(device)
    return {
        "peak_allocated": torch.cuda.max_memory_allocated(device) / MB,
        "peak_reserved": torch.cuda.max_memory_reserved(device) / MB,
    }


def nvml_memory_mb(device_index: int, pid: int, uuid: str | None = None,
                   environ: Mapping[str, str] = os.environ) -> dict[str, float]:
    """Memory this process holds on the GPU and memory used on the whole device, via NVML.

    The GPU is torch's `cuda:<device_index>`, found in NVML by `uuid` (torch's own for the
    device) or else through CUDA_VISIBLE_DEVICES; a MIG slice's own memory is read. The
    process's figure is only given where NVML's pids are this job's (the host's PID
    namespace: `gpus.pid_namespace`); inside a container of its own it is left out, never
    taken from whichever process happens to have the same number. Returns an empty dict
    when NVML is unavailable or the GPU is not found."""
    try:
        import pynvml

        pynvml.nvmlInit()
    except Exception:
        return {}
    try:
        devices = gpus.list_devices(pynvml)
        gpu = gpus.find_by_uuid(uuid, devices) if uuid else None
        gpu = gpu or gpus.visible_for_cuda_index(environ.get("CUDA_VISIBLE_DEVICES"), devices,
                                                 device_index)
        if gpu is None:
            return {}
        handle = pynvml.nvmlDeviceGetHandleByIndex(gpu.nvml_index)
        if gpu.mig_uuid and not gpu.mig_uuid.startswith("MIG-GPU-"):
            handle = pynvml.nvmlDeviceGetHandleByUUID(gpu.mig_uuid)
        figures = {"nvml_device_memory": pynvml.nvmlDeviceGetMemoryInfo(handle).used / MB}
        if gpus.pid_namespace() == "host":
            for proc in pynvml.nvmlDeviceGetComputeRunningProcesses(handle):
                if proc.pid == pid and proc.usedGpuMemory is not None:
                    figures["nvml_process_memory"] = proc.usedGpuMemory / MB
        return figures
    except Exception:
        return {}
    finally:
        pynvml.nvmlShutdown()


def is_out_of_memory(exc: BaseException) -> bool:
    """Whether an exception means the case ran out of memory (host or device)."""
    if isinstance(exc, MemoryError):
        return True
    name = type(exc).__name__
    text = str(exc)
    return name == "OutOfMemoryError" or any(
        marker in text
        for marker in ("out of memory", "can't allocate memory", "Cannot allocate memory")
    )
