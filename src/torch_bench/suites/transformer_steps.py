"""The steps the transformers suite times: an inference forward pass (no grad, optionally
TorchScript-traced or compiled) and a training step (forward with labels, loss, backward).

Each builder returns a `Step`: a zero-argument callable plus what the suite records about
how it was made. Exceptions that mean "this cannot run here" are raised as `Unsupported`
with the reason; the suite reports them as `skipped`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch

# dtype option value -> torch dtype attribute
DTYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}
UNSUPPORTED_MARKERS = ("not implemented for", "Unsupported", "does not support",
                       "not supported")


class Unsupported(Exception):
    """The case cannot run on this device / torch / model; the message says why."""


@dataclass
class Step:
    run: Callable[[], Any]
    extra: dict[str, Any] = field(default_factory=dict)


def torch_dtype(name: str) -> torch.dtype:
    return getattr(torch, DTYPES[name])


def _forward(model, inputs: Mapping[str, Any]):
    return model(**inputs)


class TupleOutputs(torch.nn.Module):
    """Calls the model with positional tensors and returns a plain tuple, which is what
    `torch.jit.trace` can record (model outputs are dataclass-like objects)."""

    def __init__(self, model: torch.nn.Module, names: tuple[str, ...]):
        super().__init__()
        self.model = model
        self.names = names

    def forward(self, *tensors):
        kwargs = dict(zip(self.names, tensors, strict=True))
        return self.model(**kwargs, use_cache=False, return_dict=False)


def traced(model, inputs: Mapping[str, Any]):
    """The model traced by TorchScript on `inputs`, called with the same keyword inputs."""
    trace = getattr(torch.jit, "trace", None)
    if trace is None:
        raise Unsupported("torch.jit.trace is not available in this torch")
    names = tuple(inputs)
    try:
        with torch.no_grad():
            module = trace(TupleOutputs(model, names), tuple(inputs.values()),
                           check_trace=False)
    except Exception as exc:
        raise Unsupported(f"TorchScript cannot trace this model: "
                          f"{type(exc).__name__}: {str(exc)[:300]}") from exc
    return lambda **kwargs: module(*(kwargs[n] for n in names))


def compiled(model, backend: str):
    if not hasattr(torch, "compile"):
        raise Unsupported("torch.compile is not available in this torch")
    return torch.compile(model, backend=backend)


def inference_step(model, inputs: Mapping[str, Any], torchscript: bool,
                   compile_backend: str | None) -> Step:
    extra: dict[str, Any] = {}
    call = model
    if torchscript:
        started = time.perf_counter()
        call = traced(model, inputs)
        extra["trace_time_ms"] = round((time.perf_counter() - started) * 1e3, 3)
    elif compile_backend:
        call = compiled(model, compile_backend)

    def run():
        with torch.no_grad():
            return _forward(call, inputs)

    return Step(run, extra)


def training_loss(output, head: bool):
    """The loss to differentiate: the model's own (labels given) with an LM head; for a bare
    model, the mean square of its last hidden state, a stand-in that exercises the backward
    of every layer."""
    if head:
        return output.loss
    hidden = output.last_hidden_state if hasattr(output, "last_hidden_state") else output[0]
    return hidden.float().pow(2).mean()


def training_step(model, inputs: Mapping[str, Any], head: bool,
                  compile_backend: str | None) -> Step:
    model.train()
    call = compiled(model, compile_backend) if compile_backend else model
    kwargs = dict(inputs) if head else {k: v for k, v in inputs.items() if k != "labels"}
    parameters = [p for p in model.parameters() if p.requires_grad]

    def run():
        for parameter in parameters:  # gradients zeroed between steps
            parameter.grad = None
        loss = training_loss(_forward(call, kwargs), head)
        loss.backward()
        return loss

    return Step(run, {})


def first_call(step: Step, dtype: str, device: str) -> float:
    """Run the step once (compilation, lazy initialisation); returns its milliseconds. An
    error saying the dtype or an operation is unsupported becomes `Unsupported`."""
    started = time.perf_counter()
    try:
        step.run()
    except (RuntimeError, NotImplementedError, TypeError) as exc:
        text = str(exc)
        if dtype != "fp32" and any(marker in text for marker in UNSUPPORTED_MARKERS):
            raise Unsupported(f"{dtype} is not supported on {device} for this model: "
                              f"{text.splitlines()[0][:300]}") from exc
        raise
    return (time.perf_counter() - started) * 1e3
