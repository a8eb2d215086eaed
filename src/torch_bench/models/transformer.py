"""Transformer models built from a configuration with random weights, and their inputs.

`head=True` picks the model with its language-model head (masked LM for encoders, causal
LM for decoders, conditional generation for encoder-decoders), as the Hugging Face
benchmark utilities did; `head=False` the bare model. Inputs are random token ids;
encoder-decoder models also get `decoder_input_ids`.
"""

from __future__ import annotations

from typing import Any


def is_encoder_decoder(config) -> bool:
    return bool(getattr(config, "is_encoder_decoder", False))


def _head_classes():
    from transformers import (
        AutoModelForCausalLM,
        AutoModelForMaskedLM,
        AutoModelForSeq2SeqLM,
    )

    return AutoModelForSeq2SeqLM, AutoModelForMaskedLM, AutoModelForCausalLM


def build_transformer(config, head: bool = True):
    """A model for `config` with random weights, in eval mode."""
    from transformers import AutoModel

    if not head:
        return AutoModel.from_config(config).eval()
    seq2seq, masked, causal = _head_classes()
    candidates = (seq2seq,) if is_encoder_decoder(config) else (masked, causal)
    for auto_class in candidates:
        try:
            return auto_class.from_config(config).eval()
        except ValueError:  # no such head for this model type
            continue
    raise ValueError(f"model type {config.model_type!r} has no language-model head class")


def vocab_size(config) -> int:
    return int(getattr(config, "vocab_size", 0) or 0) or 1000


def max_positions(config) -> int | None:
    for name in ("max_position_embeddings", "n_positions", "max_sequence_length"):
        value = getattr(config, name, None)
        if isinstance(value, int) and value > 0:
            return value
    return None  # relative positions (T5): any length


def transformer_inputs(config, batch_size: int, seq_length: int, device="cpu",
                       labels: bool = False, generator=None) -> dict[str, Any]:
    """Random token ids of shape (batch_size, seq_length) as keyword arguments; the decoder
    of an encoder-decoder model reads the same ids; `labels` for a training step."""
    import torch

    ids = torch.randint(0, vocab_size(config), (batch_size, seq_length), generator=generator)
    ids = ids.to(device)
    inputs: dict[str, Any] = {"input_ids": ids}
    if is_encoder_decoder(config):
        inputs["decoder_input_ids"] = ids
    if labels:
        inputs["labels"] = ids
    return inputs
