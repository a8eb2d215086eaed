"""Four small models. The sizes at the top are what a pull request changes."""

import torch
from torch import nn

WIDTH = 256  # features of the MLP's input and hidden layers
MLP_LAYERS = 2  # hidden layers of the MLP
LSTM_HIDDEN = 64  # hidden features of the recurrent model's LSTM
CHANNELS = 8  # channels of the CNN's convolutions


def mlp() -> nn.Module:
    layers: list[nn.Module] = []
    for _ in range(MLP_LAYERS):
        layers += [nn.Linear(WIDTH, WIDTH), nn.ReLU()]
    return nn.Sequential(*layers, nn.Linear(WIDTH, 10))


def cnn() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(3, CHANNELS, 3, padding=1), nn.ReLU(),
        nn.Conv2d(CHANNELS, CHANNELS, 3, padding=1), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(CHANNELS, 10))


class Recurrent(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(32, LSTM_HIDDEN, batch_first=True)
        self.head = nn.Linear(LSTM_HIDDEN, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.lstm(x)
        return self.head(out[:, -1])


class Attention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attention = nn.MultiheadAttention(64, 4, batch_first=True)
        self.norm = nn.LayerNorm(64)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.attention(x, x, x, need_weights=False)
        return self.norm(x + out)


def build(name: str, batch: int) -> tuple[nn.Module, torch.Tensor]:
    """The model called `name` in eval mode and an input batch of `batch` for it."""
    torch.manual_seed(0)
    made = {
        "mlp": (mlp, (batch, 20, WIDTH)),  # 20 tokens a sample
        "cnn": (cnn, (batch, 3, 16, 16)),
        "lstm": (Recurrent, (batch, 64, 32)),
        "attention": (Attention, (batch, 32, 64)),
    }
    factory, shape = made[name]
    return factory().eval(), torch.randn(*shape)
