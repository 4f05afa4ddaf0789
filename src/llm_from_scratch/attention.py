"""Causal multi-head self-attention with RoPE.

Project to full model width first, then split into heads:
``Q = X W_Q, K = X W_K, V = X W_V``  ``[B, T, d_model]`` ->
``split_heads`` ``[B, h, T, d_h]`` -> RoPE on Q and K only -> one causal
softmax per head ``[B, h, T, T]`` -> ``H = A V`` ``[B, h, T, d_h]`` ->
``merge_heads`` ``[B, T, d_model]`` -> ``W_O``. Heads first mix at ``W_O``.
"""

from __future__ import annotations

from dataclasses import dataclass

from .causal import causal_scaled_dot_product_self_attention
from .errors import LlmFromScratchError, MultiHeadAttentionError, ParameterError
from .heads import merge_heads, split_heads
from .linear import Linear, live_input, require_prefix
from .parameter import Parameter, ParameterList
from .rng import SplitMix64, require_rng
from .rope import RotaryEmbedding, check_position_interval
from .tensor import Tensor, is_int

STAGE = "multi-head"


def _wrap(prefix: str, source: LlmFromScratchError) -> MultiHeadAttentionError:
    return MultiHeadAttentionError(f"{prefix}: {source}", stage=f"{STAGE} {prefix}")


def validate_configuration(model_width: object, heads: object) -> int:
    """The head width ``d_model / h``, after the chapter's rules: divisible, and even for RoPE."""
    if not is_int(model_width) or model_width <= 0:
        raise MultiHeadAttentionError(f"multi-head model width must be a positive integer, got {model_width!r}",
                                      stage=STAGE)
    if not is_int(heads) or heads <= 0:
        raise MultiHeadAttentionError(f"multi-head head count must be a positive integer, got {heads!r}",
                                      stage=STAGE)
    if model_width % heads:
        raise MultiHeadAttentionError(
            f"multi-head model width {model_width} must be divisible by head count {heads}", stage=STAGE
        )
    head_width = int(model_width) // int(heads)
    if head_width % 2:
        raise MultiHeadAttentionError(
            f"multi-head per-head width must be even for RoPE, got {head_width}", stage=STAGE
        )
    return head_width


def check_sequence(x: object, position_offset: object, model_width: int, max_positions: int,
                   error: type, stage: str) -> Tensor:
    """A ``[B, T, d_model]`` Tensor at positions ``[offset, offset+T)``, checked in this order:
    type, rank, final width, non-empty tokens, position interval, and only then a live tape
    (so an invalid interval reports the same error even for a released input)."""
    if not isinstance(x, Tensor):
        raise error(f"{stage} input must be a Tensor, got {type(x).__name__}; wrap arrays as Tensor(array)",
                    stage=stage)
    if x.ndim != 3:
        raise error(f"{stage} input must have rank three [batch, tokens, model_width], got rank {x.ndim}",
                    stage=stage)
    if x.shape[2] != model_width:
        raise error(f"{stage} input final width must equal model width {model_width}, got {x.shape[2]}",
                    stage=stage)
    if x.shape[1] == 0:
        raise error(f"{stage} input needs at least one token so every causal row has a key", stage=stage)
    check_position_interval(position_offset, x.shape[1], max_positions, error, stage)
    return live_input(x, error, stage)


