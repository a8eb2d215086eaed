"""Running a zoo model eagerly or compiled, one step at a time, and measuring the two side by
side: interleaved timing, peak memory, dynamo's counters.

A step is what the compile suite times. Inference: the model under `no_grad` (and autocast
when asked). Training: gradients zeroed, inputs cloned, forward (and loss) under autocast when
asked, backward (through a gradient scaler for float16 autocast), an optimizer step.
"""

from __future__ import annotations

import copy
import math
import threading
import time
from collections.abc import Callable, Mapping
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

import psutil
import torch

from torch_bench.measure.op_window import profile_window
from torch_bench.measure.timer import Clock, TimingPolicy, gc_paused
from torch_bench.results.stats import relative_iqr
from torch_bench.zoo import Example

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16,
          "float64": torch.float64}
MODES = ("inference", "training")
MB = 2**20


@dataclass(frozen=True)
class StepSpec:
    mode: str  # inference or training
    device: str
    dtype: str
    amp: bool  # autocast to `dtype` with float32 weights, instead of casting the model


def _map_tensors(obj: Any, fn: Callable[[torch.Tensor], torch.Tensor]) -> Any:
    if isinstance(obj, torch.Tensor):
        return fn(obj)
    if isinstance(obj, tuple):
        return tuple(_map_tensors(o, fn) for o in obj)
    if isinstance(obj, list):
        return [_map_tensors(o, fn) for o in obj]
    if isinstance(obj, dict):
        return {k: _map_tensors(v, fn) for k, v in obj.items()}
    return obj


def place(example: Example, device: str, dtype: torch.dtype) -> Example:
    """A copy of the example on `device`, its floating-point weights and inputs in `dtype`
    (the given example is left as it was)."""

    def move(t: torch.Tensor) -> torch.Tensor:
        return t.to(device=device, dtype=dtype if t.is_floating_point() else t.dtype)

    model = copy.deepcopy(example.model).to(device=device, dtype=dtype)
    return Example(model, _map_tensors(example.args, move), _map_tensors(example.kwargs, move))


def prepare(example: Example, spec: StepSpec) -> Example:
    weights = torch.float32 if spec.amp else DTYPES[spec.dtype]
    return place(example, spec.device, weights)


def scalar_loss(outputs: Any) -> torch.Tensor:
    """A loss from arbitrary outputs: the sum of the means of the floating-point tensors."""
    from torch_bench.zoo.accuracy import leaves

    tensors = [t for _, t in leaves(outputs)
               if isinstance(t, torch.Tensor) and t.is_floating_point()]
    if not tensors:
        raise TypeError("the model returned no floating-point tensor to train on")
    return sum(t.float().mean() for t in tensors)


class Runtime:
    """One copy of the model (eager or compiled) with its own optimizer state."""

    def __init__(self, example: Example, spec: StepSpec,
                 compile_fn: Callable[[Any], Any] | None = None) -> None:
        self.spec = spec
        self.model = copy.deepcopy(example.model)
        self.model.train(spec.mode == "training")
        self.args, self.kwargs = example.args, example.kwargs
        self.call = compile_fn(self.model) if compile_fn else self.model
        device_kind = spec.device.split(":")[0]
        self._autocast = (lambda: torch.autocast(device_kind, dtype=DTYPES[spec.dtype])) \
            if spec.amp else nullcontext
        self.optimizer = None
        self.scaler = None
        parameters = [p for p in self.model.parameters() if p.requires_grad]
        if spec.mode == "training" and parameters:  # a model without weights: backward only
            self.optimizer = torch.optim.SGD(parameters, lr=1e-3)
            if spec.amp and spec.dtype == "float16":
                self.scaler = torch.amp.GradScaler(device_kind)

    def step(self) -> dict[str, Any]:
        if self.spec.mode == "inference":
            with torch.no_grad(), self._autocast():
                return {"outputs": self.call(*self.args, **self.kwargs)}
        if self.optimizer is not None:
            self.optimizer.zero_grad(set_to_none=True)
        args = _map_tensors(self.args, torch.Tensor.clone)
        kwargs = _map_tensors(self.kwargs, torch.Tensor.clone)
        with self._autocast():
            outputs = self.call(*args, **kwargs)
            loss = scalar_loss(outputs)
        if self.scaler is not None:
            self.scaler.scale(loss).backward()
            if self.optimizer is not None:
                self.scaler.step(self.optimizer)
            self.scaler.update()
        else:
            loss.backward()
            if self.optimizer is not None:
                self.optimizer.step()
        grads = [p.grad for p in self.model.parameters()]
        return {"outputs": outputs, "loss": loss, "grads": grads}


def compiler(backend: str, mode: str | None) -> Callable[[Any], Any]:
    def compile_model(model):
        return torch.compile(model, backend=backend, mode=None if mode == "default" else mode)

    return compile_model


