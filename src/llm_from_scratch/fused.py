"""Whole layers as one tape step each: causal multi-head attention, SwiGLU.

``MultiHeadAttention.forward`` and ``SwiGlu.forward`` put every stage on
the tape (19 and 5 steps) so that a reader can look at each one. Training
needs only the output, and on the book's small arrays NumPy's cost per
call, not the arithmetic, sets the pace. Here each layer is one step: its
forward does the arithmetic of the steps in ``tensor.py`` element by
element (RoPE on whole rows, ``_rotate``), with the matrix products on
arrays of the same layout, and the VJP right under it is their VJPs one
after another, so both give the same numbers bit for bit.

The input is a parent once per projection that reads it (three times for
attention, twice for SwiGLU), each time with that projection's gradient:
the tape then adds them up as it did for the separate steps, in the same
order, and a sum of floats depends on its order.
"""

import functools

import numpy as np

from .errors import TensorError
from .tensor import MAX_SIZE, Tensor, operation


def _rope_tables(cos, sin, heads):
    """RoPE's rows ``cos, sin: [T, d_h/2]`` as ``C, S: [T, h d_h]`` for
    ``_rotate``: ``(c0, c0, c1, c1, …)`` and ``(-s0, s0, -s1, s1, …)``, the
    same for every head."""
    c = np.repeat(cos, 2, axis=-1)                           # [T, d_h]
    s = np.stack([-sin, sin], axis=-1).reshape(c.shape)
    return np.tile(c, heads), np.tile(s, heads)


def _swap_pairs(x):
    """``(x1, x2, x3, x4, …) -> (x2, x1, x4, x3, …)`` on the last axis."""
    out = np.empty(x.shape)
    out[..., 0::2], out[..., 1::2] = x[..., 1::2], x[..., 0::2]
    return out


def _rotate(x, c, s):
    """RoPE on every head of ``x: [B, T, h d_h]`` at once, as RoFormer
    writes it: ``x C + _swap_pairs(x) S``. Each pair ``(a, b)`` becomes
    ``(a cos - b sin, b cos + a sin)``: the numbers of ``rotate_pairs``
    (``-y`` is exact), with the arithmetic on whole rows."""
    return x * c + _swap_pairs(x) * s


@functools.cache
def _visible(tokens: int) -> np.ndarray:
    """``[T, T]``: key ``j`` is visible from query ``i`` if ``j <= i``."""
    mask = np.tri(tokens, dtype=bool)
    mask.flags.writeable = False
    return mask


def _masked_softmax(scores):
    """``causal_softmax``' arithmetic: each row over its visible keys."""
    p = np.where(_visible(scores.shape[-1]), scores, -np.inf)
    p -= p.max(axis=-1, keepdims=True)
    np.exp(p, out=p)
    p /= p.sum(axis=-1, keepdims=True)
    return p


def _swapped(a):
    return np.swapaxes(a, -1, -2)


def _weight_grad(x, g):
    """The VJP of ``x @ W`` for the weight: ``dW = X^T G``, all rows."""
    return x.reshape(-1, x.shape[-1]).T @ g.reshape(-1, g.shape[-1])


@operation(operands=5)
def causal_self_attention(x: Tensor, w_q: Tensor, w_k: Tensor,
                          w_v: Tensor, w_o: Tensor, heads: int,
                          cos: np.ndarray, sin: np.ndarray) -> Tensor:
    """``MultiHeadAttention.forward(x).output`` as one step: ``x: [B, T,
    d]``, weights ``[d, d]``, RoPE's rows ``cos, sin: [T, d_h/2]``."""
    batch, tokens, d = x.shape
    if type(heads) is not int or not 1 <= heads <= d or d % heads \
            or (d // heads) % 2:
        raise TensorError("causal_self_attention heads must be an integer "
                          f"that splits width {d} into even head widths, "
                          f"got {heads!r:.40}")
    d_h = d // heads
    for name, table in (("cos", cos), ("sin", sin)):
        if not isinstance(table, np.ndarray) or table.dtype != np.float64 \
                or table.shape != (tokens, d_h // 2) \
                or not np.isfinite(table).all():
            got = (f"{table.dtype} {list(table.shape)}"
                   if isinstance(table, np.ndarray)
                   else type(table).__name__)
            raise TensorError(f"causal_self_attention {name} must be "
                              f"finite float64 [{tokens}, {d_h // 2}], "
                              f"got {got}")
    if batch * heads * tokens * tokens > MAX_SIZE:  # the scores' tables
        raise TensorError(f"causal_self_attention scores [{batch}, {heads}"
                          f", {tokens}, {tokens}] would hold more than "
                          f"{MAX_SIZE} values")

    def split(m):  # [B, T, d] -> [B, h, T, d_h], a view
        return m.reshape(batch, tokens, heads, d_h).transpose(0, 2, 1, 3)

    def merge(m):  # [B, h, T, d_h] -> [B, T, d], a copy
        return m.transpose(0, 2, 1, 3).reshape(batch, tokens, d)

    def heads_of(m):  # the layout rotate_pairs gives: contiguous heads
        return np.ascontiguousarray(split(m))

    c, s = _rope_tables(cos, sin, heads)             # [T, d]
    q_rot = heads_of(_rotate(x.value @ w_q.value, c, s))   # RoPE(X W_Q)
    k_rot = heads_of(_rotate(x.value @ w_k.value, c, s))
    v = split(x.value @ w_v.value)                  # [B, h, T, d_h]
    k_t = k_rot.transpose(0, 1, 3, 2)               # [B, h, d_h, T]
    factor = 1.0 / np.sqrt(d_h)
    p = _masked_softmax((q_rot @ k_t) * factor)      # A: [B, h, T, T]
    merged = merge(p @ v)                           # H = A V: [B, T, d]

    def vjp(g):  # the steps' VJPs, from W_O back to the projections
        g_heads = split(g @ _swapped(w_o.value))     # dH
        g_p = g_heads @ _swapped(v)                  # dA = dH V^T
        g_v = _swapped(p) @ g_heads                  # dV = A^T dH
        g_s = p * (g_p - (g_p * p).sum(axis=-1, keepdims=True)) * factor
        g_q_rot = merge(g_s @ _swapped(k_t))         # dRoPE(Q), [B, T, d]
        g_k_rot = merge((_swapped(q_rot) @ g_s).transpose(0, 1, 3, 2))
        back = -s                                   # turned back: -angle
        grads = []                                  # (dX, dW) for Q, K, V
        for g_m, w in ((_rotate(g_q_rot, c, back), w_q),
                       (_rotate(g_k_rot, c, back), w_k), (merge(g_v), w_v)):
            g_x = g_m @ _swapped(w.value) if x.requires_grad else None
            grads += [g_x, _weight_grad(x.value, g_m)]
        return (*grads, _weight_grad(merged, g))

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
        g_hidden = g @ _swapped(w_down.value)
        g_gate = g_hidden * up * sigmoid * (1.0 + gate * (1.0 - sigmoid))
        g_up = g_hidden * activated
        grads = []                                  # (dX, dW): gate, up
        for g_m, w in ((g_gate, w_gate), (g_up, w_up)):
            g_x = g_m @ _swapped(w.value) if x.requires_grad else None
            grads += [g_x, _weight_grad(x.value, g_m)]
        return (*grads, _weight_grad(hidden, g))

    return Tensor.result(hidden @ w_down.value,
                         (x, w_gate, x, w_up, w_down), vjp)
