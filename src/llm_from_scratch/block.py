"""The pre-norm decoder block.

    x' = x  + MHA(RMSNorm_a(x))     # attention: mixes the visible tokens
    y  = x' + FFN(RMSNorm_f(x'))    # SwiGLU: every token on its own

Each branch has its own RMSNorm (its own gain); each residual addition
takes the *unnormalised* stream that entered the branch. Every tensor of
the residual stream is ``[B, T, d_model]``.
"""

from dataclasses import dataclass
from functools import partial
from typing import ClassVar

from .attention import MultiHeadAttention, MultiHeadAttentionForward
from .checks import check_sequence, checked
from .errors import DecoderBlockError, chained
from .parameter import Layer
from .rmsnorm import RmsNorm
from .rng import SplitMix64, drawing
from .swiglu import SwiGlu, SwiGluForward
from .tensor import Tensor

STAGE = "decoder-block"
check_input = partial(check_sequence, stage=STAGE, error=DecoderBlockError)


@dataclass(frozen=True)
class DecoderBlockConfig:
    model_width: int
    heads: int
    feed_forward_width: int
    max_positions: int
    rope_base: float = 10000.0
    rms_epsilon: float = 1e-5


@dataclass(frozen=True)
class DecoderBlockForward:
    """Every value of the two residual paths, on one tape."""

    attention_norm: Tensor                # N_a = RMSNorm_a(x)   [B, T, d]
    attention: MultiHeadAttentionForward  # A = MHA(N_a), all its stages
    after_attention: Tensor               # x' = x + A           [B, T, d]
    feed_forward_norm: Tensor             # N_f = RMSNorm_f(x')  [B, T, d]
    feed_forward: SwiGluForward           # F = SwiGLU(N_f), all its stages
    output: Tensor                        # y = x' + F           [B, T, d]


class DecoderBlock(Layer):
    """RMSNorm -> causal MHA -> residual, RMSNorm -> SwiGLU -> residual."""

    PARTS: ClassVar = {  # in order: as error messages name them, class
        "attention_norm": ("attention RMSNorm", RmsNorm),
        "attention": ("causal multi-head attention", MultiHeadAttention),
        "feed_forward_norm": ("feed-forward RMSNorm", RmsNorm),
        "feed_forward": ("SwiGLU feed-forward", SwiGlu)}

    def __init__(self, attention_norm: RmsNorm,
                 attention: MultiHeadAttention, feed_forward_norm: RmsNorm,
                 feed_forward: SwiGlu) -> None:
        parts = (attention_norm, attention, feed_forward_norm, feed_forward)
        for (role, kind), part in zip(self.PARTS.values(), parts,
                                      strict=True):
            if not isinstance(part, kind):
                raise DecoderBlockError(
                    f"{STAGE} {role} must be a {kind.__name__}, "
                    f"got {type(part).__name__}")
        d = attention.model_width
        for component, width in (
                ("attention RMSNorm", attention_norm.feature_width),
                ("feed-forward RMSNorm", feed_forward_norm.feature_width),
                ("feed-forward input", feed_forward.input_width),
                ("feed-forward output", feed_forward.output_width)):
            if width != d:
                raise DecoderBlockError(
                    f"{STAGE} {component} width must be {d}, got {width}")
        (self.attention_norm, self.attention, self.feed_forward_norm,
         self.feed_forward) = parts
        self.model_width, self.max_positions = d, attention.max_positions
        with chained(DecoderBlockError, f"{STAGE} parameters"):
            self.parameters()  # every name once

    @classmethod
    def new(cls, prefix: str, config: DecoderBlockConfig, rng: SplitMix64):
        """Gains of ones; ``W_Q, W_K, W_V, W_O``, then SwiGLU gate, up,
        down, drawn in this order (``rng.drawing``)."""
        if not isinstance(config, DecoderBlockConfig):
            raise DecoderBlockError(f"{STAGE} config must be a "
                                    "DecoderBlockConfig, "
                                    f"got {type(config).__name__}")
        c, d = config, config.model_width
        with drawing(rng, prefix, STAGE, DecoderBlockError) as trial:
            recipes = (  # each part's constructor and its arguments
                (RmsNorm.new, f"{prefix}.attention_norm.gain", d,
                 c.rms_epsilon),
                (MultiHeadAttention.new, f"{prefix}.attention", d, c.heads,
                 c.max_positions, c.rope_base, trial),
                (RmsNorm.new, f"{prefix}.ffn_norm.gain", d, c.rms_epsilon),
                (SwiGlu.new, f"{prefix}.ffn", d, c.feed_forward_width, d,
                 trial))
            parts = []
            for (role, _), (new, *arguments) in zip(cls.PARTS.values(),
                                                    recipes, strict=True):
                with chained(DecoderBlockError, role):
                    parts.append(new(*arguments))
            return cls(*parts)

    @checked(check_input, DecoderBlockError, STAGE)
    def forward(self, x: Tensor,
                position_offset: int = 0) -> DecoderBlockForward:
        """``x: [B, T, d_model]`` -> every stage of both residual paths."""
        n_a = self.attention_norm.forward(x)              # RMSNorm_a(x)
        a = self.attention.forward(n_a, position_offset)  # MHA(N_a), stages
        x1 = x + a.output                                 # x' = x + A
        n_f = self.feed_forward_norm.forward(x1)          # RMSNorm_f(x')
        f = self.feed_forward.forward(n_f)                # SwiGLU(N_f)
        y = x1 + f.output                                 # y = x' + F
        return DecoderBlockForward(n_a, a, x1, n_f, f, y)
