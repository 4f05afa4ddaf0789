"""Causal multi-head self-attention with RoPE.

Project at full model width, then split into heads: ``Q = X W_Q``,
``K = X W_K``, ``V = X W_V``, ``[B, T, d_model] -> [B, h, T, d_h]``; RoPE
on Q and K only; one causal softmax per head, ``[B, h, T, T]``; ``H = A V``;
``merge_heads`` back to ``[B, T, d_model]``; ``W_O``, where heads first mix.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from .causal import causal_scaled_dot_product_self_attention
from .checks import check_name, check_sequence, checked, positive_int
from .errors import MultiHeadAttentionError, chained
from .heads import merge_heads, split_heads
from .linear import Linear
from .parameter import Parameter, ParameterList
from .rng import SplitMix64, check_generator, uniform_weight
from .rope import RotaryEmbedding, check_configuration
from .tensor import Tensor

ROLES = ("query", "key", "value", "output")
ROPE = "multi-head RoPE configuration"
check_input = partial(check_sequence, stage="multi-head",
                      error=MultiHeadAttentionError)


def validate_configuration(model_width: object, heads: object) -> int:
    """``d_h = d_model / h``: divisible, and even so RoPE can pair it."""
    error = MultiHeadAttentionError
    d_model = positive_int(model_width, "multi-head model width", error)
    h = positive_int(heads, "multi-head head count", error)
    if d_model % h:
        raise error(f"multi-head model width {d_model} must be divisible "
                    f"by head count {h}")
    d_h = d_model // h
    if d_h % 2:
        raise error(f"multi-head per-head width must be even for RoPE, "
                    f"got {d_h}")
    return d_h


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


class MultiHeadAttention:
    """Q/K/V at full width, per-head RoPE and causal softmax, ``W_O``."""

    def __init__(self, query: Linear, key: Linear, value: Linear,
                 output: Linear, heads: int, rope: RotaryEmbedding) -> None:
        """Use ``from_parameters`` or ``new``: they check the parts."""
        self.query, self.key, self.value = query, key, value
        self.output, self.heads, self.rope = output, heads, rope
        self.model_width = query.input_width
        self.head_width = rope.head_width

    @classmethod
    def from_parameters(cls, query_weight: Parameter, key_weight: Parameter,
                        value_weight: Parameter, output_weight: Parameter,
                        heads: int, max_positions: int,
                        rope_base: float) -> MultiHeadAttention:
        """The layer from four named ``[d_model, d_model]`` weights."""
        weights = (query_weight, key_weight, value_weight, output_weight)
        error, projections = MultiHeadAttentionError, []
        for role, weight in zip(ROLES, weights, strict=True):
            with chained(error, f"{role} projection"):
                projections.append(Linear(weight))
        d = projections[0].input_width
        d_h = validate_configuration(d, heads)
        for role, projection in zip(ROLES, projections, strict=True):
            d_in, d_out = projection.weight.shape
            if d_in != d:
                raise error(f"{role} projection input width must equal "
                            f"model width {d}, got {d_in}")
            if d_out != d and role == "output":
                raise error(f"output projection width must equal model "
                            f"width {d}, got {d_out}")
            if d_out != d:
                raise error(f"Q/K/V projected width must equal model "
                            f"width {d}, got {d_out} for {role}")
        with chained(error, "multi-head parameters"):
            ParameterList(weights)  # every name once
        with chained(error, ROPE):
            rope = RotaryEmbedding(d_h, max_positions, rope_base)
        return cls(*projections, int(heads), rope)

    @staticmethod
    def check_configuration(model_width: object, heads: object,
                            max_positions: object,
                            rope_base: object) -> None:
        """What ``new`` checks before it draws."""
        d_h = validate_configuration(model_width, heads)
        with chained(MultiHeadAttentionError, ROPE):
            check_configuration(d_h, max_positions, rope_base)

    @classmethod
    def new(cls, prefix: str, model_width: int, heads: int,
            max_positions: int, rope_base: float,
            rng: SplitMix64) -> MultiHeadAttention:
        """Fresh ``W_Q, W_K, W_V, W_O``, drawn in this order after the
        checks, so a failure leaves ``rng`` untouched."""
        cls.check_configuration(model_width, heads, max_positions,
                                rope_base)
        error = MultiHeadAttentionError
        check_name(prefix, "multi-head name prefix", error)
        check_generator(rng, "multi-head init", error)
        d = int(model_width)
        weights = [Parameter(f"{prefix}.{role}.weight",
                             uniform_weight(rng, d, d)) for role in ROLES]
        return cls.from_parameters(*weights, heads=heads,
                                   max_positions=max_positions,
                                   rope_base=rope_base)

    @property
    def max_positions(self) -> int:
        return self.rope.max_positions

    def parameters(self) -> ParameterList:
        """``query.weight, key.weight, value.weight, output.weight``."""
        return ParameterList([self.query.weight, self.key.weight,
                              self.value.weight, self.output.weight])

    def parameter_count(self) -> int:
        return 4 * self.model_width * self.model_width

    @checked(check_input)
    def forward(self, x: Tensor,
                position_offset: int = 0) -> MultiHeadAttentionForward:
        """``x: [B, T, d_model]`` at positions ``offset .. offset+T-1``."""
        # full-width projections, split: [B, T, d_model] -> [B, h, T, d_h]
        q = split_heads(x @ self.query.weight, self.heads)
        k = split_heads(x @ self.key.weight, self.heads)
        v = split_heads(x @ self.value.weight, self.heads)
        # RoPE turns queries and keys only
        q_rot = self.rope.rotate(q, position_offset)
        k_rot = self.rope.rotate(k, position_offset)
        # a causal softmax per head: weights [B, h, T, T], H = A V
        a = causal_scaled_dot_product_self_attention(q_rot, k_rot, v)
        merged = merge_heads(a.output)  # [B, h, T, d_h] -> [B, T, d_model]
        output = merged @ self.output.weight  # W_O: the heads first mix
        return MultiHeadAttentionForward(q, k, v, q_rot, k_rot, a.weights,
                                         a.output, merged, output)