def match_eager_randomness() -> bool:
    """Make inductor draw random numbers (dropout) as eager does, so that a training step can
    be compared with eager; returns whether the setting exists in this torch."""
    try:
        import torch._inductor.config as inductor_config
    except ImportError:
        return False
    inductor_config.fallback_random = True
    return True


def reset_dynamo() -> None:
    import torch._dynamo

    torch._dynamo.reset()
    counters = _dynamo_counters()
    if counters is not None:
        counters.clear()


def _dynamo_counters():
    try:
        from torch._dynamo.utils import counters
    except ImportError:
        return None
    return counters


def dynamo_counts() -> dict[str, int]:
    """Graphs compiled and graph breaks since the last reset, where dynamo exposes them."""
    counters = _dynamo_counters()
    if counters is None:
        return {}
    return {"graph_count": int(counters["stats"].get("unique_graphs", 0)),
            "graph_breaks": int(sum(counters["graph_break"].values()))}


def timed_call(fn: Callable[[], Any], clock: Clock) -> tuple[Any, float]:
    clock.start()
    value = fn()
    return value, clock.stop()


def interleaved(fns: Mapping[str, Callable[[], Any]], policy: TimingPolicy,
                clock: Clock) -> dict[str, list[float]]:
    """Samples (ms per call) of each function, taken in alternation: eager, compiled, eager,
    ... so that drift in the machine's state (clocks, other load) hits both alike. Every
    block runs the same number of calls, sized so the fastest function's block lasts at
    least `policy.min_block_ms`. Stops at `max_repeats` rounds, at `max_time_s` (after
    `min_repeats` rounds), or when every function's relative IQR is under the target."""
    for fn in fns.values():
        for _ in range(policy.warmup):
            fn()
    fastest = min(timed_call(fn, clock)[1] for fn in fns.values())
    number = max(1, min(policy.max_number, math.ceil(policy.min_block_ms / max(fastest, 1e-6))))
    samples: dict[str, list[float]] = {name: [] for name in fns}
    deadline = time.perf_counter() + policy.max_time_s
    with gc_paused():
        for round_ in range(1, policy.max_repeats + 1):
            for name, fn in fns.items():
                with profile_window("latency", name) as window:
                    clock.start()
                    for _ in range(number):
                        fn()
                    samples[name].append(clock.stop() / number)
                    window.calls = number
            if round_ >= policy.min_repeats and (
                    time.perf_counter() >= deadline
                    or all(relative_iqr(s) <= policy.target_rel_iqr for s in samples.values())):
                break
    return samples


class _RssSampler:
    """Samples this process's resident set size every `interval_s` in a thread."""

    def __init__(self, interval_s: float = 0.001) -> None:
        self.interval_s = interval_s
        self.process = psutil.Process()
        self.peak = self.process.memory_info().rss
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self.process.memory_info().rss)
            self._stop.wait(self.interval_s)

    def __enter__(self) -> _RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.process.memory_info().rss)


def peak_memory(fn: Callable[[], Any], device: str, calls: int = 3) -> tuple[float, str]:
    """Peak memory (MB) while `fn` runs `calls` times, and how it was taken.

    - GPU: the CUDA caching allocator's peak allocated memory (`cuda_allocator_peak`).
    - CPU: the peak of the bytes torch's CPU allocator handed out during the calls, above
      what was live before them, from the profiler's allocation events
      (`cpu_allocations_profiled`); where the profiler does not expose them, the process's
      resident set size sampled every millisecond (`process_rss_sampled`), a process-level
      figure including the interpreter, torch and compiler state.
    """
    if device.startswith("cuda"):
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
        for _ in range(calls):
            fn()
        torch.cuda.synchronize(device)
        return torch.cuda.max_memory_allocated(device) / MB, "cuda_allocator_peak"
    peak = _profiled_cpu_peak_bytes(fn, calls)
    if peak is not None:
        return peak / MB, "cpu_allocations_profiled"
    with _RssSampler() as sampler:
        for _ in range(calls):
            fn()
    return sampler.peak / MB, "process_rss_sampled"


def _profiled_cpu_peak_bytes(fn: Callable[[], Any], calls: int) -> int | None:
    """The running total of CPU allocations and frees recorded by the profiler, at its
    highest; None when this torch's profiler does not give the events."""
    try:
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
            for _ in range(calls):
                fn()
        events = [(e.start_ns(), e.nbytes()) for e in prof.profiler.kineto_results.events()
                  if e.name() == "[memory]" and str(e.device_type()).endswith("CPU")]
    except Exception:
        return None
    if not events:
        return None
    total = peak = 0
    for _, nbytes in sorted(events):
        total += nbytes
        peak = max(peak, total)
    return peak
