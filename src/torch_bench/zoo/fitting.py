"""Training a zoo model for the training suite's loss-parity check. A zoo entry gives a model
and one batch of example inputs, no labels: the model is fitted to fixed random targets
shaped like its outputs (mean squared error over its floating-point outputs), a loss that
starts positive and falls as training works, the same for the native and compiled runs."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import torch

from torch_bench.zoo import Example
from torch_bench.zoo.accuracy import leaves


def _float_outputs(outputs: Any) -> list[torch.Tensor]:
    tensors = [t for _, t in leaves(outputs)
               if isinstance(t, torch.Tensor) and t.is_floating_point()]
    if not tensors:
        raise TypeError("the model returned no floating-point tensor to train on")
    return tensors


def random_targets(example: Example, seed: int) -> list[torch.Tensor]:
    """Targets shaped like the model's floating-point outputs, drawn from a seeded stream."""
    with torch.no_grad():
        outputs = _float_outputs(example.model(*example.args, **example.kwargs))
    generator = torch.Generator().manual_seed(seed)
    return [torch.randn(t.shape, generator=generator, dtype=torch.float32).to(t.device)
            for t in outputs]


def fitting_loss(outputs: Any, targets: list[torch.Tensor]) -> torch.Tensor:
    tensors = _float_outputs(outputs)
    return sum(torch.nn.functional.mse_loss(t.float(), target)
               for t, target in zip(tensors, targets, strict=True))


def fit(model, optimizer, example: Example, targets: list[torch.Tensor], epochs: int,
        steps_per_epoch: int, device: str,
        compile_fn: Callable[[Any], Any] | None = None) -> tuple[list[float], list[float],
                                                                   list[float]]:
    """(step losses, mean loss per epoch, epoch times in ms) of training on the example."""
    call = compile_fn(model) if compile_fn else model

    def one_epoch() -> list[torch.Tensor]:
        steps = []
        for _ in range(steps_per_epoch):
            optimizer.zero_grad(set_to_none=True)
            loss = fitting_loss(call(*example.args, **example.kwargs), targets)
            loss.backward()
            optimizer.step()
            steps.append(loss.detach())
        return steps

    return timed_epochs(model, epochs, device, one_epoch)


def timed_epochs(model, epochs: int, device: str, one_epoch: Callable[[], list[torch.Tensor]]
                 ) -> tuple[list[float], list[float], list[float]]:
    """(step losses, mean loss per epoch, epoch times in ms) of `epochs` calls of `one_epoch`,
    which trains the model for one epoch and returns its steps' detached losses."""
    losses, epoch_losses, epoch_times = [], [], []
    for _ in range(epochs):
        model.train()
        start = time.perf_counter()
        steps = one_epoch()
        if device.startswith("cuda"):
            torch.cuda.synchronize(device)
        epoch_times.append((time.perf_counter() - start) * 1e3)
        values = [float(s) for s in steps]
        losses += values
        epoch_losses.append(sum(values) / len(values))
    return losses, epoch_losses, epoch_times
