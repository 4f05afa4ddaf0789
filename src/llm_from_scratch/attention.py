"""Causal multi-head self-attention with RoPE.

Project at full model width, then split into heads: ``Q = X W_Q``,
``K = X W_K``, ``V = X W_V``, ``[B, T, d_model] -> [B, h, T, d_h]``; RoPE
on Q and K only; one causal softmax per head, ``[B, h, T, T]``; ``H = A V``;
``merge_heads`` back to ``[B, T, d_model]``; ``W_O``, where heads first mix.
"""

from dataclasses import dataclass
from functools import partial

from .causal import causal_scaled_dot_product_self_attention
from .checks import (check_parameter, check_sequence, check_size,
                     checked, positive_int)
from .errors import MultiHeadAttentionError, chained
from .fused import causal_self_attention
from .heads import merge_heads, split_heads
from .parameter import Layer, Parameter
from .rng import SplitMix64, drawing, uniform_weight
from .rope import RotaryEmbedding
from .tensor import Tensor

ROLES = ("query", "key", "value", "output")
check_input = partial(check_sequence, stage="multi-head",
                      error=MultiHeadAttentionError)


def check_configuration(model_width, heads):
    """``d_h = d_model / h``: divisible, and even so RoPE can pair it."""
    error = MultiHeadAttentionError
    d_model = positive_int(model_width, "multi-head model width", error)
    h = positive_int(heads, "multi-head head count", error)
    if d_model % h:
        raise error(f"model width {d_model} must be divisible by the "
                    f"number of heads ({h})")
    if d_model // h % 2:
        raise error(f"per-head width {d_model // h} must be even for RoPE "
                    f"(model width {d_model}, {h} heads)")
    return d_model // h


def check_weights(weights):
    """Four ``[d_model, d_model]`` Parameters, ``d_model`` the input width
    that most of them share (``W_Q``'s on a tie)."""
    error = MultiHeadAttentionError
    for role, weight in zip(ROLES, weights, strict=True):
        check_parameter(weight, f"{role} projection weight", 2, error)
    widths = [weight.shape[0] for weight in weights]
    d = max(widths, key=widths.count)
    for role, (d_in, d_out) in zip(ROLES, [w.shape for w in weights],
                                   strict=True):
        if d_in != d:
            raise error(f"{role} projection input width must equal "
                        f"model width {d}, got {d_in}")
        if d_out != d:
            raise error(f"output projection width must equal model width "
                        f"{d}, got {d_out}" if role == "output" else
                        f"Q/K/V projected width must equal model width "
                        f"{d}, got {d_out} for {role}")
    return d


@dataclass(frozen=True)
class MultiHeadAttentionForward:
    """Every stage of one forward pass, all on one tape."""

    projected_query_heads: Tensor  # [B, h, T, d_h]
    projected_key_heads: Tensor    # [B, h, T, d_h]
    projected_value_heads: Tensor  # [B, h, T, d_h]
    rotated_query_heads: Tensor    # [B, h, T, d_h]
    rotated_key_heads: Tensor      # [B, h, T, d_h]
    attention_weights: Tensor      # [B, h, T, T]
    head_outputs: Tensor           # [B, h, T, d_h]
    merged: Tensor                 # [B, T, d_model]
    output: Tensor                 # [B, T, d_model]


class MultiHeadAttention(Layer):
    """Q/K/V at full width, per-head RoPE and causal softmax, ``W_O``."""

    def __init__(self, query_weight, key_weight, value_weight,
                 output_weight, heads, max_positions, rope_base):
        weights = (query_weight, key_weight, value_weight, output_weight)
        self.model_width = check_weights(weights)
        self.head_width = check_configuration(self.model_width, heads)
        self.w_q, self.w_k, self.w_v, self.w_o = weights
        with chained(MultiHeadAttentionError, "multi-head parameters"):
            self.parameters()  # every name once
        with chained(MultiHeadAttentionError,
                     "multi-head RoPE configuration"):
            self.rope = RotaryEmbedding(self.head_width, max_positions,
                                        rope_base)
        self.heads, self.max_positions = int(heads), self.rope.max_positions

    @classmethod
    def new(cls, prefix: str, model_width: int, heads: int,
            max_positions: int, rope_base: float, rng: SplitMix64):
        """Fresh ``W_Q, W_K, W_V, W_O``, drawn in this order."""
        check_configuration(model_width, heads)
        d, error = int(model_width), MultiHeadAttentionError
        check_size(d * d, "multi-head weight", error)
        with drawing(rng, prefix, "multi-head", error) as trial:
            weights = [Parameter(f"{prefix}.{role}.weight",
                                 uniform_weight(trial, d, d))
                       for role in ROLES]
            return cls(*weights, heads, max_positions, rope_base)

    @checked(check_input, MultiHeadAttentionError, "multi-head")
    def forward(self, x: Tensor,
                position_offset: int = 0) -> MultiHeadAttentionForward:
        """``x: [B, T, d_model]`` at positions ``offset .. offset+T-1``."""
        # full-width projections, split: [B, T, d_model] -> [B, h, T, d_h]
        q = split_heads(x @ self.w_q, self.heads)
        k = split_heads(x @ self.w_k, self.heads)
        v = split_heads(x @ self.w_v, self.heads)
        # RoPE rotates queries and keys only; an error names which
        with chained(MultiHeadAttentionError, "query RoPE"):
            q_rot = self.rope.rotate(q, position_offset)
        with chained(MultiHeadAttentionError, "key RoPE"):
            k_rot = self.rope.rotate(k, position_offset)
        # a causal softmax per head: weights [B, h, T, T], H = A V
        a = causal_scaled_dot_product_self_attention(q_rot, k_rot, v)
        merged = merge_heads(a.output)  # [B, h, T, d_h] -> [B, T, d_model]
        output = merged @ self.w_o      # W_O: where the heads first mix
        return MultiHeadAttentionForward(q, k, v, q_rot, k_rot, a.weights,
                                         a.output, merged, output)

    @checked(check_input, MultiHeadAttentionError, "multi-head")
    def output(self, x: Tensor, position_offset: int = 0) -> Tensor:
        """``forward(x, position_offset).output`` in one tape step, the
        same numbers bit for bit, without the stages (for training)."""
        start = int(position_offset)
        rows = slice(start, start + x.shape[1])     # RoPE's positions
        return causal_self_attention(x, self.w_q, self.w_k, self.w_v,
                                     self.w_o, self.heads,
                                     self.rope.cos[rows],
                                     self.rope.sin[rows])
