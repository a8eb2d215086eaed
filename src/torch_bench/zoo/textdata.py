"""Data for the training suite's text-classification task.

Synthetic by default: token sequences drawn uniformly from a small vocabulary, labelled 1 when
more than half of the tokens come from the lower half of the vocabulary. A model has to
count, which a tiny transformer learns in a few epochs. Optionally a Hugging Face dataset
(`hf:NAME[:SPLIT]`, columns `text` and `label`), tokenised by hashing words into the same
vocabulary; that needs the `datasets` package and network access.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where tensors are made: `run` parses its flags without torch
    import torch

VOCAB = 64
SEQ_LENGTH = 16


@dataclass(frozen=True)
class TextData:
    tokens: torch.Tensor  # (samples, SEQ_LENGTH) int64
    labels: torch.Tensor  # (samples,) int64


def synthetic(samples: int, seed: int) -> TextData:
    import torch

    gen = torch.Generator().manual_seed(seed)
    tokens = torch.randint(0, VOCAB, (samples, SEQ_LENGTH), generator=gen)
    labels = ((tokens < VOCAB // 2).sum(dim=1) > SEQ_LENGTH // 2).long()
    return TextData(tokens, labels)


def parse_dataset(text: str) -> str:
    """`synthetic` or `hf:NAME[:SPLIT]`; the latter only where `datasets` is installed."""
    value = str(text).strip()
    if value == "synthetic":
        return value
    if not value.startswith("hf:") or not value[3:].split(":")[0]:
        raise ValueError(f"expected synthetic or hf:NAME[:SPLIT], got {text!r}")
    try:
        import datasets  # noqa: F401
    except ImportError:
        raise ValueError(f"{value}: needs the `datasets` package (pip install datasets) and "
                         "network access; use `synthetic` here") from None
    return value


def _hash_tokens(text: str) -> list[int]:
    words = text.lower().split()[:SEQ_LENGTH]
    ids = [1 + zlib.crc32(w.encode()) % (VOCAB - 1) for w in words]
    return ids + [0] * (SEQ_LENGTH - len(ids))


def hugging_face(spec: str, samples: int, offset: int = 0) -> TextData:
    """Rows `offset` to `offset + samples` of a Hugging Face dataset (network needed)."""
    import datasets
    import torch

    _, name, *rest = spec.split(":")
    split = rest[0] if rest else "train"
    rows = datasets.load_dataset(name, split=split).select(range(offset, offset + samples))
    tokens = torch.tensor([_hash_tokens(t) for t in rows["text"]])
    labels = torch.tensor(rows["label"]).long()
    return TextData(tokens, labels)


def load(spec: str, samples: int, seed: int, offset: int = 0) -> TextData:
    return synthetic(samples, seed) if spec == "synthetic" else \
        hugging_face(spec, samples, offset)
