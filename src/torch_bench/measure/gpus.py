"""Which GPUs this job may use, found in NVML by UUID.

CUDA numbers only the devices `CUDA_VISIBLE_DEVICES` lets through, in the order it lists them;
NVML ignores the variable and numbers every GPU of the host (or of the container, when the
container runtime hands it only some GPUs). Under `CUDA_VISIBLE_DEVICES=3`, torch's `cuda:0` is
NVML's GPU 3. `resolve_visible` maps CUDA's list onto NVML's devices:

- an index `i` is NVML's device `i`. Both number by PCI bus id when `CUDA_DEVICE_ORDER` is
  `PCI_BUS_ID`, and on a host of identical GPUs under CUDA's default order as well; UUIDs
  are exact everywhere (and a job process can give torch's own UUID, `uuid_of_torch_device`);
- `GPU-<uuid>` (or a unique prefix of it, as CUDA accepts) is the GPU of that UUID;
- `MIG-<uuid>` and the older `MIG-GPU-<uuid>/<gi>/<ci>` are a MIG slice; its parent GPU
  carries temperature, power and clocks.

The list is read as CUDA (and torch.cuda) read it: all indices or all UUIDs of one kind, as
the first entry is; it ends at the first entry that names no device (so `-1` hides every
GPU); a repeated entry or an empty variable hides them all. Resolution is pure
(`resolve_visible` over `NvmlDevice` records); `list_devices` reads NVML.

Process ids: NVML reports processes by their pid in the host's PID namespace. Inside a
container with a PID namespace of its own, this job's pids are different numbers, and a
host pid can equal an unrelated pid of the container. `pid_namespace()` tells which case
applies; processes are only matched by pid in the host's namespace.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

# The inode of the initial PID namespace (PROC_PID_INIT_INO in the Linux kernel).
HOST_PID_NAMESPACE = "pid:[4026531836]"


@dataclass(frozen=True)
class NvmlDevice:
    """One GPU as NVML lists it, with its MIG slices (their UUIDs) when MIG is on."""

    index: int
    uuid: str
    mig_uuids: tuple[str, ...] = ()


@dataclass(frozen=True)
class VisibleGpu:
    """A GPU this job may use: CUDA's index for it, NVML's index and UUID, and the MIG slice
    when CUDA_VISIBLE_DEVICES names one."""

    cuda_index: int
    nvml_index: int
    uuid: str
    mig_uuid: str | None = None


def _leading_number(entry: str) -> int:
    """What C's strtoul reads at the start of an entry (`1gpu` is 1); -1 for none."""
    digits = ""
    for position, char in enumerate(entry.strip()):
        if char.isdigit() or (position == 0 and char in "+-"):
            digits += char
        else:
            break
    return int(digits) if digits.lstrip("+-") else -1


def _bare(uuid: str) -> str:
    """A UUID without its `GPU-`/`MIG-` prefix, lower case."""
    text = uuid.strip().lower()
    for prefix in ("mig-gpu-", "gpu-", "mig-"):
        if text.startswith(prefix):
            return text[len(prefix):]
    return text


def _by_prefix(entry: str, candidates: Sequence[tuple[NvmlDevice, str | None, str]]):
    """The one (device, mig) whose UUID starts with `entry`; None if none or several."""
    wanted = _bare(entry)
    hits = [(device, mig) for device, mig, uuid in candidates if _bare(uuid).startswith(wanted)]
    return hits[0] if len(hits) == 1 else None


def _match_entries(value: str, devices: Sequence[NvmlDevice]):
    """(device, MIG slice) per entry in CUDA's order, as CUDA reads the variable: a list is
    of indices, or of `GPU-` UUIDs, or of `MIG-` UUIDs, as its first entry is; it ends at the
    first entry that names no device (or is of another kind); a repeated entry hides every
    GPU (the rules torch.cuda follows when it counts devices)."""
    entries = [entry.strip() for entry in value.split(",")]
    kind = "GPU-" if value.startswith("GPU-") else "MIG-" if value.startswith("MIG-") else None
    gpus = [(d, None, d.uuid) for d in devices]
    migs = [(d, m, m) for d in devices for m in d.mig_uuids]
    matches: list[tuple[NvmlDevice, str | None]] = []
    for entry in entries:
        if kind is None:
            number = _leading_number(entry)
            match = (devices[number], None) if 0 <= number < len(devices) else None
        elif not entry.startswith(kind):
            match = None
        elif entry.startswith("MIG-GPU-"):  # MIG-GPU-<gpu uuid>/<gi>/<ci>, drivers before R470
            gpu_uuid = entry[len("MIG-GPU-"):].partition("/")[0]
            match = next(((d, entry) for d in devices if _bare(d.uuid) == gpu_uuid.lower()),
                         None)
        else:
            match = _by_prefix(entry, migs if kind == "MIG-" else gpus)
        if match is None:
            break
        if match in matches:
            return []
        matches.append(match)
    return matches


