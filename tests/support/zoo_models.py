"""User zoo models for the compile suite's tests, each misbehaving in one way."""

import torch
from torch import nn


class Perturbed(nn.Module):
    """Right in eager, wrong when compiled: adds 0.5 while dynamo traces it."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 4)

    def forward(self, x):
        y = self.linear(x)
        if torch.compiler.is_compiling():
            y = y + 0.5
        return y


def perturbed(batch_size=None):
    torch.manual_seed(0)
    return Perturbed(), (torch.randn(batch_size or 2, 8),)


def broken():
    raise ImportError("weights for this model are not available")


class Crashing(nn.Module):
    def forward(self, x):
        raise RuntimeError("shape mismatch in layer 3")


def crashing():
    return Crashing(), torch.randn(2, 2)


CALLS = [0]


class Restless(nn.Module):
    """Its output changes on every call (a module-level counter): not deterministic."""

    def forward(self, x):
        CALLS[0] += 1
        return x * CALLS[0]


def restless():
    return Restless(), {"x": torch.ones(2, 2)}


class Hungry(nn.Module):
    def forward(self, x):
        raise RuntimeError("DefaultCPUAllocator: can't allocate memory: you tried to allocate "
                           "1099511627776 bytes")


def hungry():
    return Hungry(), (torch.ones(1),)
