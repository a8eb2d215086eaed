"""Line-by-line memory tracing of one call: which source lines grew memory the most.

While the call runs, a trace function (`sys.settrace`) reads the process's resident memory
(and the CUDA allocator's allocated bytes when a device is given) at every line event in
the traced files; the change between two events is charged to the line executed between
them. A line that calls into untraced code (torch's C++ kernels, library modules outside
`include`) is charged with what that code allocated, which is what a reader wants: the
model's own line that asked for the memory.

Resident memory is the honest figure for tensors (torch allocates outside Python's
allocator, which `tracemalloc` cannot see), but memory freed to malloc's heap stays
resident and is reused for free, so a warmed-up step would show almost nothing. On glibc
the trace therefore gives malloc's free pages back to the system (`malloc_trim`) at every
line event: whatever a line then touches shows as its increase, as on a first run. That
costs time, which is why a trace runs after the timing, never during it.

Besides the lines that grew memory most (`top`), the trace keeps the summary Hugging Face's
benchmark prints (its `MemorySummary`): the sequential listing (every traced line event in
order with the signed change it caused), the lines by their net change summed over all their
executions (the highest first: `cumulative_top`, and the lowest, where memory was released:
`cumulative_lowest`), and the total increase (the sum of the increases in the listing).
"""

from __future__ import annotations

import linecache
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

MB = 2**20
UNTRACED = ("<untraced>", 0)


@dataclass(frozen=True)
class LineMemory:
    """What one source line added over the traced call (sums of increases, frees ignored)."""

    file: str
    line: int
    source: str
    cpu_mb: float
    gpu_mb: float | None
    hits: int

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "source": self.source,
                "cpu_mb": round(self.cpu_mb, 3),
                "gpu_mb": None if self.gpu_mb is None else round(self.gpu_mb, 3),
                "hits": self.hits}


@dataclass(frozen=True)
class MemoryTrace:
    top: tuple[LineMemory, ...]  # largest increases first
    cpu_net_mb: float  # resident memory after the call minus before
    cpu_peak_mb: float  # highest resident memory seen during the call, minus before
    lines_traced: int  # line events observed
    heap_trimmed: bool  # whether free heap pages were returned at every line
    # Hugging Face's summary; LineMemory's figures here are net changes (negative: released)
    sources: tuple[tuple[str, int, str], ...] = ()  # (file, line, source) of each listed line
    sequential: tuple[tuple[int, float, float | None], ...] = ()  # (index in sources, MB, MB)
    cumulative_top: tuple[LineMemory, ...] = ()  # highest net change first
    cumulative_lowest: tuple[LineMemory, ...] = ()  # the lowest, the very lowest last
    total_increase_mb: float = 0.0  # the increases of the sequential listing, summed

    def to_dict(self) -> dict[str, Any]:
        return {"top": [line.to_dict() for line in self.top],
                "cpu_net_mb": round(self.cpu_net_mb, 3),
                "cpu_peak_mb": round(self.cpu_peak_mb, 3),
                "lines_traced": self.lines_traced,
                "heap_trimmed": self.heap_trimmed,
                "sources": [list(entry) for entry in self.sources],
                "sequential": [[index, round(cpu, 3), None if gpu is None else round(gpu, 3)]
                               for index, cpu, gpu in self.sequential],
                "cumulative_top": [line.to_dict() for line in self.cumulative_top],
                "cumulative_lowest": [line.to_dict() for line in self.cumulative_lowest],
                "total_increase_mb": round(self.total_increase_mb, 3)}


def heap_trimmer() -> Callable[[], Any] | None:
    """glibc's `malloc_trim(0)`, which gives every free page of malloc's heaps back to the
    system; None where it does not exist (not glibc)."""
    import ctypes
    import ctypes.util

    if not sys.platform.startswith("linux"):
        return None
    try:
        trim = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    return lambda: trim(0)


def rss_reader() -> Callable[[], int]:
    """A fast reader of this process's resident bytes (/proc/self/statm where present)."""
    try:
        fd = os.open("/proc/self/statm", os.O_RDONLY)
    except OSError:
        import psutil

        process = psutil.Process()
        return lambda: process.memory_info().rss
    page = os.sysconf("SC_PAGE_SIZE")
    return lambda: int(os.pread(fd, 128, 0).split()[1]) * page