def resolve_visible(value: str | None, devices: Sequence[NvmlDevice]) -> list[VisibleGpu]:
    """The GPUs CUDA_VISIBLE_DEVICES=`value` lets this job use, in CUDA's order."""
    if value is None:
        return [VisibleGpu(i, d.index, d.uuid) for i, d in enumerate(devices)]
    return [VisibleGpu(cuda_index, device.index, device.uuid, mig)
            for cuda_index, (device, mig) in enumerate(_match_entries(value, devices))]


def visible_for_cuda_index(value: str | None, devices: Sequence[NvmlDevice],
                           cuda_index: int) -> VisibleGpu | None:
    """The GPU torch calls `cuda:<cuda_index>`, or None when there is no such GPU."""
    visible = resolve_visible(value, devices)
    return visible[cuda_index] if 0 <= cuda_index < len(visible) else None


def find_by_uuid(uuid: str, devices: Sequence[NvmlDevice]) -> VisibleGpu | None:
    """The device (or MIG slice) with this UUID, whatever its prefix."""
    wanted = _bare(uuid)
    for device in devices:
        if _bare(device.uuid) == wanted:
            return VisibleGpu(-1, device.index, device.uuid)
        for mig in device.mig_uuids:
            if _bare(mig) == wanted:
                return VisibleGpu(-1, device.index, device.uuid, mig)
    return None


def uuid_of_torch_device(device) -> str | None:
    """The UUID CUDA gives a torch device (in a process that uses CUDA), or None."""
    try:
        import torch

        uuid = torch.cuda.get_device_properties(device).uuid
    except Exception:  # no CUDA, or a torch without the property
        return None
    return str(uuid) if uuid else None


def pid_namespace(link: str = "/proc/self/ns/pid") -> str:
    """`host` when this process sees the host's pids (as NVML reports them), `container`
    when it runs in a PID namespace of its own, `unknown` when that cannot be read."""
    try:
        return "host" if os.readlink(link) == HOST_PID_NAMESPACE else "container"
    except OSError:
        return "unknown"


def _text(value) -> str:
    return value if isinstance(value, str) else value.decode()


def list_devices(pynvml) -> list[NvmlDevice]:
    """Every GPU NVML lists, with UUIDs and MIG slices; NVML must be initialised."""
    devices = []
    for index in range(pynvml.nvmlDeviceGetCount()):
        handle = pynvml.nvmlDeviceGetHandleByIndex(index)
        devices.append(NvmlDevice(index, _uuid(pynvml, handle), _mig_uuids(pynvml, handle)))
    return devices


def _uuid(pynvml, handle) -> str:
    try:
        return _text(pynvml.nvmlDeviceGetUUID(handle))
    except Exception:  # unreadable: the GPU can still be named by its index
        return ""


def _mig_uuids(pynvml, handle) -> tuple[str, ...]:
    try:
        count = pynvml.nvmlDeviceGetMaxMigDeviceCount(handle)
    except Exception:  # no MIG support, or an NVML too old to say
        return ()
    uuids = []
    for slot in range(count):
        try:
            mig = pynvml.nvmlDeviceGetMigDeviceHandleByIndex(handle, slot)
            uuids.append(_text(pynvml.nvmlDeviceGetUUID(mig)))
        except Exception:  # an empty slot
            continue
    return tuple(uuids)


def visible_gpus(pynvml, environ: Mapping[str, str] = os.environ) -> list[VisibleGpu]:
    """The GPUs this job may use, as `environ`'s CUDA_VISIBLE_DEVICES says."""
    return resolve_visible(environ.get("CUDA_VISIBLE_DEVICES"), list_devices(pynvml))