@dataclass(frozen=True)
class MultiHeadAttentionForward:
    """Every stage boundary of one forward pass, all on one tape."""

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
    """Full-width Q/K/V projections, per-head RoPE and causal softmax, concatenation, ``W_O``."""

    def __init__(self, query: Linear, key: Linear, value: Linear, output: Linear,
                 heads: int, max_positions: int, rope_base: float) -> None:
        """Use ``from_parameters`` or ``new``; this checks the widths of four built projections."""
        for role, projection in (("query", query), ("key", key), ("value", value), ("output", output)):
            if not isinstance(projection, Linear):
                raise MultiHeadAttentionError(
                    f"{STAGE} {role} projection must be a Linear, got {type(projection).__name__}", stage=STAGE)
        model_width = query.input_width
        self.head_width = validate_configuration(model_width, heads)
        for role, projection in (("query", query), ("key", key), ("value", value)):
            if projection.input_width != model_width:
                raise MultiHeadAttentionError(
                    f"{role} projection input width must equal model width {model_width}, "
                    f"got {projection.input_width}", stage=STAGE)
            if projection.output_width != model_width:
                raise MultiHeadAttentionError(
                    f"Q/K/V projected width must equal model width {model_width}, "
                    f"got {projection.output_width} for {role}", stage=STAGE)
        if output.input_width != model_width:
            raise MultiHeadAttentionError(
                f"output projection input width must equal model width {model_width}, got {output.input_width}",
                stage=STAGE)
        if output.output_width != model_width:
            raise MultiHeadAttentionError(
                f"output projection width must equal model width {model_width}, got {output.output_width}",
                stage=STAGE)
        try:
            self.rope = RotaryEmbedding(self.head_width, max_positions, rope_base)
            self._parameters = ParameterList([query.weight, key.weight, value.weight, output.weight])
        except (LlmFromScratchError) as source:
            prefix = "multi-head RoPE configuration" if not isinstance(source, ParameterError) else "parameters"
            raise MultiHeadAttentionError(f"{prefix}: {source}", stage=STAGE) from source
        self.query, self.key, self.value, self.output = query, key, value, output
        self.model_width, self.heads = int(model_width), int(heads)

    @classmethod
    def from_parameters(cls, query_weight: Parameter, key_weight: Parameter, value_weight: Parameter,
                        output_weight: Parameter, heads: int, max_positions: int,
                        rope_base: float) -> MultiHeadAttention:
        """An exact layer from four named ``[d_model, d_model]`` matrices (``y = x @ W``)."""
        projections = []
        for role, weight in (("query", query_weight), ("key", key_weight), ("value", value_weight),
                             ("output", output_weight)):
            try:
                projections.append(Linear.from_parameters(weight))
            except LlmFromScratchError as source:
                raise _wrap(f"{role} projection", source) from source
        return cls(*projections, heads=heads, max_positions=max_positions, rope_base=rope_base)

    @classmethod
    def new(cls, prefix: str, model_width: int, heads: int, max_positions: int, rope_base: float,
            rng: SplitMix64) -> MultiHeadAttention:
        """Fresh Q, K, V, O weights drawn in that order; ``rng`` is untouched unless this succeeds."""
        head_width = validate_configuration(model_width, heads)
        require_prefix(prefix, MultiHeadAttentionError, STAGE)
        for prefix_text, check in (("multi-head RoPE configuration",
                                    lambda: RotaryEmbedding(head_width, max_positions, rope_base)),
                                   ("multi-head init", lambda: require_rng(rng, "multi-head init"))):
            try:
                check()  # everything is validated before the generator is touched
            except LlmFromScratchError as source:
                raise MultiHeadAttentionError(f"{prefix_text}: {source}", stage=STAGE) from source
        trial = rng.clone()
        names = ("query", "key", "value", "output")
        projections = [Linear.new(f"{prefix}.{name}.weight", model_width, model_width, trial) for name in names]
        layer = cls(*projections, heads=heads, max_positions=max_positions, rope_base=rope_base)
        rng.commit(trial)
        return layer

    @property
    def max_positions(self) -> int:
        return self.rope.max_positions

    def parameters(self) -> ParameterList:
        """``query.weight, key.weight, value.weight, output.weight``."""
        return self._parameters

    def parameter_count(self) -> int:
        return 4 * self.model_width * self.model_width

    def forward(self, x: Tensor, position_offset: int = 0) -> MultiHeadAttentionForward:
        """``x: [B, T, d_model]`` at absolute positions ``offset .. offset+T-1`` -> ``[B, T, d_model]``."""
        x = check_sequence(x, position_offset, self.model_width, self.max_positions,
                           MultiHeadAttentionError, STAGE)
        q = split_heads(self.query.forward(x), self.heads)   # [B, h, T, d_h]
        k = split_heads(self.key.forward(x), self.heads)     # [B, h, T, d_h]
        v = split_heads(self.value.forward(x), self.heads)   # [B, h, T, d_h]
        q_rotated = self.rope.rotate(q, position_offset)      # [B, h, T, d_h]
        k_rotated = self.rope.rotate(k, position_offset)      # [B, h, T, d_h]
        attended = causal_scaled_dot_product_self_attention(q_rotated, k_rotated, v)  # one table per head
        merged = merge_heads(attended.output)                  # [B, T, d_model]
        return MultiHeadAttentionForward(
            projected_query_heads=q, projected_key_heads=k, projected_value_heads=v,
            rotated_query_heads=q_rotated, rotated_key_heads=k_rotated,
            attention_weights=attended.weights, head_outputs=attended.output,
            merged=merged, output=self.output.forward(merged),
        )
