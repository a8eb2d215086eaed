"""LSTM implementations the rnns suite compares: library modules and hand-written loops, in
the variants PyTorch's fastrnns measures (written here from the textbook equations).

The hand-written cell is the textbook LSTM: gates = x W_ih^T + h W_hh^T + b_ih + b_hh, split
into input, forget, cell and output gates. The variants differ in where the work happens:
- `lstm_loop`: the cell at every step, outputs stacked;
- `premul_lstm_loop`: the input projection of all steps done up front in one matmul;
- `premul_bias_lstm_loop`: the same, with both biases folded into that projection;
- `simple_lstm_loop`: the plain cell, returning only the final state (no output stack);
- `multilayer_lstm_loop`: several layers, each feeding the next;
- `varlen_lstm_loop`: a list of sequences of different lengths, one at a time.
Each is scriptable by TorchScript (`scripted`).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor


def _state_update(gates: Tensor, cx: Tensor) -> tuple[Tensor, Tensor]:
    ingate, forgetgate, cellgate, outgate = gates.chunk(4, 1)
    ingate = ingate.sigmoid()
    forgetgate = forgetgate.sigmoid()
    cellgate = cellgate.tanh()
    outgate = outgate.sigmoid()
    cy = forgetgate * cx + ingate * cellgate
    hy = outgate * cy.tanh()
    return hy, cy


def lstm_cell(x: Tensor, hx: Tensor, cx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor,
              b_hh: Tensor) -> tuple[Tensor, Tensor]:
    gates = torch.mm(x, w_ih.t()) + torch.mm(hx, w_hh.t()) + b_ih + b_hh
    return _state_update(gates, cx)


def lstm_loop(inputs: Tensor, hx: Tensor, cx: Tensor, w_ih: Tensor, w_hh: Tensor,
              b_ih: Tensor, b_hh: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    outputs = []
    for x in inputs.unbind(0):
        hx, cx = lstm_cell(x, hx, cx, w_ih, w_hh, b_ih, b_hh)
        outputs.append(hx)
    return torch.stack(outputs), hx, cx


def premul_lstm_loop(inputs: Tensor, hx: Tensor, cx: Tensor, w_ih: Tensor, w_hh: Tensor,
                     b_ih: Tensor, b_hh: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    projected = torch.matmul(inputs, w_ih.t())
    outputs = []
    for x_proj in projected.unbind(0):
        hx, cx = _state_update(x_proj + torch.mm(hx, w_hh.t()) + b_ih + b_hh, cx)
        outputs.append(hx)
    return torch.stack(outputs), hx, cx


def premul_bias_lstm_loop(inputs: Tensor, hx: Tensor, cx: Tensor, w_ih: Tensor, w_hh: Tensor,
                          b_ih: Tensor, b_hh: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    projected = torch.matmul(inputs, w_ih.t()) + (b_ih + b_hh)
    outputs = []
    for x_proj in projected.unbind(0):
        hx, cx = _state_update(x_proj + torch.mm(hx, w_hh.t()), cx)
        outputs.append(hx)
    return torch.stack(outputs), hx, cx


def simple_lstm_loop(inputs: Tensor, hx: Tensor, cx: Tensor, w_ih: Tensor, w_hh: Tensor,
                     b_ih: Tensor, b_hh: Tensor) -> tuple[Tensor, Tensor]:
    for x in inputs.unbind(0):
        hx, cx = lstm_cell(x, hx, cx, w_ih, w_hh, b_ih, b_hh)
    return hx, cx


def multilayer_lstm_loop(inputs: Tensor, hx: Tensor, cx: Tensor,
                         weights: list[Tensor]) -> tuple[Tensor, Tensor, Tensor]:
    """`hx`, `cx`: (layers, batch, hidden); `weights`: w_ih, w_hh, b_ih, b_hh per layer."""
    layer_h: list[Tensor] = []
    layer_c: list[Tensor] = []
    for layer in range(hx.size(0)):
        w = weights[4 * layer:4 * layer + 4]
        inputs, h, c = lstm_loop(inputs, hx[layer], cx[layer], w[0], w[1], w[2], w[3])
        layer_h.append(h)
        layer_c.append(c)
    return inputs, torch.stack(layer_h), torch.stack(layer_c)


def varlen_lstm_loop(sequences: list[Tensor], hx: Tensor, cx: Tensor, w_ih: Tensor,
                     w_hh: Tensor, b_ih: Tensor, b_hh: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Each sequence (its length, input features) runs alone with its row of `hx`, `cx`;
    returns all outputs concatenated along time, and the final states (batch, hidden)."""
    outputs: list[Tensor] = []
    final_h: list[Tensor] = []
    final_c: list[Tensor] = []
    for index, sequence in enumerate(sequences):
        out, h, c = lstm_loop(sequence.unsqueeze(1), hx[index:index + 1], cx[index:index + 1],
                              w_ih, w_hh, b_ih, b_hh)
        outputs.append(out.squeeze(1))
        final_h.append(h)
        final_c.append(c)
    return torch.cat(outputs), torch.cat(final_h), torch.cat(final_c)


def scripted(fn: Callable) -> Callable:
    """`fn` compiled by TorchScript; raises where scripting is unavailable."""
    script = getattr(torch.jit, "script", None)
    if script is None:
        raise RuntimeError("torch.jit.script is not available in this torch")
    return script(fn)


def scripted_lstm_loop():
    return scripted(lstm_loop)


def lstm_weights(input_size: int, hidden_size: int, device, dtype) -> list[Tensor]:
    """Weights initialised as nn.LSTM does: uniform in +-1/sqrt(hidden_size)."""
    bound = hidden_size**-0.5
    shapes = [(4 * hidden_size, input_size), (4 * hidden_size, hidden_size),
              (4 * hidden_size,), (4 * hidden_size,)]
    return [
        torch.empty(shape, device=device, dtype=dtype).uniform_(-bound, bound).requires_grad_()
        for shape in shapes
    ]


def multilayer_weights(layers: int, input_size: int, hidden_size: int, device,
                       dtype) -> list[Tensor]:
    weights = []
    for layer in range(layers):
        weights += lstm_weights(input_size if layer == 0 else hidden_size, hidden_size, device,
                                dtype)
    return weights
