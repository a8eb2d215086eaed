"""The rnns suite: LSTM variants in the manner of PyTorch's fastrnns, forward and backward
timed separately. Groups are named as fastrnns names them (`lstm`, `lstm-backward`) so the
OSS and AI-PEP exports read the same to existing consumers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

from torch_bench.measure.timer import measure
from torch_bench.results.schema import Result, Status, failed, measured
from torch_bench.suites.base import (
    CaseContext,
    CaseSpec,
    Option,
    Output,
    Suite,
    parse_name_list,
    parse_positive_int,
)

SUITE_NAME = "rnns"
FORWARD_GROUP = "lstm"
BACKWARD_GROUP = "lstm-backward"


class VariantUnavailable(Exception):
    """This variant cannot run on this device or torch; the case reports `skipped`."""


@dataclass
class LstmBench:
    forward: Callable[[], Sequence[Any]]  # returns the tensors to differentiate
    parameters: Sequence[Any]
    num_layers: int


def _inputs(sizes: Mapping[str, int], layers: int, device, dtype):
    import torch

    seq, batch = sizes["seq_length"], sizes["mini_batch"]
    x = torch.randn(seq, batch, sizes["input_size"], device=device, dtype=dtype)
    h0 = torch.randn(layers, batch, sizes["hidden_size"], device=device, dtype=dtype)
    c0 = torch.randn(layers, batch, sizes["hidden_size"], device=device, dtype=dtype)
    return x, h0, c0


def _module_lstm(use_cudnn: bool):
    def build(sizes, device, dtype) -> LstmBench:
        import torch

        layers = sizes["num_layers"]
        model = torch.nn.LSTM(sizes["input_size"], sizes["hidden_size"], layers)
        model = model.to(device=device, dtype=dtype)
        x, h0, c0 = _inputs(sizes, layers, device, dtype)

        def forward():
            with torch.backends.cudnn.flags(enabled=use_cudnn):
                out, (hy, cy) = model(x, (h0, c0))
            return out, hy, cy

        return LstmBench(forward, list(model.parameters()), layers)

    return build


def _loop_lstm(scripted: bool):
    def build(sizes, device, dtype) -> LstmBench:
        from torch_bench.suites import lstm_models

        if scripted:
            try:
                loop = lstm_models.scripted_lstm_loop()
            except Exception as exc:
                raise VariantUnavailable(f"TorchScript cannot compile the cell: {exc}") from exc
        else:
            loop = lstm_models.lstm_loop
        weights = lstm_models.lstm_weights(sizes["input_size"], sizes["hidden_size"], device,
                                           dtype)
        x, h0, c0 = _inputs(sizes, 1, device, dtype)
        return LstmBench(lambda: loop(x, h0[0], c0[0], *weights), weights, 1)

    return build


VARIANTS: dict[str, Callable[..., LstmBench]] = {
    "cudnn": _module_lstm(use_cudnn=True),
    "aten": _module_lstm(use_cudnn=False),
    "jit": _loop_lstm(scripted=True),
    "py": _loop_lstm(scripted=False),
}

SIZE_OPTIONS = ("seq_length", "num_layers", "input_size", "hidden_size", "mini_batch")


def _parse_variants(text: str) -> tuple[str, ...]:
    names = parse_name_list(text)
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        raise ValueError(f"unknown variant(s) {', '.join(unknown)}; "
                         f"known: {', '.join(VARIANTS)}")
    return names


OPTIONS = (
    Option("variants", _parse_variants, tuple(VARIANTS), "LSTM variants to run"),
    Option("seq_length", parse_positive_int, 100, "sequence length"),
    Option("num_layers", parse_positive_int, 1, "layers of the library LSTM variants"),
    Option("input_size", parse_positive_int, 512, "input features"),
    Option("hidden_size", parse_positive_int, 512, "hidden features"),
    Option("mini_batch", parse_positive_int, 64, "batch size"),
)


def plan(options: Mapping[str, Any], device: str) -> list[CaseSpec]:
    sizes = {name: options[name] for name in SIZE_OPTIONS}
    return [
        CaseSpec(
            suite=SUITE_NAME,
            name=variant,
            params={**sizes, "device": device, "dtype": "float32",
                    "num_layers": sizes["num_layers"] if variant in ("cudnn", "aten") else 1},
            outputs=(Output("forward_time", FORWARD_GROUP),
                     Output("backward_time", BACKWARD_GROUP)),
            options={"sizes": sizes},
        )
        for variant in options["variants"]
    ]


def _profiled(label: str, fn: Callable[[], Any]) -> Callable[[], Any]:
    import torch

    record = getattr(torch.autograd.profiler, "record_function", None)

    def call():
        with record(label) if record else nullcontext():
            return fn()

    return call


def run_case(case: CaseSpec, ctx: CaseContext) -> list[Result]:
    import torch

    torch.manual_seed(0)
    try:
        bench = VARIANTS[case.name](case.options["sizes"], torch.device(ctx.device),
                                    torch.float32)
    except VariantUnavailable as exc:
        return [failed(case.suite, case.name, out.metric, Status.SKIPPED.value, str(exc),
                       params=case.params, group=out.group) for out in case.outputs]

    clock = ctx.clock()

    def zero_grads():
        for p in bench.parameters:
            p.grad = None

    forward = _profiled(f"{FORWARD_GROUP}:{case.name}", bench.forward)
    fwd = measure(forward, ctx.policy, clock)

    pending: dict[str, Any] = {}
    grads_out = [torch.randn_like(t) for t in bench.forward()]

    def prepare_backward():
        zero_grads()
        pending["outputs"] = bench.forward()

    backward = _profiled(
        f"{BACKWARD_GROUP}:{case.name}",
        lambda: torch.autograd.backward(pending["outputs"], grads_out),
    )
    bwd = measure(backward, ctx.policy, clock, setup=prepare_backward)
    return [
        measured(case.suite, case.name, "forward_time", fwd.samples_ms, params=case.params,
                 group=FORWARD_GROUP, extra=fwd.extra()),
        measured(case.suite, case.name, "backward_time", bwd.samples_ms, params=case.params,
                 group=BACKWARD_GROUP, extra=bwd.extra()),
    ]


SUITE = Suite(
    name=SUITE_NAME,
    description="LSTM variants (library, cuDNN off, TorchScript, pure Python), fwd and bwd",
    options=OPTIONS,
    plan=plan,
    run_case=run_case,
)
