"""Transformer models built from a configuration with random weights, and their inputs.

As the Hugging Face benchmark utilities build them: `head=True` picks the class the
configuration names in `architectures` (a BertForSequenceClassification config builds that
class), else the model with its language-model head (masked LM for encoders, causal LM for
decoders, conditional generation for encoder-decoders); `head=False` the bare model. Inputs
are random token ids; encoder-decoder models also get `decoder_input_ids`. A composite
`EncoderDecoderConfig` keeps its vocabularies and positions in `config.encoder` and
`config.decoder`, and they are read there.
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


def named_architecture(config) -> str | None:
    """The first class `config.architectures` names, if any."""
    names = getattr(config, "architectures", None)
    return names[0] if isinstance(names, list) and names and isinstance(names[0], str) else None


def build_transformer(config, head: bool = True):
    """A model for `config` with random weights, in eval mode."""
    import transformers
    from transformers import AutoModel

    if not head:
        return AutoModel.from_config(config).eval()
    architecture = named_architecture(config)
    if architecture is not None:
        model_class = getattr(transformers, architecture, None)
        if model_class is None:
            raise ValueError(f"the configuration names {architecture!r}, which this "
                             f"transformers ({transformers.__version__}) does not have")
        return model_class(config).eval()
    seq2seq, masked, causal = _head_classes()
    candidates = (seq2seq,) if is_encoder_decoder(config) else (masked, causal)
    for auto_class in candidates:
        try:
            return auto_class.from_config(config).eval()
        except ValueError:  # no such head for this model type
            continue
    raise ValueError(f"model type {config.model_type!r} has no language-model head class")


def _side(config, part: str):
    """`config.encoder` / `config.decoder` of a composite encoder-decoder config, else the
    config itself."""
    inner = getattr(config, part, None)
    return inner if hasattr(inner, "model_type") else config


def vocab_size(config, part: str = "encoder") -> int:
    value = getattr(_side(config, part), "vocab_size", 0)
    return int(value or 0) or 1000


def _positions(config) -> int | None:
    for name in ("max_position_embeddings", "n_positions", "max_sequence_length"):
        value = getattr(config, name, None)
        if isinstance(value, int) and value > 0:
            return value
    return None  # relative positions (T5): any length


def max_positions(config) -> int | None:
    limits = [p for p in (_positions(_side(config, "encoder")),
                          _positions(_side(config, "decoder"))) if p is not None]
    return min(limits) if limits else None


def _labels(config, ids, decoder_ids, generator):
    """Training labels shaped for the head the config names: a class per sequence or per
    token for classifiers, else the (decoder) token ids."""
    import torch

    architecture = named_architecture(config) or ""
    classes = int(getattr(config, "num_labels", 2) or 2)
    if architecture.endswith("ForSequenceClassification"):
        return torch.randint(0, classes, ids.shape[:1], generator=generator).to(ids.device)
    if architecture.endswith("ForTokenClassification"):
        return torch.randint(0, classes, ids.shape, generator=generator).to(ids.device)
    return decoder_ids if decoder_ids is not None else ids


def transformer_inputs(config, batch_size: int, seq_length: int, device="cpu",
                       labels: bool = False, generator=None) -> dict[str, Any]:
    """Random token ids of shape (batch_size, seq_length) as keyword arguments; the decoder
    of an encoder-decoder model reads the same ids (within its own vocabulary); `labels`
    for a training step."""
    import torch

    ids = torch.randint(0, vocab_size(config), (batch_size, seq_length), generator=generator)
    ids = ids.to(device)
    inputs: dict[str, Any] = {"input_ids": ids}
    decoder_ids = None
    if is_encoder_decoder(config):
        decoder_ids = ids % vocab_size(config, "decoder")  # the same ids where vocabs agree
        inputs["decoder_input_ids"] = decoder_ids
    if labels:
        inputs["labels"] = _labels(config, ids, decoder_ids, generator)
    return inputs
