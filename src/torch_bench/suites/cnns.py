"""The cnns suite: ResNet-18 and ResNet-50 in the manner of PyTorch's fastrnns, forward and
backward timed separately, in groups `resnet` and `resnet-backward`. Variants are named as
fastrnns names them: `resnet18`, `resnet50` (eager), `resnet18_jit`, `resnet50_jit`
(TorchScript-scripted), plus `resnet18_compiled`, `resnet50_compiled` (`torch.compile` with
`compile_backend`). torchvision's models are used when it is importable, else the project's
own implementation (`torch_bench.models.resnet`); `extra.implementation` says which.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from torch_bench.results.schema import Result
from torch_bench.suites.base import (
    CaseContext,
    CaseSpec,
    Option,
    Output,
    Suite,
    batch_size_option,
    parse_choices,
    parse_positive_int,
)
from torch_bench.suites.compile import parse_backend
from torch_bench.suites.fastrnns_table import fastrnns_table
from torch_bench.suites.fwd_bwd import skipped_results, time_forward_backward
from torch_bench.suites.jit_settings import (
    DEFAULT_EXECUTOR,
    DEFAULT_FUSER,
    JIT_OPTIONS,
    apply_jit_settings,
    jit_settings_params,
)

SUITE_NAME = "cnns"
FORWARD_GROUP = "resnet"
BACKWARD_GROUP = "resnet-backward"
# variant -> (architecture, how it is prepared)
VARIANTS: dict[str, tuple[str, str]] = {
    f"{arch}{suffix}": (arch, how)
    for arch in ("resnet18", "resnet50")
    for suffix, how in (("", "eager"), ("_jit", "script"), ("_compiled", "compile"))
}
DEFAULT_VARIANTS = ("resnet18", "resnet18_jit", "resnet50", "resnet50_jit")


OPTIONS = (
    Option("cnns", parse_choices(VARIANTS), DEFAULT_VARIANTS,
           f"ResNet variants to run: {', '.join(VARIANTS)}"),
    batch_size_option((64,)),
    Option("image_size", parse_positive_int, 224, "image height and width"),
    Option("compile_backend", parse_backend, "inductor",
           "torch.compile backend of the _compiled variants"),
    *JIT_OPTIONS,
)


def plan(options: Mapping[str, Any], device: str) -> list[CaseSpec]:
    jit = {"fuser": options["fuser"], "executor": options["executor"]}
    return [
        CaseSpec(
            suite=SUITE_NAME,
            name=name,
            params={"model": VARIANTS[name][0], "mini_batch": batch,
                    "image_size": options["image_size"], "device": device, "dtype": "float32",
                    **({"backend": options["compile_backend"]}
                       if VARIANTS[name][1] == "compile" else {}),
                    **(jit_settings_params(**jit) if VARIANTS[name][1] == "script" else {})},
            outputs=(Output("forward_time", FORWARD_GROUP),
                     Output("backward_time", BACKWARD_GROUP)),
            options=jit,
        )
        for batch in options["batch_size"]
        for name in options["cnns"]
    ]


class Unavailable(Exception):
    pass


def _prepare(model, how: str, backend: str | None):
    import torch

    if how == "script":
        script = getattr(torch.jit, "script", None)
        if script is None:
            raise Unavailable("torch.jit.script is not available in this torch")
        try:
            return script(model)
        except Exception as exc:
            raise Unavailable(f"TorchScript cannot script the model: {exc}") from exc
    if how == "compile":
        if not hasattr(torch, "compile"):
            raise Unavailable("torch.compile is not available in this torch")
        return torch.compile(model, backend=backend)
    return model


def run_case(case: CaseSpec, ctx: CaseContext) -> list[Result]:
    import torch

    from torch_bench.models.resnet import resnet, resnet_source

    jit = {"fuser": case.options.get("fuser", DEFAULT_FUSER),
           "executor": case.options.get("executor", DEFAULT_EXECUTOR)}
    apply_jit_settings(**jit)
    torch.manual_seed(0)
    arch, how = VARIANTS[case.name]
    device = torch.device(ctx.device)
    model = resnet(arch).to(device).train()
    images = torch.randn(case.params["mini_batch"], 3, case.params["image_size"],
                         case.params["image_size"], device=device)
    try:
        prepared = _prepare(model, how, case.params.get("backend"))
    except Unavailable as exc:
        return skipped_results(case, str(exc))
    return time_forward_backward(case, ctx, lambda: prepared(images), list(model.parameters()),
                                 extra={"implementation": resnet_source(), **jit})


def report(results, options) -> list[str]:
    """fastrnns' table, when `--sep` asks for it."""
    sep = options.get("sep")
    return fastrnns_table(results, sep) if sep is not None else []


SUITE = Suite(
    name=SUITE_NAME,
    description="ResNet-18/50, eager, scripted and compiled, forward and backward",
    options=OPTIONS,
    plan=plan,
    run_case=run_case,
    report=report,
)
