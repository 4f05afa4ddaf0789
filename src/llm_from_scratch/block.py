"""The pre-norm decoder block.

    x' = x  + MHA(RMSNorm_a(x))     # attention: mixes the visible tokens
    y  = x' + FFN(RMSNorm_f(x'))    # SwiGLU: every token on its own

Each branch has its own RMSNorm (its own gain); each residual addition
takes the *unnormalised* stream that entered the branch. Every tensor of
the residual stream is ``[B, T, d_model]``.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import rmsnorm
from .attention import MultiHeadAttention, MultiHeadAttentionForward
from .checks import check_name, check_sequence, check_tensor, checked
from .errors import DecoderBlockError, ResidualError, chained
from .parameter import ParameterList
from .rmsnorm import RmsNorm
from .rng import SplitMix64, check_generator
from .swiglu import SwiGlu, SwiGluForward
from .tensor import Tensor

STAGE = "decoder-block"


def check_input(block: DecoderBlock, x: object,
                position_offset: object = 0) -> None:
    """The attention's input rules, and rows the first RMSNorm can scale."""
    check_sequence(block, x, position_offset, stage=STAGE,
                   error=DecoderBlockError)
    with chained(DecoderBlockError, "attention RMSNorm"):
        rmsnorm.check_input(block.attention_norm, x)


def check_residual(stream: object, branch: object) -> None:
    check_tensor(stream, "residual stream", ResidualError)
    check_tensor(branch, "residual branch", ResidualError)
    if branch.shape != stream.shape:
        raise ResidualError(
            "residual branch shape must equal stream shape "
            f"{list(stream.shape)}, got {list(branch.shape)}")


@checked(check_residual)
def residual_add(stream: Tensor, branch: Tensor) -> Tensor:
    """``stream + branch``, both ``[B, T, d_model]``: nothing broadcasts."""
    return stream + branch


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

    @property
    def attention_weights(self) -> Tensor:
        """``[B, h, T, T]``."""
        return self.attention.attention_weights

    @property
    def attention_branch(self) -> Tensor:
        """``A``: what the attention branch adds to the stream."""
        return self.attention.output

    @property
    def feed_forward_branch(self) -> Tensor:
        """``F``: what the SwiGLU branch adds to the stream."""
        return self.feed_forward.output


class DecoderBlock:
    """RMSNorm -> causal MHA -> residual, RMSNorm -> SwiGLU -> residual."""

    def __init__(self, attention_norm: RmsNorm,
                 attention: MultiHeadAttention, feed_forward_norm: RmsNorm,
                 feed_forward: SwiGlu) -> None:
        """Use ``from_parts`` or ``new``: they check the parts."""
        self.attention_norm, self.attention = attention_norm, attention
        self.feed_forward_norm = feed_forward_norm
        self.feed_forward = feed_forward
        self.model_width = attention.model_width

    @classmethod
    def from_parts(cls, attention_norm: RmsNorm,
                   attention: MultiHeadAttention,
                   feed_forward_norm: RmsNorm,
                   feed_forward: SwiGlu) -> DecoderBlock:
        """The block from four built parts whose widths agree."""
        parts = (("attention norm", attention_norm, RmsNorm),
                 ("attention", attention, MultiHeadAttention),
                 ("feed-forward norm", feed_forward_norm, RmsNorm),
                 ("feed-forward", feed_forward, SwiGlu))
        for role, part, kind in parts:
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
        block = cls(attention_norm, attention, feed_forward_norm,
                    feed_forward)
        with chained(DecoderBlockError, f"{STAGE} parameters"):
            block.parameters()  # every name once
        return block

    @classmethod
    def new(cls, prefix: str, config: DecoderBlockConfig,
            rng: SplitMix64) -> DecoderBlock:
        """Gains of ones; ``W_Q, W_K, W_V, W_O``, then SwiGLU gate, up,
        down, drawn from ``rng`` only after every part passed its checks."""
        if not isinstance(config, DecoderBlockConfig):
            raise DecoderBlockError(f"{STAGE} config must be a "
                                    "DecoderBlockConfig, "
                                    f"got {type(config).__name__}")
        check_name(prefix, f"{STAGE} name prefix", DecoderBlockError)
        check_generator(rng, f"{STAGE} init", DecoderBlockError)
        d, d_ff, eps = (config.model_width, config.feed_forward_width,
                        config.rms_epsilon)
        mha = (d, config.heads, config.max_positions, config.rope_base)
        with chained(DecoderBlockError, "attention RMSNorm"):
            attention_norm = RmsNorm.new(f"{prefix}.attention_norm.gain",
                                         d, eps)
        with chained(DecoderBlockError, "feed-forward RMSNorm"):
            feed_forward_norm = RmsNorm.new(f"{prefix}.ffn_norm.gain",
                                            d, eps)
        with chained(DecoderBlockError, "causal multi-head attention"):
            MultiHeadAttention.check_configuration(*mha)
        with chained(DecoderBlockError, "SwiGLU feed-forward"):
            SwiGlu.check_configuration(d, d_ff, d)
        attention = MultiHeadAttention.new(f"{prefix}.attention", *mha, rng)
        feed_forward = SwiGlu.new(f"{prefix}.ffn", d, d_ff, d, rng)
        return cls.from_parts(attention_norm, attention, feed_forward_norm,
                              feed_forward)

    @property
    def max_positions(self) -> int:
        return self.attention.max_positions

    def parameters(self) -> ParameterList:
        """attention_norm.gain, attention Q/K/V/O, ffn_norm.gain, ffn
        gate/up/down."""
        return ParameterList([*self.attention_norm.parameters(),
                              *self.attention.parameters(),
                              *self.feed_forward_norm.parameters(),
                              *self.feed_forward.parameters()])

    def parameter_count(self) -> int:
        return self.parameters().count()

    @checked(check_input)
    def forward(self, x: Tensor,
                position_offset: int = 0) -> DecoderBlockForward:
        """``x: [B, T, d_model]`` -> every stage of both residual paths."""
        n_a = self.attention_norm.forward(x)              # RMSNorm_a(x)
        a = self.attention.forward(n_a, position_offset)  # MHA(N_a), stages
        h = x + a.output                                  # x' = x + A
        n_f = self.feed_forward_norm.forward(h)           # RMSNorm_f(x')
        f = self.feed_forward.forward(n_f)                # SwiGLU(N_f)
        y = h + f.output                                  # y = x' + F
        return DecoderBlockForward(n_a, a, h, n_f, f, y)
