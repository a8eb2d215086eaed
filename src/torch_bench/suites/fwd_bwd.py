"""Forward and backward timed separately, as PyTorch's fastrnns does: the forward pass
alone, then the backward pass alone (each backward after an untimed fresh forward, with
gradients zeroed between steps), each inside a profiler label `<group>:<name>`. Shared by
the rnns and cnns suites.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from typing import Any

from torch_bench.measure.timer import measure
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


def skipped_results(case: CaseSpec, reason: str) -> list[Result]:
    return [failed(case.suite, case.name, out.metric, Status.SKIPPED.value, reason,
                   params=case.params, group=out.group) for out in case.outputs]
