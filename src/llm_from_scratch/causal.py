"""Causal scaled dot-product self-attention over any number of independent lanes.

``q, k, v: [..., T, d]``. Every leading index (a batch row, or a batch row and
a head) is one lane with its own ``[T, T]`` probability table:
``A = softmax_j(q k^T / sqrt(d) + M)``, ``H = A v``. NumPy's batched matmul runs
all lanes at once, so multi-head attention calls this on ``[B, h, T, d_h]``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import CausalAttentionError
from .linear import live_input
from .tensor import Tensor, causal_softmax, matmul, scale, transpose


@dataclass(frozen=True)
class CausalAttention:
    """The tensors of one causal attention call."""

    scores: Tensor   # [..., T, T] scaled, before the mask
    weights: Tensor  # [..., T, T] rows sum to 1, exact zeros right of the diagonal
    output: Tensor   # [..., T, d]


def causal_scaled_dot_product_self_attention(q: Tensor, k: Tensor, v: Tensor) -> CausalAttention:
    """``[..., T, d]`` queries, keys, values of the same shape -> weights ``[..., T, T]``, output ``[..., T, d]``."""
    stage = "causal attention"
    q = live_input(q, CausalAttentionError, stage)
    k = live_input(k, CausalAttentionError, stage)
    v = live_input(v, CausalAttentionError, stage)
    if q.ndim < 2:
        raise CausalAttentionError(
            f"causal attention query must have rank at least two [..., tokens, width], got rank {q.ndim}",
            stage=stage,
        )
    for role, tensor in (("key", k), ("value", v)):
        if tensor.shape != q.shape:
            raise CausalAttentionError(
                f"causal attention {role} shape must equal query shape {list(q.shape)}, got {list(tensor.shape)}",
                stage=stage,
            )
    tokens, width = q.shape[-2:]
    if tokens == 0:
        raise CausalAttentionError("causal attention needs at least one token so every causal row has a key, "
                                   f"got shape {list(q.shape)}", stage=stage)
    if width == 0:
        raise CausalAttentionError(f"causal attention width must be nonzero, got shape {list(q.shape)}", stage=stage)
    key_axes = tuple(range(k.ndim - 2)) + (k.ndim - 1, k.ndim - 2)
    scores = scale(matmul(q, transpose(k, key_axes)), 1.0 / np.sqrt(width))  # [..., T, T]
    weights = causal_softmax(scores)                                         # [..., T, T]
    return CausalAttention(scores=scores, weights=weights, output=matmul(weights, v))
