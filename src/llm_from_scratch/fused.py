"""Whole layers as one tape step each: causal multi-head attention, SwiGLU.

``MultiHeadAttention.forward`` and ``SwiGlu.forward`` put every stage on
the tape (19 and 5 steps) so that a reader can look at each one. Training
needs only the output, and on the book's small arrays NumPy's cost per
call, not the arithmetic, sets the pace. Here each layer is one step: its
forward is the arithmetic of the steps in ``tensor.py``, in the same order
on arrays of the same layout, and the VJP right under it is their VJPs one
after another, so both give the same numbers bit for bit.

The input is a parent once per projection that reads it (three times for
attention, twice for SwiGLU), each time with that projection's gradient:
the tape then adds them up as it did for the separate steps, in the same
order, and a sum of floats depends on its order.
"""

import functools

import numpy as np

from .tensor import Tensor, operation


def turn_pairs(v, cos, sin):
    """``rotate_pairs``' arithmetic: each pair ``(2i, 2i+1)`` of
    ``v: [..., T, d]`` turned by its angle, ``cos, sin: [T, d/2]``."""
    a, b = v[..., 0::2], v[..., 1::2]                # [..., T, d/2]
    out = np.empty(v.shape)
    out[..., 0::2] = a * cos - b * sin
    out[..., 1::2] = a * sin + b * cos
    return out


@functools.cache
def visible(tokens: int) -> np.ndarray:
    """``[T, T]``: key ``j`` is visible from query ``i`` if ``j <= i``."""
    mask = np.tri(tokens, dtype=bool)
    mask.flags.writeable = False
    return mask


def masked_softmax(scores):
    """``causal_softmax``' arithmetic: each row over its visible keys."""
    p = np.where(visible(scores.shape[-1]), scores, -np.inf)
    p -= p.max(axis=-1, keepdims=True)
    np.exp(p, out=p)
    p /= p.sum(axis=-1, keepdims=True)
    return p


def swapped(a):
    return np.swapaxes(a, -1, -2)


def weight_grad(x, g):
    """The VJP of ``x @ W`` for the weight: ``dW = X^T G``, all rows."""
    return x.reshape(-1, x.shape[-1]).T @ g.reshape(-1, g.shape[-1])


@operation(operands=5)
def causal_self_attention(x: Tensor, w_q: Tensor, w_k: Tensor,
                          w_v: Tensor, w_o: Tensor, heads: int,
                          cos: np.ndarray, sin: np.ndarray) -> Tensor:
    """``MultiHeadAttention.forward(x).output`` as one step: ``x: [B, T,
    d]``, weights ``[d, d]``, RoPE's rows ``cos, sin: [T, d_h/2]``."""
    batch, tokens, d = x.shape
    d_h = d // heads

    def split(m):  # [B, T, d] -> [B, h, T, d_h], a view
        return m.reshape(batch, tokens, heads, d_h).transpose(0, 2, 1, 3)

    def merge(m):  # [B, h, T, d_h] -> [B, T, d], a copy
        return m.transpose(0, 2, 1, 3).reshape(batch, tokens, d)

    q = split(x.value @ w_q.value)                  # Q = X W_Q, in heads
    k = split(x.value @ w_k.value)
    v = split(x.value @ w_v.value)
    q_rot, k_rot = turn_pairs(q, cos, sin), turn_pairs(k, cos, sin)
    k_t = k_rot.transpose(0, 1, 3, 2)               # [B, h, d_h, T]
    factor = 1.0 / np.sqrt(d_h)
    p = masked_softmax((q_rot @ k_t) * factor)      # A: [B, h, T, T]
    merged = merge(p @ v)                           # H = A V: [B, T, d]

    def vjp(g):  # the steps' VJPs, from W_O back to the projections
        g_heads = split(g @ swapped(w_o.value))     # dH
        g_p = g_heads @ swapped(v)                  # dA = dH V^T
        g_v = swapped(p) @ g_heads                  # dV = A^T dH
        g_s = p * (g_p - (g_p * p).sum(axis=-1, keepdims=True)) * factor
        g_q = turn_pairs(g_s @ swapped(k_t), cos, -sin)  # turned back
        g_k = turn_pairs((swapped(q_rot) @ g_s).transpose(0, 1, 3, 2),
                         cos, -sin)
        grads = []                                  # (dX, dW) for Q, K, V
        for g_m, w in ((merge(g_q), w_q), (merge(g_k), w_k),
                       (merge(g_v), w_v)):
            g_x = g_m @ swapped(w.value) if x.requires_grad else None
            grads += [g_x, weight_grad(x.value, g_m)]
        return (*grads, weight_grad(merged, g))

    return Tensor.result(merged @ w_o.value,
                         (x, w_q, x, w_k, x, w_v, w_o), vjp)


@operation(operands=4)
def swiglu(x: Tensor, w_gate: Tensor, w_up: Tensor,
           w_down: Tensor) -> Tensor:
    """``SwiGlu.forward(x).output`` as one step:
    ``(SiLU(x W_gate) * (x W_up)) W_down``."""
    gate = x.value @ w_gate.value                    # [..., d_ff]
    up = x.value @ w_up.value
    sigmoid = 0.5 * (1.0 + np.tanh(0.5 * gate))      # as silu has it
    activated = gate * sigmoid                       # SiLU(x W_gate)
    hidden = activated * up

    def vjp(g):
        g_hidden = g @ swapped(w_down.value)
        g_gate = g_hidden * up * sigmoid * (1.0 + gate * (1.0 - sigmoid))
        g_up = g_hidden * activated
        grads = []                                  # (dX, dW): gate, up
        for g_m, w in ((g_gate, w_gate), (g_up, w_up)):
            g_x = g_m @ swapped(w.value) if x.requires_grad else None
            grads += [g_x, weight_grad(x.value, g_m)]
        return (*grads, weight_grad(hidden, g))

    return Tensor.result(hidden @ w_down.value,
                         (x, w_gate, x, w_up, w_down), vjp)
