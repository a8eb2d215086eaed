"""The package's model builders (`torch_bench.models` re-exports them lazily, so that importing
a submodule such as `models.dtypes` does not import torch)."""

from __future__ import annotations

from typing import Any

from torch_bench.models.resnet import ARCHITECTURES, resnet
from torch_bench.models.sources import ModelLoadError, load_config
from torch_bench.models.tiny import TINY_CONFIGS, tiny_config
from torch_bench.models.transformer import build_transformer, transformer_inputs

TINY_MODELS: tuple[str, ...] = tuple(TINY_CONFIGS)
RESNETS: tuple[str, ...] = tuple(ARCHITECTURES)

__all__ = ["TINY_MODELS", "RESNETS", "ModelLoadError", "build_resnet", "build_tiny",
           "build_transformer", "load_config", "transformer_inputs"]


def build_tiny(name: str, head: bool = True, batch_size: int = 2,
               seq_length: int = 16) -> tuple[Any, dict[str, Any]]:
    """A built-in tiny transformer (see `TINY_MODELS`) and random inputs for it."""
    import torch

    if name not in TINY_CONFIGS:
        raise ValueError(f"unknown tiny model {name!r}; known: {', '.join(TINY_MODELS)}")
    config = tiny_config(name)
    torch.manual_seed(0)
    model = build_transformer(config, head=head)
    return model, transformer_inputs(config, batch_size, seq_length)


def build_resnet(name: str, batch_size: int = 2,
                 image_size: int = 224) -> tuple[Any, dict[str, Any]]:
    """ResNet `name` (see `RESNETS`) and a random image batch, `{"x": images}`."""
    import torch

    torch.manual_seed(0)
    model = resnet(name).eval()
    return model, {"x": torch.randn(batch_size, 3, image_size, image_size)}
