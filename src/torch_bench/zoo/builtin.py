"""Built-in zoo models: tiny, so that compiling them on a CPU takes seconds, and the text
classifier the training suite trains.

Each builder returns `(model, example_inputs)` and takes an optional batch size. The
transformers and the ResNet come from `torch_bench.models`, which the other suites measure.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from torch_bench.models import lstm as lstm_models


def _generator(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def mlp(batch_size: int | None = None):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.GELU(), nn.Linear(128, 128), nn.GELU(),
                          nn.Linear(128, 10))
    return model, (torch.randn(batch_size or 16, 64, generator=_generator()),)


class LoopLstm(nn.Module):
    """The hand-written LSTM of the rnns suite (`lstm_models.lstm_loop`), as a module."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        weights = lstm_models.lstm_weights(input_size, hidden_size, "cpu", torch.float32)
        self.w_ih, self.w_hh, self.b_ih, self.b_hh = (nn.Parameter(w.detach()) for w in weights)

    def forward(self, x, hx, cx):
        return lstm_models.lstm_loop(x, hx, cx, self.w_ih, self.w_hh, self.b_ih, self.b_hh)


def lstm(batch_size: int | None = None):
    torch.manual_seed(0)
    batch, seq, input_size, hidden = batch_size or 4, 6, 16, 32
    gen = _generator()
    inputs = (torch.randn(seq, batch, input_size, generator=gen),
              torch.randn(batch, hidden, generator=gen), torch.randn(batch, hidden, generator=gen))
    return LoopLstm(input_size, hidden), inputs


class Block(nn.Module):
    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ff = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        batch, seq, dim = x.shape
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        q, k, v = (t.view(batch, seq, self.heads, dim // self.heads).transpose(1, 2)
                   for t in (q, k, v))
        attended = F.scaled_dot_product_attention(q, k, v)
        x = x + self.proj(attended.transpose(1, 2).reshape(batch, seq, dim))
        return x + self.ff(self.norm2(x))


class TinyTextClassifier(nn.Module):
    """Token embeddings, positional embeddings, transformer blocks, mean pooling, a linear
    head: a small encoder classifying token sequences."""

    def __init__(self, vocab: int = 64, seq_length: int = 16, dim: int = 32, heads: int = 4,
                 layers: int = 2, classes: int = 2) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.position = nn.Parameter(torch.randn(seq_length, dim) * 0.02)
        self.blocks = nn.Sequential(*(Block(dim, heads) for _ in range(layers)))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, tokens):
        x = self.embed(tokens) + self.position[: tokens.shape[1]]
        return self.head(self.norm(self.blocks(x)).mean(dim=1))


def _tiny(name: str, batch_size: int | None):
    from torch_bench.models import build_tiny

    return build_tiny(name, head=True, batch_size=batch_size or 2, seq_length=16)


def tiny_bert(batch_size: int | None = None):
    """The encoder of `torch_bench.models` with its masked-LM head."""
    return _tiny("tiny-bert", batch_size)


def tiny_gpt2(batch_size: int | None = None):
    """The decoder of `torch_bench.models` with its causal-LM head."""
    return _tiny("tiny-gpt2", batch_size)


def tiny_t5(batch_size: int | None = None):
    """The encoder-decoder of `torch_bench.models`."""
    return _tiny("tiny-t5", batch_size)


def resnet18(batch_size: int | None = None):
    """ResNet-18 of `torch_bench.models` on 32x32 images, small enough for a CPU."""
    from torch_bench.models import build_resnet

    return build_resnet("resnet18", batch_size=batch_size or 2, image_size=32)