def cuda_reader(device) -> Callable[[], int] | None:
    if device is None:
        return None
    import torch

    return lambda: torch.cuda.memory_allocated(device)


class _Recorder:
    """The trace function and the per-line tallies it keeps."""

    def __init__(self, include: Sequence[str], read_cpu, read_gpu, trim=None) -> None:
        self.include = tuple(os.path.abspath(p) for p in include)
        self.read_cpu, self.read_gpu, self.trim = read_cpu, read_gpu, trim
        if trim:
            trim()
        self.cpu: dict[tuple[str, int], int] = {}
        self.gpu: dict[tuple[str, int], int] = {}
        self.hits: dict[tuple[str, int], int] = {}
        # (line, signed CPU bytes, signed GPU bytes) per traced line event, in order
        self.sequential: list[tuple[tuple[str, int], int, int]] = []
        self.current = UNTRACED
        self.start_cpu = self.last_cpu = self.peak_cpu = read_cpu()
        self.last_gpu = read_gpu() if read_gpu else 0
        self.events = 0
        self._wanted: dict[str, bool] = {}

    def wanted(self, filename: str) -> bool:
        known = self._wanted.get(filename)
        if known is None:
            path = os.path.abspath(filename)
            known = self._wanted[filename] = any(
                path == p or path.startswith(p.rstrip(os.sep) + os.sep) for p in self.include)
        return known

    def charge(self, next_line: tuple[str, int]) -> None:
        if self.trim:
            self.trim()
        cpu = self.read_cpu()
        self.peak_cpu = max(self.peak_cpu, cpu)
        cpu_change, self.last_cpu = cpu - self.last_cpu, cpu
        if cpu_change > 0:
            self.cpu[self.current] = self.cpu.get(self.current, 0) + cpu_change
        gpu_change = 0
        if self.read_gpu:
            gpu = self.read_gpu()
            gpu_change, self.last_gpu = gpu - self.last_gpu, gpu
            if gpu_change > 0:
                self.gpu[self.current] = self.gpu.get(self.current, 0) + gpu_change
        if self.current != UNTRACED:
            self.sequential.append((self.current, cpu_change, gpu_change))
        self.current = next_line
        self.hits[next_line] = self.hits.get(next_line, 0) + 1
        self.events += 1

    def global_trace(self, frame, event, arg):
        if event == "call" and self.wanted(frame.f_code.co_filename):
            return self.local_trace
        return None

    def local_trace(self, frame, event, arg):
        if event == "line":
            self.charge((frame.f_code.co_filename, frame.f_lineno))
        elif event == "return":
            caller = frame.f_back
            if caller is not None and self.wanted(caller.f_code.co_filename):
                self.charge((caller.f_code.co_filename, caller.f_lineno))
            else:
                self.charge(UNTRACED)
        return self.local_trace


def trace_memory(fn: Callable[[], Any], include: Sequence[str], top: int = 10,
                 cuda_device=None) -> MemoryTrace:
    """Run `fn` once, tracing lines in files under the paths `include`, and return the `top`
    lines by memory added."""
    recorder = _Recorder(include, rss_reader(), cuda_reader(cuda_device), heap_trimmer())
    previous = sys.gettrace()
    sys.settrace(recorder.global_trace)
    try:
        fn()
    finally:
        sys.settrace(previous)
    recorder.charge(UNTRACED)
    has_gpu = recorder.read_gpu is not None
    cumulative = cumulative_lines(recorder.sequential, has_gpu)
    sources = tuple(dict.fromkeys(key for key, _, _ in recorder.sequential))
    index = {key: i for i, key in enumerate(sources)}
    return MemoryTrace(
        top=tuple(_top_lines(recorder, top)),
        cpu_net_mb=(recorder.last_cpu - recorder.start_cpu) / MB,
        cpu_peak_mb=(recorder.peak_cpu - recorder.start_cpu) / MB,
        lines_traced=recorder.events,
        heap_trimmed=recorder.trim is not None,
        sources=tuple((f, n, linecache.getline(f, n).strip()) for f, n in sources),
        sequential=tuple((index[key], cpu / MB, gpu / MB if has_gpu else None)
                         for key, cpu, gpu in recorder.sequential),
        cumulative_top=tuple(cumulative[:top]),
        cumulative_lowest=tuple(cumulative[-top:]) if top else (),
        total_increase_mb=total_increase(recorder.sequential) / MB,
    )


