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

__all__ = ["TINY_MODELS", "RESNETS", "ModelLoadError", "build_resnet", "build_tiny",
           "build_transformer", "load_config", "transformer_inputs"]


def __getattr__(name: str) -> Any:
    # Loaded on first use: `torch-bench run` builds its parser from suite modules that import
    # small helpers of this package, and a refused flag must not wait for torch to import.
    if name in __all__:
        from torch_bench.models import builders

        return getattr(builders, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
