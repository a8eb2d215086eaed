"""Names the user picks that only torch can check: compile backends and optimizers, checked
in the parent process before any case runs, as the dynamo runner does; and the TF32 setting
the dynamo runner applies on CUDA."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def known_backends() -> list[str]:
    """Every registered torch.compile backend, debug ones (eager, aot_eager) included."""
    import torch._dynamo

    return sorted(torch._dynamo.list_backends(exclude_tags=()))


def check_backend(name: str, known: Callable[[], list[str]] = known_backends) -> str:
    backends = known()
    if name not in backends:
        raise ValueError(f"unknown torch.compile backend {name!r}; this torch has: "
                         f"{', '.join(backends)}")
    return name


def optimizer_classes() -> dict[str, type]:
    """torch.optim's optimizers by lower-case class name (adam, adamw, sgd, rmsprop, ...)."""
    import torch

    return {name.lower(): cls for name, cls in vars(torch.optim).items()
            if isinstance(cls, type) and issubclass(cls, torch.optim.Optimizer)
            and cls is not torch.optim.Optimizer}


def parse_optimizer(text: str) -> str:
    """Any torch.optim optimizer, by class name in any case; recorded in lower case."""
    name = str(text).strip().lower()
    known = optimizer_classes()
    if name not in known:
        raise ValueError(f"unknown optimizer {text!r}; torch.optim has: {', '.join(sorted(known))}")
    return name


def apply_tf32(torch_module: Any, device: str, enabled: bool = True) -> dict[str, Any]:
    """On CUDA, allow TF32 in matmuls and cuDNN convolutions as the dynamo benchmark runner
    does, and say what was set (recorded with the results); nothing on CPU."""
    if not device.startswith("cuda"):
        return {}
    torch_module.backends.cuda.matmul.allow_tf32 = enabled
    torch_module.backends.cudnn.allow_tf32 = enabled
    return {"tf32": {"matmul": bool(torch_module.backends.cuda.matmul.allow_tf32),
                     "cudnn": bool(torch_module.backends.cudnn.allow_tf32)}}
