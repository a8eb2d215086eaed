"""Models the suites measure, built in code with random weights (nothing is downloaded).

For a model zoo, two functions return `(model, example_inputs)`, where `example_inputs` is a
dict of keyword arguments (`model(**example_inputs)` runs a forward pass):

    from torch_bench.models import build_tiny, build_resnet, TINY_MODELS, RESNETS

    model, inputs = build_tiny("tiny-gpt2")                 # LM head, batch 2, 16 tokens
    model, inputs = build_tiny("tiny-t5", head=False, batch_size=4, seq_length=32)
    model, inputs = build_resnet("resnet18", batch_size=2, image_size=64)

- `TINY_MODELS`: the built-in tiny transformers, `tiny-bert` (encoder), `tiny-gpt2`
  (decoder) and `tiny-t5` (encoder-decoder; its inputs include `decoder_input_ids`).
- `RESNETS`: `resnet18` and `resnet50` (torchvision's when importable, else the faithful
  implementation in `torch_bench.models.resnet`).
- `load_config(ref)` resolves a built-in name, a local `config.json` or a Hub id into a
  transformers configuration (raising `ModelLoadError`, never hanging, when offline);
  `build_transformer(config, head)` and `transformer_inputs(...)` build from it.

Models are returned in eval mode on the CPU in float32; move and cast them as needed.
"""

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
