"""Pre-flight checks before measuring: is this machine in a state whose numbers we can trust?

On a GPU runner: other processes on the GPU, temperature near the slowdown threshold, a power
limit below the board's default, and active throttle reasons. On any machine: other processes
using more of the CPU than `Thresholds.cpu_busy_limit` (a percentage of one core, averaged
over the check); on the CPU clock, which does not count the time other processes take, a
busy CPU is a warning only. After measuring, the samples' own interruptions are checked
(`evaluate_interruptions`): a run whose typical result had more of its samples interrupted
than its clock tolerates is untrusted, with that reason. Readings (NVML, psutil) are taken by
small functions; turning readings into findings (`cpu_reading`, `evaluate`) is pure. A
failed check marks the run untrusted: it is kept, but never used as a baseline or alerted on.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field

import psutil

from torch_bench.measure import gpus
from torch_bench.measure.interruptions import REFERENCE_BLOCK_MS, judged_share, limit_for

# NVML clock-event (throttle) reason bits that mean the GPU is being held back. Idle and
# application-clock settings are not problems.
THROTTLE_REASONS = {
    0x0000000000000004: "sw_power_cap",
    0x0000000000000008: "hw_slowdown",
    0x0000000000000020: "sw_thermal_slowdown",
    0x0000000000000040: "hw_thermal_slowdown",
    0x0000000000000080: "hw_power_brake_slowdown",
}


@dataclass(frozen=True)
class GpuReading:
    index: int  # NVML's index (the host's numbering)
    name: str
    other_processes: tuple[int, ...] | None = ()  # None: NVML could not list them
    temperature_c: float | None = None
    slowdown_temperature_c: float | None = None
    sm_clock_mhz: float | None = None
    sm_clock_max_mhz: float | None = None
    power_limit_w: float | None = None
    default_power_limit_w: float | None = None
    throttle_reasons: tuple[str, ...] = ()
    cuda_index: int | None = None  # what torch calls it (cuda:N) in this job
    mig_uuid: str | None = None  # the MIG slice this job may use, if any
    pid_namespace: str = "host"  # "container": NVML's pids are the host's, not ours


@dataclass(frozen=True)
class CpuTimes:
    """A snapshot of CPU time counters, in seconds."""

    at_s: float  # a monotonic wall clock
    machine_busy_s: float  # busy time of every core of the machine, summed
    own_s: float  # time used by this process and its children


@dataclass(frozen=True)
class CpuReading:
    cores: int
    others_core_percent: float  # CPU used by other processes, percent of one core
    interval_s: float = 0.0


@dataclass(frozen=True)
class Thresholds:
    temperature_margin_c: float = 5.0  # fail within this many degrees of the slowdown point
    power_limit_fraction: float = 0.99  # fail when capped below this share of the default
    cpu_busy_limit: float = 10.0  # fail when others use more than this % of one core
    cpu_check_s: float = 1.0  # how long the CPU is watched

    def __post_init__(self) -> None:
        if self.cpu_busy_limit < 0 or self.cpu_check_s <= 0:
            raise ValueError("need cpu_busy_limit >= 0 and cpu_check_s > 0")


@dataclass(frozen=True)
class Finding:
    check: str
    severity: str  # "ok", "warn" or "fail"
    message: str


@dataclass(frozen=True)
class Preflight:
    findings: tuple[Finding, ...] = field(default_factory=tuple)

    @property
    def trusted(self) -> bool:
        return all(f.severity != "fail" for f in self.findings)

    def to_dict(self) -> dict:
        return {"trusted": self.trusted, "findings": [asdict(f) for f in self.findings]}


def _gpu_label(gpu: GpuReading) -> str:
    cuda = "" if gpu.cuda_index is None else f"cuda:{gpu.cuda_index} = "
    mig = f", MIG {gpu.mig_uuid}" if gpu.mig_uuid else ""
    return f"{cuda}GPU {gpu.index} ({gpu.name}{mig})"


def evaluate_processes(gpu: GpuReading, where: str) -> Finding:
    if gpu.other_processes is None:
        return Finding("gpu_processes", "warn", f"{where}: NVML cannot list its processes")
    if not gpu.other_processes:
        return Finding("gpu_processes", "ok", f"{where}: no other processes")
    pids = ", ".join(map(str, gpu.other_processes))
    if gpu.pid_namespace == "host":
        return Finding("gpu_processes", "fail", f"{where}: other processes use it: {pids}")
    # Checked before this job touches the GPU, so none of them is ours; their pids are the
    # host's and name nothing inside this container.
    return Finding("gpu_processes", "fail",
                   f"{where}: {len(gpu.other_processes)} other process(es) use it "
                   f"(host pids {pids}; this job runs in a PID namespace of its own)")


def evaluate_gpu(gpu: GpuReading, limits: Thresholds) -> list[Finding]:
    where = _gpu_label(gpu)
    findings = [evaluate_processes(gpu, where)]
    if gpu.temperature_c is not None and gpu.slowdown_temperature_c is not None:
        near = gpu.temperature_c >= gpu.slowdown_temperature_c - limits.temperature_margin_c
        findings.append(Finding(
            "temperature", "fail" if near else "ok",
            f"{where}: {gpu.temperature_c:g} C (slowdown at {gpu.slowdown_temperature_c:g} C)"))
    if gpu.power_limit_w and gpu.default_power_limit_w:
        capped = gpu.power_limit_w < limits.power_limit_fraction * gpu.default_power_limit_w
        findings.append(Finding(
            "power_limit", "fail" if capped else "ok",
            f"{where}: power limit {gpu.power_limit_w:g} W of default "
            f"{gpu.default_power_limit_w:g} W"))
    if gpu.throttle_reasons:
        findings.append(Finding("throttling", "fail",
                                f"{where}: throttled ({', '.join(gpu.throttle_reasons)})"))
    if gpu.sm_clock_mhz and gpu.sm_clock_max_mhz:
        findings.append(Finding(
            "clocks", "ok",
            f"{where}: SM clock {gpu.sm_clock_mhz:g} of {gpu.sm_clock_max_mhz:g} MHz "
            "(low when idle; fix clocks for steadier numbers)"))
    return findings


def cpu_reading(before: CpuTimes, after: CpuTimes, cores: int) -> CpuReading:
    """What other processes used between two snapshots, as a percentage of one core."""
    wall = max(after.at_s - before.at_s, 1e-9)
    others = (after.machine_busy_s - before.machine_busy_s) - (after.own_s - before.own_s)
    # The counters tick in jiffies: over a short interval they can overshoot the machine.
    percent = min(100.0 * cores, max(0.0, 100.0 * others / wall))
    return CpuReading(cores=cores, others_core_percent=percent, interval_s=wall)


def evaluate_cpu(cpu: CpuReading, limits: Thresholds, clock: str = "wall",
                 threads: int | None = None) -> list[Finding]:
    """Other processes' CPU use against the limit: a failure on the wall clock, which counts
    the time they take from the cases; a warning on the CPU clock, which does not (the
    samples' interruptions then decide, see `evaluate_interruptions`). `threads`: the cases'
    torch threads; more than one on a busy CPU is named as the likely cause of slow, swinging
    timings."""
    busy = cpu.others_core_percent > limits.cpu_busy_limit
    message = (f"other processes used {cpu.others_core_percent:.0f}% of one core "
               f"(limit {limits.cpu_busy_limit:g}%) over {cpu.interval_s:.1f} s, "
               f"on {cpu.cores} cores")
    if busy and threads is not None and threads > 1:
        message += (f"; the cases run {threads} torch threads, which wait for each other "
                    "on cores others use (timings slow down and swing by orders of "
                    "magnitude): pass --threads 1")
    if busy and clock == "cpu":
        return [Finding("cpu_load", "warn", message + "; the CPU clock does not count their "
                                                      "time: the samples' interruptions decide")]
    if busy:
        message += "; raise the limit with --cpu-busy-limit on a shared machine"
    return [Finding("cpu_load", "fail" if busy else "ok", message)]


def evaluate(gpus: Sequence[GpuReading], cpu: CpuReading | None,
             limits: Thresholds = Thresholds(), clock: str = "wall",
             threads: int | None = None) -> Preflight:
    findings = [f for gpu in gpus for f in evaluate_gpu(gpu, limits)]
    if cpu is not None:
        findings.extend(evaluate_cpu(cpu, limits, clock, threads))
    return Preflight(tuple(findings))


def evaluate_interruptions(results: Iterable) -> list[Finding]:
    """The samples' interruptions, over the timed results that counted them (extra
    `involuntary_switches` or `interrupted_share`, and `clock`): a failure when the typical
    (median) result was interrupted more than its clock tolerates
    (`interruptions.INTERRUPTED_LIMITS`), a warning when only some were; nothing when no
    result counted them. A result is judged by the share of 1 ms blocks its rate of
    interruptions per second of CPU time would cut (`interruptions.judged_share`), so that a
    slower benchmark, whose longer samples are cut more often, is not doubted for that."""
    shares = {}
    for result in results:
        clock = result.extra.get("clock")
        share = judged_share(result.extra, result.samples, result.unit) if result.ok else None
        if share is not None and isinstance(clock, str):
            shares[result.benchmark_id] = (share, limit_for(clock), clock)
    if not shares:
        return []
    over = {key: value for key, value in shares.items() if value[0] > value[1]}
    typical = statistics.median(share for share, _, _ in shares.values())
    worst_key = max(shares, key=lambda key: shares[key][0])
    worst, limit, clock = shares[worst_key]
    message = (f"samples interrupted by other processes (the share of "
               f"{REFERENCE_BLOCK_MS:g} ms blocks of CPU time at their rate): {typical:.0%} in "
               f"the typical result, {worst:.0%} at worst ({worst_key}); {len(over)} of "
               f"{len(shares)} result(s) above the {limit:.0%} the {clock} clock tolerates")
    if typical > statistics.median(limit for _, limit, _ in shares.values()):
        return [Finding("interruptions", "fail", message + ": too disturbed to trust")]
    return [Finding("interruptions", "warn" if over else "ok", message)]


def with_findings(report: Preflight, findings: Iterable[Finding]) -> Preflight:
    return Preflight(report.findings + tuple(findings))


def decode_throttle_reasons(mask: int) -> tuple[str, ...]:
    return tuple(name for bit, name in THROTTLE_REASONS.items() if mask & bit)


_IDLE_FIELDS = frozenset({"idle", "iowait", "guest", "guest_nice"})  # guest is inside user


def take_cpu_times() -> CpuTimes:
    machine = psutil.cpu_times()
    busy = sum(getattr(machine, name) for name in machine._fields if name not in _IDLE_FIELDS)
    me = psutil.Process()
    own = me.cpu_times()
    own_s = own.user + own.system + own.children_user + own.children_system
    for child in me.children(recursive=True):
        try:
            times = child.cpu_times()
        except psutil.Error:  # ended meanwhile; its time is in children_* once reaped
            continue
        own_s += times.user + times.system
    return CpuTimes(at_s=time.monotonic(), machine_busy_s=busy, own_s=own_s)


def read_cpu(interval_s: float = 1.0, take: Callable[[], CpuTimes] = take_cpu_times,
             sleep: Callable[[float], None] = time.sleep) -> CpuReading:
    """CPU used by processes other than this one and its children over `interval_s`."""
    before = take()
    sleep(interval_s)
    return cpu_reading(before, take(), psutil.cpu_count() or 1)


def read_gpus(own_pids: Sequence[int] = (),
              environ: Mapping[str, str] = os.environ) -> list[GpuReading]:
    """Readings of the GPUs this job may use (CUDA_VISIBLE_DEVICES, matched by UUID) through
    NVML; empty when there is no driver. `own_pids` are left out of the processes only where
    NVML's pids are ours (the host's PID namespace)."""
    try:
        import pynvml

        pynvml.nvmlInit()
    except Exception:
        return []
    namespace = gpus.pid_namespace()
    own = set(own_pids) if namespace == "host" else set()
    try:
        return [_read_gpu(pynvml, gpu, own, namespace)
                for gpu in gpus.visible_gpus(pynvml, environ)]
    finally:
        pynvml.nvmlShutdown()


def _read_gpu(pynvml, gpu: gpus.VisibleGpu, own: set[int],
              namespace: str) -> GpuReading:
    handle = pynvml.nvmlDeviceGetHandleByIndex(gpu.nvml_index)

    def attempt(call, *args, on=handle):
        try:
            return call(on, *args)
        except Exception:
            return None

    # A MIG slice's processes are its own; temperature, power and clocks are the parent's.
    procs_of = _mig_handle(pynvml, gpu.mig_uuid) if gpu.mig_uuid else handle
    lists = [attempt(call, on=procs_of) if procs_of else None
             for call in (pynvml.nvmlDeviceGetComputeRunningProcesses,
                          pynvml.nvmlDeviceGetGraphicsRunningProcesses)]
    pids = None if all(found is None for found in lists) else \
        tuple(sorted({p.pid for found in lists for p in found or []} - own))
    reasons_call = getattr(pynvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or \
        pynvml.nvmlDeviceGetCurrentClocksThrottleReasons
    power = attempt(pynvml.nvmlDeviceGetPowerManagementLimit)
    default_power = attempt(pynvml.nvmlDeviceGetPowerManagementDefaultLimit)
    name = pynvml.nvmlDeviceGetName(handle)
    return GpuReading(
        index=gpu.nvml_index,
        name=name if isinstance(name, str) else name.decode(),
        other_processes=pids,
        temperature_c=attempt(pynvml.nvmlDeviceGetTemperature, pynvml.NVML_TEMPERATURE_GPU),
        slowdown_temperature_c=attempt(pynvml.nvmlDeviceGetTemperatureThreshold,
                                       pynvml.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN),
        sm_clock_mhz=attempt(pynvml.nvmlDeviceGetClockInfo, pynvml.NVML_CLOCK_SM),
        sm_clock_max_mhz=attempt(pynvml.nvmlDeviceGetMaxClockInfo, pynvml.NVML_CLOCK_SM),
        power_limit_w=power / 1000 if power else None,
        default_power_limit_w=default_power / 1000 if default_power else None,
        throttle_reasons=decode_throttle_reasons(attempt(reasons_call) or 0),
        cuda_index=gpu.cuda_index,
        mig_uuid=gpu.mig_uuid,
        pid_namespace=namespace,
    )


def _mig_handle(pynvml, mig_uuid: str):
    if mig_uuid.startswith("MIG-GPU-"):  # the old form names no handle of its own
        return None
    try:
        return pynvml.nvmlDeviceGetHandleByUUID(mig_uuid)
    except Exception:
        return None


def run_preflight(limits: Thresholds = Thresholds(), clock: str = "wall",
                  threads: int | None = None) -> Preflight:
    return evaluate(read_gpus(own_pids=[psutil.Process().pid]),
                    read_cpu(limits.cpu_check_s), limits, clock, threads)
