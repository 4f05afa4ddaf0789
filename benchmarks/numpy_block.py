"""The decoder block written directly in NumPy, with a hand-written backward: no tape.

The same pre-norm block as ``llm_from_scratch.DecoderBlock``, as a NumPy user would write it for one
forward + backward:

    x1 = x  + MHA(RMSNorm_a(x))       # causal multi-head attention, RoPE on adjacent pairs of q and k
    y  = x1 + SwiGLU(RMSNorm_f(x1))   # down(SiLU(m W_gate) * (m W_up))

``forward`` keeps what ``backward`` needs; ``backward(dy)`` returns dL/dx and adds each parameter's
gradient into ``grads`` (a new array where there was none, as ``Tensor.backward`` and torch do).
``benchmarks/bench_block.py`` times it as a third side after checking it against the tape to 1e-10.
"""

from __future__ import annotations

import numpy as np

NAMES = ("attention_norm", "w_q", "w_k", "w_v", "w_o", "ffn_norm", "w_gate", "w_up", "w_down")


def rms_norm(x, gain, epsilon):
    """``x / rms(x) * gain`` over the last axis; returns the output, ``n = x / rms`` and ``1 / rms``."""
    inverse_rms = 1.0 / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + epsilon)
    n = x * inverse_rms
    return n * gain, n, inverse_rms


def rms_norm_backward(g, gain, n, inverse_rms):
    """dL/dx and dL/dgain of ``n * gain``, ``n = x / rms(x)``."""
    g_n = g * gain
    g_x = (g_n - n * np.mean(g_n * n, axis=-1, keepdims=True)) * inverse_rms
    return g_x, (g * n).reshape(-1, n.shape[-1]).sum(axis=0)


def rope(x, cos, sin):
    """Turn each pair ``(2i, 2i+1)`` of ``x: [B, h, T, d_h]`` by its angle (``cos, sin: [T, d_h/2]``)."""
    a, b = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = a * cos - b * sin
    out[..., 1::2] = a * sin + b * cos
    return out


class NumpyBlock:
    """Nine weights (``[d_in, d_out]`` for the products, as ours) and their gradients."""

    def __init__(self, weights, heads: int, max_positions: int, rope_base: float, epsilon: float):
        self.params = dict(zip(NAMES, (np.array(w, dtype=np.float64) for w in weights), strict=True))
        self.grads = dict.fromkeys(NAMES)
        self.heads, self.epsilon = heads, epsilon
        d_h = self.params["w_q"].shape[1] // heads
        angles = np.outer(np.arange(max_positions), rope_base ** (-2.0 * np.arange(d_h // 2) / d_h))
        self.cos, self.sin = np.cos(angles), np.sin(angles)

    def zero_grad(self):
        self.grads = dict.fromkeys(NAMES)

    def forward(self, x):
        p, batch, tokens, width = self.params, *x.shape
        h = self.heads
        d_h = width // h
        cos, sin = self.cos[:tokens], self.sin[:tokens]

        def split(t):  # [B, T, d] -> [B, h, T, d_h]
            return t.reshape(batch, tokens, h, d_h).transpose(0, 2, 1, 3)

        n_a, n_a_unit, n_a_inverse = rms_norm(x, p["attention_norm"], self.epsilon)
        q, k, v = split(n_a @ p["w_q"]), split(n_a @ p["w_k"]), split(n_a @ p["w_v"])
        q, k = rope(q, cos, sin), rope(k, cos, sin)
        scores = q @ k.swapaxes(-1, -2) / np.sqrt(d_h)                    # [B, h, T, T]
        scores = np.where(np.tri(tokens, dtype=bool), scores, -np.inf)    # future keys masked
        weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
        weights /= weights.sum(axis=-1, keepdims=True)
        merged = (weights @ v).transpose(0, 2, 1, 3).reshape(batch, tokens, width)
        x1 = x + merged @ p["w_o"]

        m, m_unit, m_inverse = rms_norm(x1, p["ffn_norm"], self.epsilon)
        gate, up = m @ p["w_gate"], m @ p["w_up"]
        sigmoid = 1.0 / (1.0 + np.exp(-gate))
        activated = gate * sigmoid
        hidden = activated * up
        self.saved = dict(x_shape=x.shape, n_a=n_a, n_a_unit=n_a_unit, n_a_inverse=n_a_inverse, q=q, k=k,
                          v=v, weights=weights, merged=merged, m=m, m_unit=m_unit, m_inverse=m_inverse,
                          gate=gate, up=up, sigmoid=sigmoid, activated=activated, hidden=hidden)
        return x1 + hidden @ p["w_down"]

    def backward(self, dy):
        p, s = self.params, self.saved
        batch, tokens, width = s["x_shape"]
        h = self.heads
        d_h = width // h
        cos, sin = self.cos[:tokens], self.sin[:tokens]
        grads = {}

        def weight_grad(inputs, g):  # dW of ``inputs @ W`` over all rows at once
            return inputs.reshape(-1, inputs.shape[-1]).T @ g.reshape(-1, g.shape[-1])

        def merge(t):  # [B, h, T, d_h] -> [B, T, d]
            return t.transpose(0, 2, 1, 3).reshape(batch, tokens, width)

        # feed-forward branch: y = x1 + (SiLU(gate) * up) @ W_down
        grads["w_down"] = weight_grad(s["hidden"], dy)
        d_hidden = dy @ p["w_down"].T
        d_up = d_hidden * s["activated"]
        sigmoid = s["sigmoid"]
        d_gate = d_hidden * s["up"] * sigmoid * (1.0 + s["gate"] * (1.0 - sigmoid))
        grads["w_gate"], grads["w_up"] = weight_grad(s["m"], d_gate), weight_grad(s["m"], d_up)
        d_m = d_gate @ p["w_gate"].T + d_up @ p["w_up"].T
        d_x1, grads["ffn_norm"] = rms_norm_backward(d_m, p["ffn_norm"], s["m_unit"], s["m_inverse"])
        d_x1 += dy                                                          # the residual path

        # attention branch: x1 = x + merge(A V) @ W_O, A = causal softmax(q k^T / sqrt(d_h))
        grads["w_o"] = weight_grad(s["merged"], d_x1)
        d_heads = (d_x1 @ p["w_o"].T).reshape(batch, tokens, h, d_h).transpose(0, 2, 1, 3)
        weights = s["weights"]
        d_weights = d_heads @ s["v"].swapaxes(-1, -2)
        d_v = weights.swapaxes(-1, -2) @ d_heads
        d_scores = weights * (d_weights - (d_weights * weights).sum(axis=-1, keepdims=True))
        d_scores /= np.sqrt(d_h)
        d_q = rope(d_scores @ s["k"], cos, -sin)                            # RoPE^T turns back
        d_k = rope(d_scores.swapaxes(-1, -2) @ s["q"], cos, -sin)
        d_q, d_k, d_v = merge(d_q), merge(d_k), merge(d_v)
        n_a = s["n_a"]
        grads["w_q"], grads["w_k"], grads["w_v"] = (weight_grad(n_a, d) for d in (d_q, d_k, d_v))
        d_n_a = d_q @ p["w_q"].T + d_k @ p["w_k"].T + d_v @ p["w_v"].T
        d_x, grads["attention_norm"] = rms_norm_backward(d_n_a, p["attention_norm"], s["n_a_unit"],
                                                         s["n_a_inverse"])
        d_x += d_x1

        for name, g in grads.items():  # accumulate, as a tape does
            if self.grads[name] is None:
                self.grads[name] = g
            else:
                self.grads[name] += g
        return d_x
