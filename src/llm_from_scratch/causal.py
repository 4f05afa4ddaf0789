"""Causal scaled dot-product self-attention, separately per leading index.

``q, k, v: [..., T, d]``; every leading index (a batch row, or a batch row
and a head) gets its own ``[T, T]`` table of attention weights:
``A = softmax(q k^T / sqrt(d) + M)``, ``H = A v``. One batched matmul runs
all of them at once: multi-head attention calls it on ``[B, h, T, d_h]``.
"""

import math
from dataclasses import dataclass

import numpy as np

from .checks import check_size, check_tensor, checked
from .errors import CausalAttentionError
from .tensor import Tensor, causal_softmax, scale, transpose


@dataclass(frozen=True)
class CausalAttention:
    scores: Tensor   # [..., T, T] scaled, before the mask
    weights: Tensor  # [..., T, T] rows sum to 1, zero right of the diagonal
    output: Tensor   # [..., T, d]


def check_qkv(q, k, v):
    for role, x in (("query", q), ("key", k), ("value", v)):
        check_tensor(x, f"causal attention {role}", CausalAttentionError)
    if q.ndim < 2 or 0 in q.shape[-2:]:
        raise CausalAttentionError(
            "causal attention query must have shape [..., tokens, width] "
            f"with tokens, width > 0, got {list(q.shape)}")
    tables = (*q.shape[:-1], q.shape[-2])  # the scores [..., T, T]
    check_size(math.prod(tables), "causal attention scores",
               CausalAttentionError)
    for role, x in (("key", k), ("value", v)):
        if x.shape != q.shape:
            raise CausalAttentionError(
                f"causal attention {role} shape must equal query shape "
                f"{list(q.shape)}, got {list(x.shape)}")


@checked(check_qkv, CausalAttentionError, "causal attention")
def causal_scaled_dot_product_self_attention(
        q: Tensor, k: Tensor, v: Tensor) -> CausalAttention:
    """``q, k, v: [..., T, d]`` -> ``A: [..., T, T]``, ``H: [..., T, d]``"""
    k_t = transpose(k, (*range(k.ndim - 2), -1, -2))        # [..., d, T]
    scores = scale(q @ k_t, 1.0 / np.sqrt(q.shape[-1]))    # [..., T, T]
    weights = causal_softmax(scores)                       # [..., T, T]
    return CausalAttention(scores, weights, weights @ v)   # [..., T, d]
