"""An independent float64 NumPy stack of decoder blocks, written from the formulas.

RMSNorm, LayerNorm, RoPE on adjacent pairs, the causal softmax, SwiGLU or ReLU, the three
wirings of the depth lab with its branch switch, the final RMSNorm and the cross-entropy.
It reads only the weights from the package's blocks (``weights_of``) and shares no code
with the package, so the depth lab and the training lab can be checked against it.
"""

from __future__ import annotations

import numpy as np


def rms_norm(z, gain, eps):
    return z / np.sqrt(np.mean(z * z, axis=-1, keepdims=True) + eps) * gain


def layer_norm(z, gain, eps):
    centred = z - z.mean(axis=-1, keepdims=True)
    return centred / np.sqrt(np.mean(centred ** 2, axis=-1, keepdims=True) + eps) * gain


def rope(x, base):
    """x: [B, h, T, d_h]; pair i of position p turns by p * base**(-2i/d_h)."""
    tokens, width = x.shape[-2:]
    angles = np.arange(tokens)[:, None] * base ** (-2.0 * np.arange(width // 2) / width)
    cos, sin = np.cos(angles), np.sin(angles)
    even, odd = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = even * cos - odd * sin
    out[..., 1::2] = even * sin + odd * cos
    return out


def attention(z, w, heads, base):
    batch, tokens, width = z.shape
    d_h = width // heads

    def split(m):
        return m.reshape(batch, tokens, heads, d_h).transpose(0, 2, 1, 3)

    q, k, v = split(z @ w["query"]), split(z @ w["key"]), split(z @ w["value"])
    q, k = rope(q, base), rope(k, base)
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d_h)
    scores = np.where(np.tri(tokens, dtype=bool), scores, -np.inf)
    p = np.exp(scores - scores.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    merged = (p @ v).transpose(0, 2, 1, 3).reshape(batch, tokens, width)
    return merged @ w["output"]


def swiglu(z, w):
    gate = z @ w["gate"]
    return (gate / (1.0 + np.exp(-gate)) * (z @ w["up"])) @ w["down"]


def relu_ffn(z, w):
    return np.maximum(z @ w["gate"], 0.0) @ w["down"]


def weights_of(block):
    """Copies of the nine weights of a package block, by role."""
    values = {p.name.split(".", 1)[1]: p.value.copy() for p in block.parameters()}
    return {"g_a": values["attention_norm.gain"], "g_f": values["ffn_norm.gain"],
            **{role: values[f"attention.{role}.weight"] for role in ("query", "key", "value", "output")},
            **{role: values[f"ffn.{role}.weight"] for role in ("gate", "up", "down")}}


def block(x, w, variant, *, norm="rms", ffn="swiglu", branches="both", heads=2, base=10000.0, eps=1e-5):
    """One block of the lab; ``branches`` keeps one sublayer, the other is the identity."""
    normalise = rms_norm if norm == "rms" else layer_norm
    feed_forward = swiglu if ffn == "swiglu" else relu_ffn
    sublayers = [("attention", w["g_a"], lambda z: attention(z, w, heads, base)),
                 ("ffn", w["g_f"], lambda z: feed_forward(z, w))]
    for name, gain, branch in sublayers:
        if branches not in ("both", name):
            continue
        if variant == "pre":
            x = x + branch(normalise(x, gain, eps))
        elif variant == "post":
            x = normalise(x + branch(x), gain, eps)
        else:
            x = branch(normalise(x, gain, eps))
    return x


def cross_entropy(logits, targets):
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    return float(-np.take_along_axis(log_p, targets[..., None], axis=-1).mean())


def stack_loss(weights, x, head, targets, variant, *, final_gain=None, eps=1e-5, **options):
    """(loss, [RMS of the stream: the input, then after every block])."""
    rms = [np.sqrt(np.mean(x ** 2))]
    for w in weights:
        x = block(x, w, variant, eps=eps, **options)
        rms.append(np.sqrt(np.mean(x ** 2)))
    gain = 1.0 if final_gain is None else final_gain
    return cross_entropy(rms_norm(x, gain, 1e-5) @ head, targets), np.array(rms)


def central_difference(loss, array, delta=1e-6):
    """d loss() / d array, coordinate by coordinate (``array`` is changed in place and restored)."""
    grad = np.zeros_like(array)
    for index in np.ndindex(array.shape):
        original = array[index]
        array[index] = original + delta
        high = loss()
        array[index] = original - delta
        low = loss()
        array[index] = original
        grad[index] = (high - low) / (2 * delta)
    return grad
