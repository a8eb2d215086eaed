"""LSTM implementations the rnns suite compares: library modules and hand-written loops.

The hand-written cell is the textbook LSTM: gates = x W_ih^T + h W_hh^T + b_ih + b_hh, split
into input, forget, cell and output gates.
"""

from __future__ import annotations

import torch
from torch import Tensor


def lstm_cell(x: Tensor, hx: Tensor, cx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor,
              b_hh: Tensor) -> tuple[Tensor, Tensor]:
    gates = torch.mm(x, w_ih.t()) + torch.mm(hx, w_hh.t()) + b_ih + b_hh
    ingate, forgetgate, cellgate, outgate = gates.chunk(4, 1)
    ingate = ingate.sigmoid()
    forgetgate = forgetgate.sigmoid()
    cellgate = cellgate.tanh()
    outgate = outgate.sigmoid()
    cy = forgetgate * cx + ingate * cellgate
    hy = outgate * cy.tanh()
    return hy, cy


def lstm_loop(inputs: Tensor, hx: Tensor, cx: Tensor, w_ih: Tensor, w_hh: Tensor,
              b_ih: Tensor, b_hh: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    outputs = []
    for x in inputs.unbind(0):
        hx, cx = lstm_cell(x, hx, cx, w_ih, w_hh, b_ih, b_hh)
        outputs.append(hx)
    return torch.stack(outputs), hx, cx


def scripted_lstm_loop():
    """`lstm_loop` compiled by TorchScript; raises where scripting is unavailable."""
    script = getattr(torch.jit, "script", None)
    if script is None:
        raise RuntimeError("torch.jit.script is not available in this torch")
    return script(lstm_loop)


def lstm_weights(input_size: int, hidden_size: int, device, dtype) -> list[Tensor]:
    """Weights initialised as nn.LSTM does: uniform in +-1/sqrt(hidden_size)."""
    bound = hidden_size**-0.5
    shapes = [(4 * hidden_size, input_size), (4 * hidden_size, hidden_size),
              (4 * hidden_size,), (4 * hidden_size,)]
    return [
        torch.empty(shape, device=device, dtype=dtype).uniform_(-bound, bound).requires_grad_()
        for shape in shapes
    ]
