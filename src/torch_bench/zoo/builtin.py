"""Built-in zoo models: tiny, so that compiling them on a CPU takes seconds.

Each builder returns `(model, example_inputs)` and takes an optional batch size.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from torch_bench.suites import lstm_models


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


def tiny_transformer(batch_size: int | None = None):
    torch.manual_seed(0)
    model = TinyTextClassifier()
    return model, (torch.randint(0, 64, (batch_size or 8, 16), generator=_generator()),)


class BasicBlock(nn.Module):
    def __init__(self, channels_in: int, channels: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels_in, channels, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        self.shortcut = nn.Identity() if stride == 1 and channels_in == channels else \
            nn.Sequential(nn.Conv2d(channels_in, channels, 1, stride, bias=False),
                          nn.BatchNorm2d(channels))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(out)) + self.shortcut(x))


class TinyResNet(nn.Module):
    """A ResNet of basic blocks, two stages of 8 and 16 channels."""

    def __init__(self, classes: int = 10) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 1, 1, bias=False), nn.BatchNorm2d(8),
                                  nn.ReLU())
        self.stages = nn.Sequential(BasicBlock(8, 8, 1), BasicBlock(8, 16, 2))
        self.head = nn.Linear(16, classes)

    def forward(self, images):
        x = self.stages(self.stem(images))
        return self.head(x.mean(dim=(2, 3)))


def tiny_resnet(batch_size: int | None = None):
    torch.manual_seed(0)
    model = TinyResNet()
    return model, (torch.randn(batch_size or 4, 3, 16, 16, generator=_generator()),)
