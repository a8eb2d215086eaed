"""Built-in tiny transformer configurations: small enough for CPU tests and demos, shaped like
the families users benchmark (an encoder, a decoder, an encoder-decoder). Built in code, so
they need neither network nor files."""

from __future__ import annotations

from typing import Any

VOCAB_SIZE = 1024
MAX_POSITIONS = 512

# name -> (model_type, configuration fields); `AutoConfig.for_model` builds each.
TINY_CONFIGS: dict[str, tuple[str, dict[str, Any]]] = {
    "tiny-bert": ("bert", {
        "vocab_size": VOCAB_SIZE, "hidden_size": 64, "num_hidden_layers": 2,
        "num_attention_heads": 2, "intermediate_size": 128,
        "max_position_embeddings": MAX_POSITIONS, "pad_token_id": 0,
    }),
    "tiny-gpt2": ("gpt2", {
        "vocab_size": VOCAB_SIZE, "n_positions": MAX_POSITIONS, "n_embd": 64, "n_layer": 2,
        "n_head": 2, "bos_token_id": 0, "eos_token_id": 0,
    }),
    "tiny-t5": ("t5", {
        "vocab_size": VOCAB_SIZE, "d_model": 64, "d_kv": 32, "d_ff": 128, "num_layers": 2,
        "num_decoder_layers": 2, "num_heads": 2, "decoder_start_token_id": 0,
        "pad_token_id": 0, "eos_token_id": 1,
    }),
}


def tiny_config(name: str):
    """The transformers configuration of a built-in tiny model."""
    from transformers import AutoConfig

    model_type, fields = TINY_CONFIGS[name]
    return AutoConfig.for_model(model_type, **fields)
