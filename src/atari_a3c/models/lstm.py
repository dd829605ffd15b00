"""The LSTM core's unroll over a rollout, with a backward written for it.

Autograd through a loop of `LSTMCell` steps computes the recurrent weights' gradient once per
step, as a product over the batch alone (16 rows for one actor's envs), and adds the steps'
products into one tensor. Here the backward keeps every step's gate gradients and computes
that gradient in one product over all steps and envs (docs/findings.md, "Speed").
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor


def _unroll(gates_in, keep, h0, c0, weight_hh, bias_hh, saved: list | None = None):
    """The forward of `LSTMUnroll`; appends to `saved`, if given, what its backward needs."""
    h, c = h0, c0
    hidden = []
    bias_hh = bias_hh.to(weight_hh.dtype)  # the products' dtype, with or without autocast
    for t in range(len(gates_in)):
        h, c = h * keep[t], c * keep[t]
        recurrent = F.linear(h.to(weight_hh.dtype), weight_hh, bias_hh)
        acts = (gates_in[t] + recurrent).float()  # a new tensor
        i, f, g, o = acts.chunk(4, dim=-1)
        i.sigmoid_(), f.sigmoid_(), g.tanh_(), o.sigmoid_()
        c_next = f * c + i * g
        tanh_c = c_next.tanh()
        if saved is not None:
            saved.append((h, c, acts, tanh_c))
        h, c = o * tanh_c, c_next
        hidden.append(h)
    return torch.stack(hidden), c


class LSTMUnroll(torch.autograd.Function):
    """`nn.LSTMCell` steps over `[T, B]`, the state multiplied by `keep[t]` before step `t`.

    Inputs: `gates_in [T, B, 4H]` (the input projection of every step, float32 or bf16),
    `keep [T, B, 1]`, the state `h0, c0 [B, H]`, and the recurrent `weight_hh [4H, H]` (in
    the gates' dtype) and `bias_hh [4H]`. Returns every step's hidden state `[T, B, H]` and
    the last cell state `[B, H]`, both float32 even where the gates are bf16. The products
    run in `weight_hh`'s dtype, forward and backward, cast explicitly rather than by autocast,
    so that the same code runs on any device, with or without autocast.
    """

    @staticmethod
    def forward(ctx, gates_in, keep, h0, c0, weight_hh, bias_hh):
        saved = []  # per step: h_{t-1} and c_{t-1} after the reset, the gates, tanh(c_t)
        hidden, c = _unroll(gates_in, keep, h0, c0, weight_hh, bias_hh, saved)
        prev_h, prev_c, acts, tanh_c = (torch.stack(x) for x in zip(*saved, strict=True))
        ctx.save_for_backward(keep, prev_h, prev_c, acts, tanh_c, weight_hh)
        ctx.dtypes = gates_in.dtype, bias_hh.dtype
        return hidden, c

    @staticmethod
    def backward(ctx, grad_hidden, grad_c):
        keep, prev_h, prev_c, acts, tanh_c, weight_hh = ctx.saved_tensors
        gates_dtype, bias_dtype = ctx.dtypes
        product_dtype = weight_hh.dtype
        dh_next, dc_next = torch.zeros_like(prev_h[0]), grad_c  # unused outputs: zero grads
        dgates = torch.empty_like(acts)
        for t in reversed(range(len(acts))):
            i, f, g, o = acts[t].chunk(4, dim=-1)
            dh = grad_hidden[t] + dh_next
            dc = dc_next + dh * o * (1 - tanh_c[t] * tanh_c[t])
            torch.cat(
                [
                    dc * g * i * (1 - i),
                    dc * prev_c[t] * f * (1 - f),
                    dc * i * (1 - g * g),
                    dh * tanh_c[t] * o * (1 - o),
                ],
                dim=-1,
                out=dgates[t],
            )
            dh_next = torch.mm(dgates[t].to(product_dtype), weight_hh).float() * keep[t]
            dc_next = dc * f * keep[t]
        flat = dgates.flatten(0, 1)
        grad_weight = torch.mm(flat.t().to(product_dtype), prev_h.flatten(0, 1).to(product_dtype))
        grad_bias = flat.sum(0).to(bias_dtype)
        return dgates.to(gates_dtype), None, dh_next, dc_next, grad_weight, grad_bias


def lstm_unroll(
    gates_in: Tensor, keep: Tensor, state: tuple[Tensor, Tensor], weight_hh: Tensor, bias_hh: Tensor
) -> tuple[Tensor, tuple[Tensor, Tensor]]:
    """Every step's hidden state `[T, B, H]` and the final state; see `LSTMUnroll`."""
    args = gates_in, keep, *state, weight_hh, bias_hh
    needs_grad = torch.is_grad_enabled() and any(x.requires_grad for x in args)
    hidden, c = LSTMUnroll.apply(*args) if needs_grad else _unroll(*args)  # acting: no saving
    return hidden, (hidden[-1], c)