def total_increase(sequential) -> int:
    """Hugging Face's "Total memory increase": the increases (CPU + GPU) of the sequential
    listing summed, releases ignored."""
    return sum(max(0, cpu + gpu) for _, cpu, gpu in sequential)


def cumulative_lines(sequential, has_gpu: bool) -> list[LineMemory]:
    """Each line's net change summed over its executions, highest (CPU + GPU) first."""
    totals: dict[tuple[str, int], list[int]] = {}
    for key, cpu, gpu in sequential:
        entry = totals.setdefault(key, [0, 0, 0])
        entry[0] += cpu
        entry[1] += gpu
        entry[2] += 1
    ranked = sorted(totals.items(), key=lambda item: item[1][0] + item[1][1], reverse=True)
    return [LineMemory(file=f, line=n, source=linecache.getline(f, n).strip(),
                       cpu_mb=cpu / MB, gpu_mb=gpu / MB if has_gpu else None, hits=hits)
            for (f, n), (cpu, gpu, hits) in ranked]


def _top_lines(recorder: _Recorder, top: int) -> list[LineMemory]:
    keys = [k for k in set(recorder.cpu) | set(recorder.gpu)
            if k != UNTRACED and (recorder.cpu.get(k, 0) or recorder.gpu.get(k, 0))]
    has_gpu = recorder.read_gpu is not None

    def weight(key):
        return (recorder.gpu.get(key, 0), recorder.cpu.get(key, 0)) if has_gpu \
            else (recorder.cpu.get(key, 0),)

    keys.sort(key=weight, reverse=True)
    return [
        LineMemory(
            file=filename, line=lineno,
            source=linecache.getline(filename, lineno).strip(),
            cpu_mb=recorder.cpu.get((filename, lineno), 0) / MB,
            gpu_mb=recorder.gpu.get((filename, lineno), 0) / MB if has_gpu else None,
            hits=recorder.hits.get((filename, lineno), 0),
        )
        for filename, lineno in keys[:top]
    ]


def format_memory_trace(trace: dict[str, Any], title: str) -> list[str]:
    """Lines of text for a trace as stored (`MemoryTrace.to_dict()`): a heading, then, as
    Hugging Face prints its summary, the sequential listing, the lines with the top and the
    lowest memory consumption, and the total increase. A trace stored before the summary
    existed shows its top lines."""
    lines = [f"memory trace: {title} (RSS {trace['cpu_net_mb']:+.1f} MB net, "
             f"{trace['cpu_peak_mb']:+.1f} MB peak, {trace['lines_traced']} lines traced)"]
    if "sequential" not in trace:
        return lines + [_format_top_line(entry) for entry in trace["top"]]
    sources = trace["sources"]
    lines.append("Line by line memory consumption:")
    for index, cpu, gpu in trace["sequential"]:
        file, number, source = sources[index]
        lines.append(f"{file}:{number}: mem {_mb(cpu, gpu)}: {source}")
    for heading, entries in (("Lines with top memory consumption:", trace["cumulative_top"]),
                             ("Lines with lowest memory consumption:",
                              trace["cumulative_lowest"])):
        lines += ["", heading]
        lines += [f"=> {e['file']}:{e['line']}: mem {_mb(e['cpu_mb'], e['gpu_mb'])}: "
                  f"{e['source']}" for e in entries]
    lines += ["", f"Total memory increase: {trace['total_increase_mb']:.3f}MB"]
    return lines


def _mb(cpu: float, gpu: float | None) -> str:
    """CPU + GPU, as Hugging Face adds them (in MB with decimals, where it floors to whole MB)."""
    return f"{cpu + (gpu or 0):.3f}MB"


def _format_top_line(entry: dict[str, Any]) -> str:
    gpu = "" if entry["gpu_mb"] is None else f"  GPU +{entry['gpu_mb']:8.2f} MB"
    where = f"{os.path.basename(entry['file'])}:{entry['line']}"
    return f"  CPU +{entry['cpu_mb']:8.2f} MB{gpu}  {where:<32} {entry['source']}"
