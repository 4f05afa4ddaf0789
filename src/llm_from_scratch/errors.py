"""Typed errors: one base class for the package, one class per component.

A message names what was wrong and the values received, e.g.
``multi-head input final width must equal model width 4, got 5``. A layer
built from other components re-raises their errors with its own prefix
and keeps the original as the cause: see ``chained``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


class LlmFromScratchError(Exception):
    """Base class of every error this package raises on purpose."""

    def __init__(self, message: str, *, stage: str | None = None) -> None:
        # ``stage`` serves only the first edition's plots/common.py, which
        # is deleted at integration; the core's messages name their stage.
        super().__init__(message)
        self.stage = stage


class TensorError(LlmFromScratchError):
    """The tape: bad values, released tapes, bad upstream gradients."""


class ParameterError(LlmFromScratchError):
    """Named parameters and parameter lists."""


class InitializationError(LlmFromScratchError):
    """SplitMix64 seeds and draws."""


class LinearError(LlmFromScratchError):
    """Bias-free projection ``y = x @ W``."""


class RopeError(LlmFromScratchError):
    """Rotary position embedding: configuration and positions."""


class HeadLayoutError(LlmFromScratchError):
    """``split_heads`` and ``merge_heads``."""


class CausalAttentionError(LlmFromScratchError):
    """Causal scaled dot-product self-attention."""


class MultiHeadAttentionError(LlmFromScratchError):
    """Causal multi-head attention with RoPE."""


class RmsNormError(LlmFromScratchError):
    """RMSNorm: configuration and input."""


class SwiGluError(LlmFromScratchError):
    """SwiGLU feed-forward network."""


class ResidualError(LlmFromScratchError):
    """Residual addition of a branch to the stream."""


class DecoderBlockError(LlmFromScratchError):
    """Pre-norm decoder block: assembly and forward pass."""


class GradcheckError(LlmFromScratchError):
    """Central-difference gradient check."""


class HistoryError(LlmFromScratchError):
    """Helpers of the chapters' historical contrasts."""


@contextmanager
def chained(error: type[LlmFromScratchError],
            prefix: str) -> Iterator[None]:
    """Re-raise a nested component's error as ``error("prefix: ...")``."""
    try:
        yield
    except LlmFromScratchError as source:
        raise error(f"{prefix}: {source}") from source
