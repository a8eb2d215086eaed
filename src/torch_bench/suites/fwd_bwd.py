"""Forward and backward timed separately, as PyTorch's fastrnns does, each inside a profiler
label `<group>:<name>`. Shared by the rnns and cnns suites. Two procedures:

- adaptive (the default): the forward pass measured alone, then the backward pass alone
  (each backward after an untimed fresh forward, with gradients cleared between steps),
  under the run's timing policy;
- fastrnns' own, whenever `--nloops` is given: `warmup` training steps, then `nloops`
  steps, each one forward then backward, each phase timed once after a garbage collection,
  the backward taken from the first output with random gradients, parameters' gradients
  zeroed after each step (`fastrnns_steps`). The first steps of a TorchScript variant run
  the profiling executor, so they belong in the warm-up, as fastrnns puts them. The memory
  allocator is first put in the state fastrnns' process is in when it times a variant
  (`settle_heap`).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from typing import Any

from torch_bench.measure.timer import Clock, measure
from torch_bench.results.schema import Result, Status, failed, measured
from torch_bench.suites.base import CaseContext, CaseSpec


def profiled(label: str, fn: Callable[[], Any]) -> Callable[[], Any]:
    import torch

    record = getattr(torch.autograd.profiler, "record_function", None)

    def call():
        with record(label) if record else nullcontext():
            return fn()

    return call


def _as_tensors(outputs: Any) -> list[Any]:
    import torch

    if isinstance(outputs, torch.Tensor):
        return [outputs]
    return [t for t in outputs if isinstance(t, torch.Tensor) and t.requires_grad]


def time_forward_backward(case: CaseSpec, ctx: CaseContext, forward: Callable[[], Any],
                          parameters: Sequence[Any],
                          extra: Mapping[str, Any] | None = None) -> list[Result]:
    """`forward_time` and `backward_time` results for the case's two outputs (in that
    order: the forward group, then the backward group); `extra` goes into both."""
    import torch

    if ctx.policy.nloops is not None:
        return _fastrnns_results(case, ctx, forward, parameters, extra)
    fwd_out, bwd_out = case.outputs
    clock = ctx.clock()
    fwd = measure(profiled(f"{fwd_out.group}:{case.name}", forward), ctx.policy, clock,
                  metric=fwd_out.metric)

    pending: dict[str, Any] = {}
    grads_out = [torch.randn_like(t) for t in _as_tensors(forward())]

    def prepare_backward():
        for parameter in parameters:
            parameter.grad = None
        pending["outputs"] = _as_tensors(forward())

    backward = profiled(f"{bwd_out.group}:{case.name}",
                        lambda: torch.autograd.backward(pending["outputs"], grads_out))
    bwd = measure(backward, ctx.policy, clock, setup=prepare_backward, metric=bwd_out.metric)
    return [
        measured(case.suite, case.name, fwd_out.metric, fwd.samples_ms, params=case.params,
                 group=fwd_out.group, extra={**fwd.extra(), **(extra or {})}),
        measured(case.suite, case.name, bwd_out.metric, bwd.samples_ms, params=case.params,
                 group=bwd_out.group, extra={**bwd.extra(), **(extra or {})}),
    ]


# fastrnns times its variants one after another in one process, so by the time it times a
# scripted LSTM, the earlier variants' large tensors have raised glibc's dynamic mmap and
# trim thresholds. In a fresh case process they are still low: each backward's freed memory
# goes back to the kernel and is faulted in again by the next (about 650 page faults a step
# at fastrnns' default sizes, 13-21% of the scripted LSTM's backward, none of its forward).
# Freeing one block this large raises them as fastrnns' earlier variants do.
SETTLE_BYTES = 4 << 20


def settle_heap() -> None:
    """Put the C heap in the state a process that already freed a large tensor is in."""
    import torch

    block = torch.empty(SETTLE_BYTES, dtype=torch.uint8)
    del block


def fastrnns_steps(forward: Callable[[], Any], parameters: Sequence[Any], clock: Clock,
                   warmup: int, nloops: int) -> tuple[list[float], list[float]]:
    """Forward and backward times (ms) of `nloops` training steps after `warmup` untimed ones,
    step by step as fastrnns' `trainbench` takes them, in a settled heap (`settle_heap`)."""
    import torch

    def step() -> tuple[float, float]:
        gc.collect()
        clock.start()
        outputs = forward()
        forward_ms = clock.stop()
        output = _as_tensors(outputs)[0]
        grad_output = torch.randn_like(output)
        gc.collect()
        clock.start()
        output.backward(grad_output)
        backward_ms = clock.stop()
        with torch.no_grad():
            for parameter in parameters:
                if parameter.grad is not None:
                    parameter.grad.zero_()
        return forward_ms, backward_ms

    settle_heap()
    for _ in range(warmup):
        step()
    timed = [step() for _ in range(nloops)]
    return [f for f, _ in timed], [b for _, b in timed]


def _fastrnns_results(case: CaseSpec, ctx: CaseContext, forward: Callable[[], Any],
                      parameters: Sequence[Any],
                      extra: Mapping[str, Any] | None) -> list[Result]:
    import torch

    fwd_out, bwd_out = case.outputs
    policy = ctx.policy
    forward_ms, backward_ms = fastrnns_steps(
        profiled(f"{fwd_out.group}:{case.name}", forward), parameters, ctx.clock(),
        policy.warmup, policy.nloops)
    shared = {"loops": 1, "warmup": policy.warmup, "stop_reason": "nloops",
              "threads": torch.get_num_threads(), "procedure": "fastrnns", **(extra or {})}
    return [
        measured(case.suite, case.name, fwd_out.metric, forward_ms, params=case.params,
                 group=fwd_out.group, extra=shared),
        measured(case.suite, case.name, bwd_out.metric, backward_ms, params=case.params,
                 group=bwd_out.group, extra=shared),
    ]


def skipped_results(case: CaseSpec, reason: str) -> list[Result]:
    return [failed(case.suite, case.name, out.metric, Status.SKIPPED.value, reason,
                   params=case.params, group=out.group) for out in case.outputs]
