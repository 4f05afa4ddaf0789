"""The pre-norm decoder block.

    x' = x  + MHA(RMSNorm_a(x))        # attention branch, mixes visible tokens
    y  = x' + FFN(RMSNorm_f(x'))       # SwiGLU branch, per token

Each branch has its own RMSNorm (its own gain); each residual add takes the
*unnormalised* stream that entered the branch. Every tensor of the residual
stream is ``[B, T, d_model]``.
"""

from __future__ import annotations

from dataclasses import dataclass

from .attention import MultiHeadAttention, MultiHeadAttentionForward, check_sequence
from .errors import DecoderBlockError, LlmFromScratchError
from .linear import require_prefix
from .parameter import ParameterList
from .residual import residual_add
from .rmsnorm import RmsNorm
from .rng import SplitMix64
from .swiglu import SwiGlu, SwiGluForward
from .tensor import Tensor

STAGE = "decoder-block"


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

    attention_norm: Tensor                # N_a = RMSNorm_a(x)      [B, T, d_model]
    attention: MultiHeadAttentionForward  # A = MHA(N_a) and its stages
    after_attention: Tensor               # x' = x + A              [B, T, d_model]
    feed_forward_norm: Tensor             # N_f = RMSNorm_f(x')     [B, T, d_model]
    feed_forward: SwiGluForward           # F = SwiGLU(N_f) and its stages
    output: Tensor                        # y = x' + F              [B, T, d_model]

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
    """RMSNorm -> causal MHA -> residual, then RMSNorm -> SwiGLU -> residual."""

    def __init__(self, attention_norm: RmsNorm, attention: MultiHeadAttention,
                 feed_forward_norm: RmsNorm, feed_forward: SwiGlu) -> None:
        """Use ``from_parts`` or ``new``."""
        for role, part, kind in (("attention norm", attention_norm, RmsNorm),
                                 ("attention", attention, MultiHeadAttention),
                                 ("feed-forward norm", feed_forward_norm, RmsNorm),
                                 ("feed-forward", feed_forward, SwiGlu)):
            if not isinstance(part, kind):
                raise DecoderBlockError(
                    f"{STAGE} {role} must be a {kind.__name__}, got {type(part).__name__}", stage=STAGE)
        model_width = attention.model_width
        for component, actual in (("attention RMSNorm", attention_norm.feature_width),
                                  ("feed-forward RMSNorm", feed_forward_norm.feature_width),
                                  ("feed-forward input", feed_forward.input_width),
                                  ("feed-forward output", feed_forward.output_width)):
            if actual != model_width:
                raise DecoderBlockError(f"{STAGE} {component} width must be {model_width}, got {actual}",
                                        stage=STAGE)
        try:
            self._parameters = ParameterList([*attention_norm.parameters(), *attention.parameters(),
                                              *feed_forward_norm.parameters(), *feed_forward.parameters()])
        except LlmFromScratchError as source:
            raise DecoderBlockError(f"{STAGE} parameters: {source}", stage=STAGE) from source
        self.attention_norm, self.attention = attention_norm, attention
        self.feed_forward_norm, self.feed_forward = feed_forward_norm, feed_forward
        self.model_width = model_width

    @classmethod
    def from_parts(cls, attention_norm: RmsNorm, attention: MultiHeadAttention,
                   feed_forward_norm: RmsNorm, feed_forward: SwiGlu) -> DecoderBlock:
        """Assemble named components after the cross-width checks."""
        return cls(attention_norm, attention, feed_forward_norm, feed_forward)

    @classmethod
    def new(cls, prefix: str, config: DecoderBlockConfig, rng: SplitMix64) -> DecoderBlock:
        """Fresh weights: attention Q, K, V, O then SwiGLU gate, up, down from one stream.

        ``rng`` advances only if every component and the block checks succeed.
        """
        if not isinstance(config, DecoderBlockConfig):
            raise DecoderBlockError(f"{STAGE} config must be a DecoderBlockConfig, got {type(config).__name__}",
                                    stage=STAGE)
        require_prefix(prefix, DecoderBlockError, STAGE)
        steps = (
            ("attention RMSNorm", lambda trial: RmsNorm.new(f"{prefix}.attention_norm.gain",
                                                           config.model_width, config.rms_epsilon)),
            ("feed-forward RMSNorm", lambda trial: RmsNorm.new(f"{prefix}.ffn_norm.gain",
                                                              config.model_width, config.rms_epsilon)),
            ("causal multi-head attention", lambda trial: MultiHeadAttention.new(
                f"{prefix}.attention", config.model_width, config.heads, config.max_positions,
                config.rope_base, trial)),
            ("SwiGLU feed-forward", lambda trial: SwiGlu.new(
                f"{prefix}.ffn", config.model_width, config.feed_forward_width, config.model_width, trial)),
        )
        trial = rng.clone() if isinstance(rng, SplitMix64) else rng
        parts = []
        for prefix_text, build in steps:
            try:
                parts.append(build(trial))
            except LlmFromScratchError as source:
                raise DecoderBlockError(f"{prefix_text}: {source}", stage=STAGE) from source
        attention_norm, feed_forward_norm, attention, feed_forward = parts
        block = cls(attention_norm, attention, feed_forward_norm, feed_forward)
        rng.commit(trial)
        return block

    def parameters(self) -> ParameterList:
        """Stable order: attention_norm.gain, attention Q/K/V/O, ffn_norm.gain, ffn gate/up/down."""
        return self._parameters

    def parameter_count(self) -> int:
        return self._parameters.count()

    def forward(self, x: Tensor, position_offset: int = 0) -> DecoderBlockForward:
        """``x: [B, T, d_model]`` -> every stage of both residual paths."""
        x = check_sequence(x, position_offset, self.model_width, self.attention.max_positions,
                           DecoderBlockError, STAGE)
        # Reads like the formula; each stage wraps its component's error with the stage name.
        attention_norm = _stage("attention RMSNorm", self.attention_norm.forward, x)
        attention = _stage("causal multi-head attention", self.attention.forward, attention_norm, position_offset)
        after_attention = _stage("attention residual merge", residual_add, x, attention.output)
        feed_forward_norm = _stage("feed-forward RMSNorm", self.feed_forward_norm.forward, after_attention)
        feed_forward = _stage("SwiGLU feed-forward", self.feed_forward.forward, feed_forward_norm)
        output = _stage("feed-forward residual merge", residual_add, after_attention, feed_forward.output)
        return DecoderBlockForward(attention_norm=attention_norm, attention=attention,
                                   after_attention=after_attention, feed_forward_norm=feed_forward_norm,
                                   feed_forward=feed_forward, output=output)


def _stage(name: str, function, *arguments):
    """Run one stage; a component error comes back as ``DecoderBlockError("<stage>: ...")``, chained."""
    try:
        return function(*arguments)
    except LlmFromScratchError as source:
        raise DecoderBlockError(f"{name}: {source}", stage=f"{STAGE} {name}") from source
