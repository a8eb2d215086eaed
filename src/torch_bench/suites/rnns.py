"""The rnns suite: LSTM variants in the manner of PyTorch's fastrnns, forward and backward
timed separately. Variants and groups are named as fastrnns names them (`lstm`,
`lstm-backward` for fixed-length variants; `vl_lstm`, `vl_lstm-backward` for the
variable-length ones) so the OSS and AI-PEP exports read the same to existing consumers.
A variant that cannot run here (no TorchScript, say) reports `skipped` with the reason.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from torch_bench.results.schema import Result
from torch_bench.suites.base import (
    BATCH_SIZE_ALIASES,
    CaseContext,
    CaseSpec,
    Option,
    Output,
    Suite,
    batch_size_option,
    parse_bool,
    parse_choices,
    parse_positive_int,
)
from torch_bench.suites.fastrnns_table import fastrnns_table
from torch_bench.suites.fwd_bwd import skipped_results, time_forward_backward
from torch_bench.suites.jit_settings import (
    DEFAULT_EXECUTOR,
    DEFAULT_FUSER,
    JIT_OPTIONS,
    apply_jit_settings,
    jit_settings_params,
)

SUITE_NAME = "rnns"
FORWARD_GROUP = "lstm"
BACKWARD_GROUP = "lstm-backward"
VL_GROUP = "vl_lstm"


class VariantUnavailable(Exception):
    """This variant cannot run on this device or torch; the case reports `skipped`."""


@dataclass
class LstmBench:
    forward: Callable[[], Sequence[Any]]  # returns the tensors to differentiate
    parameters: Sequence[Any]
    num_layers: int
    use_cudnn: bool = True  # False: measured with cuDNN switched off (the aten variant)


def _inputs(sizes: Mapping[str, int], layers: int, device, dtype):
    import torch

    seq, batch = sizes["seq_length"], sizes["mini_batch"]
    x = torch.randn(seq, batch, sizes["input_size"], device=device, dtype=dtype)
    h0 = torch.randn(layers, batch, sizes["hidden_size"], device=device, dtype=dtype)
    c0 = torch.randn(layers, batch, sizes["hidden_size"], device=device, dtype=dtype)
    return x, h0, c0


def _varlen_inputs(sizes: Mapping[str, int], device, dtype):
    """`mini_batch` sequences of random lengths in 1..seq_length, longest first (as packing
    wants), and initial states."""
    import torch

    lengths = torch.randint(1, sizes["seq_length"] + 1, (sizes["mini_batch"],))
    lengths = sorted(lengths.tolist(), reverse=True)
    sequences = [torch.randn(n, sizes["input_size"], device=device, dtype=dtype)
                 for n in lengths]
    _, h0, c0 = _inputs({**sizes, "seq_length": 1}, 1, device, dtype)
    return sequences, h0, c0


def _script_or_skip(fn):
    from torch_bench.models import lstm as lstm_models

    try:
        return lstm_models.scripted(fn)
    except Exception as exc:
        raise VariantUnavailable(f"TorchScript cannot compile {fn.__name__}: {exc}") from exc


def _module_lstm(use_cudnn: bool, varlen: bool = False):
    def build(sizes, device, dtype) -> LstmBench:
        import torch

        layers = 1 if varlen else sizes["num_layers"]
        model = torch.nn.LSTM(sizes["input_size"], sizes["hidden_size"], layers)
        model = model.to(device=device, dtype=dtype)
        if varlen:
            sequences, h0, c0 = _varlen_inputs(sizes, device, dtype)
            x = torch.nn.utils.rnn.pack_sequence(sequences)
        else:
            x, h0, c0 = _inputs(sizes, layers, device, dtype)

        def forward():
            out, (hy, cy) = model(x, (h0, c0))
            return (out.data if varlen else out), hy, cy

        return LstmBench(forward, list(model.parameters()), layers, use_cudnn)

    return build


def _loop_lstm(loop_name: str, scripted: bool):
    """A hand-written loop of `lstm_models` over one layer of weights."""

    def build(sizes, device, dtype) -> LstmBench:
        from torch_bench.models import lstm as lstm_models

        loop = getattr(lstm_models, loop_name)
        if scripted:
            loop = _script_or_skip(loop)
        weights = lstm_models.lstm_weights(sizes["input_size"], sizes["hidden_size"], device,
                                           dtype)
        if loop_name == "varlen_lstm_loop":
            x, h0, c0 = _varlen_inputs(sizes, device, dtype)
        else:
            x, h0, c0 = _inputs(sizes, 1, device, dtype)
        return LstmBench(lambda: loop(x, h0[0], c0[0], *weights), weights, 1)

    return build


def _multilayer_lstm(sizes, device, dtype) -> LstmBench:
    from torch_bench.models import lstm as lstm_models

    loop = _script_or_skip(lstm_models.multilayer_lstm_loop)
    layers = sizes["num_layers"]
    weights = lstm_models.multilayer_weights(layers, sizes["input_size"], sizes["hidden_size"],
                                             device, dtype)
    x, h0, c0 = _inputs(sizes, layers, device, dtype)
    return LstmBench(lambda: loop(x, h0, c0, weights), weights, layers)


@dataclass(frozen=True)
class Variant:
    build: Callable[..., LstmBench]
    group: str  # the forward group; backward is "<group>-backward"
    layered: bool  # whether num_layers applies


# fastrnns' names and groups.
VARIANTS: dict[str, Variant] = {
    "cudnn": Variant(_module_lstm(use_cudnn=True), FORWARD_GROUP, True),
    "aten": Variant(_module_lstm(use_cudnn=False), FORWARD_GROUP, True),
    "jit": Variant(_loop_lstm("lstm_loop", scripted=True), FORWARD_GROUP, False),
    "jit_premul": Variant(_loop_lstm("premul_lstm_loop", scripted=True), FORWARD_GROUP, False),
    "jit_premul_bias": Variant(_loop_lstm("premul_bias_lstm_loop", scripted=True),
                               FORWARD_GROUP, False),
    "jit_simple": Variant(_loop_lstm("simple_lstm_loop", scripted=True), FORWARD_GROUP, False),
    "jit_multilayer": Variant(_multilayer_lstm, FORWARD_GROUP, True),
    "py": Variant(_loop_lstm("lstm_loop", scripted=False), FORWARD_GROUP, False),
    "vl_cudnn": Variant(_module_lstm(use_cudnn=True, varlen=True), VL_GROUP, False),
    "vl_jit": Variant(_loop_lstm("varlen_lstm_loop", scripted=True), VL_GROUP, False),
    "vl_py": Variant(_loop_lstm("varlen_lstm_loop", scripted=False), VL_GROUP, False),
}

SIZE_OPTIONS = ("seq_length", "num_layers", "input_size", "hidden_size")
FIXED_VARIANTS = tuple(name for name, v in VARIANTS.items() if v.group == FORWARD_GROUP)
VARLEN_VARIANTS = tuple(name for name, v in VARIANTS.items() if v.group == VL_GROUP)


OPTIONS = (
    Option("variants", parse_choices(VARIANTS), FIXED_VARIANTS,
           f"LSTM variants to run: {', '.join(VARIANTS)}"),
    Option("variable_lstms", parse_bool, False,
           f"also run the variable-length LSTMs ({', '.join(VARLEN_VARIANTS)}), first, as "
           "fastrnns' --variable-lstms does. They are slow: their loops go sequence by "
           "sequence (fastrnns warns when warmup + nloops > 30)"),
    Option("seq_length", parse_positive_int, 100, "sequence length", ("seqLength",)),
    Option("num_layers", parse_positive_int, 1, "layers of cudnn, aten and jit_multilayer",
           ("numLayers",)),
    Option("input_size", parse_positive_int, 512, "input features", ("inputSize",)),
    Option("hidden_size", parse_positive_int, 512, "hidden features", ("hiddenSize",)),
    replace(batch_size_option((64,), "batch sizes (fastrnns' miniBatch; a list runs each)"),
            aliases=(*BATCH_SIZE_ALIASES, "miniBatch")),
    *JIT_OPTIONS,
)


def planned_variants(options: Mapping[str, Any]) -> tuple[str, ...]:
    """The variants to run: the variable-length ones first when asked for, as fastrnns."""
    extra = VARLEN_VARIANTS if options.get("variable_lstms") else ()
    return tuple(dict.fromkeys((*extra, *options["variants"])))


def plan(options: Mapping[str, Any], device: str) -> list[CaseSpec]:
    cases = []
    jit = {"fuser": options["fuser"], "executor": options["executor"]}
    for batch in options["batch_size"]:
        # recorded as fastrnns names it (mini_batch), so stored series keep their key
        sizes = {**{name: options[name] for name in SIZE_OPTIONS}, "mini_batch": batch}
        for name in planned_variants(options):
            variant = VARIANTS[name]
            cases.append(CaseSpec(
                suite=SUITE_NAME,
                name=name,
                params={**sizes, "device": device, "dtype": "float32",
                        "num_layers": sizes["num_layers"] if variant.layered else 1,
                        **jit_settings_params(**jit)},
                outputs=(Output("forward_time", variant.group),
                         Output("backward_time", f"{variant.group}-backward")),
                options={"sizes": sizes, **jit},
            ))
    return cases


def run_case(case: CaseSpec, ctx: CaseContext) -> list[Result]:
    import torch

    jit = {"fuser": case.options.get("fuser", DEFAULT_FUSER),
           "executor": case.options.get("executor", DEFAULT_EXECUTOR)}
    apply_jit_settings(**jit)
    torch.manual_seed(0)
    try:
        bench = VARIANTS[case.name].build(case.options["sizes"], torch.device(ctx.device),
                                          torch.float32)
    except VariantUnavailable as exc:
        return skipped_results(case, str(exc))
    with cudnn_enabled(bench.use_cudnn):
        return time_forward_backward(case, ctx, bench.forward, bench.parameters, extra=jit)


@contextlib.contextmanager
def cudnn_enabled(enabled: bool) -> Iterator[None]:
    """cuDNN on or off for a whole measurement, as fastrnns' runner switches it: once around
    the variant, not on every call (a `torch.backends.cudnn.flags` block per call costs the
    CPU variants about 4% of a small LSTM's forward and resets the other cuDNN flags)."""
    import torch

    saved = torch.backends.cudnn.enabled
    torch.backends.cudnn.enabled = enabled
    try:
        yield
    finally:
        torch.backends.cudnn.enabled = saved


def report(results: Sequence[Result], options: Mapping[str, Any]) -> list[str]:
    """fastrnns' table, when `--sep` asks for it."""
    sep = options.get("sep")
    return fastrnns_table(results, sep) if sep is not None else []


SUITE = Suite(
    name=SUITE_NAME,
    description="LSTM variants (library, cuDNN off, TorchScript loops, pure Python; "
                "fixed and, with --variable-lstms, variable length), forward and backward",
    options=OPTIONS,
    plan=plan,
    run_case=run_case,
    report=report,
)
