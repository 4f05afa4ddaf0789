"""Typed errors: one base class for the package, one subclass per component.

Every rejection names the stage that refused the input and the values it
received, e.g. ``multi-head input final width must equal model width 4, got 5``.
A component that wraps another re-raises with its own prefix and chains the
original error (``raise ... from source``), so ``__cause__`` keeps the path.
"""

from __future__ import annotations


class LlmFromScratchError(Exception):
    """Base class of every error this package raises on purpose.

    ``stage`` names the component and step that refused (``"multi-head attention"``).
    """

    component = "llm_from_scratch"

    def __init__(self, message: str, *, stage: str | None = None) -> None:
        super().__init__(message)
        self.stage = stage or self.component


class TensorError(LlmFromScratchError):
    """Autodiff tape: bad values, released tapes, mismatched upstream gradients."""

    component = "tensor"


class ParameterError(LlmFromScratchError):
    """Named parameters: empty or duplicate names, shared tensors."""

    component = "parameter"


class InitializationError(LlmFromScratchError):
    """SplitMix64 and weight initialisation."""

    component = "initialization"


class LinearError(LlmFromScratchError):
    """Bias-free linear projection ``y = x @ W``."""

    component = "linear"


class RopeError(LlmFromScratchError):
    """Rotary position embedding: configuration and position interval."""

    component = "rope"


class HeadLayoutError(LlmFromScratchError):
    """``split_heads`` / ``merge_heads``."""

    component = "head layout"


class CausalAttentionError(LlmFromScratchError):
    """Single-lane causal scaled dot-product self-attention."""

    component = "causal attention"


class MultiHeadAttentionError(LlmFromScratchError):
    """Causal multi-head attention with RoPE."""

    component = "multi-head attention"


class RmsNormError(LlmFromScratchError):
    """RMSNorm configuration and input."""

    component = "rmsnorm"


class SwiGluError(LlmFromScratchError):
    """SwiGLU feed-forward network."""

    component = "swiglu"


class ResidualError(LlmFromScratchError):
    """Residual addition of a branch to the stream."""

    component = "residual"


class DecoderBlockError(LlmFromScratchError):
    """Pre-norm decoder block assembly and forward pass."""

    component = "decoder block"


class GradcheckError(LlmFromScratchError):
    """Central-difference gradient check configuration."""

    component = "gradcheck"


class HistoryError(LlmFromScratchError):
    """Helpers of the chapters' historical contrasts."""

    component = "history"
