"""Typed errors: one base class for the package, one class per component.

A message names what was wrong and the values received, e.g.
``multi-head input's last dimension must equal model width 4, got 5``.
"""

import reprlib
from contextlib import contextmanager


class LlmFromScratchError(Exception): ...  # every error raised on purpose
class TensorError(LlmFromScratchError): ...  # values, tape operations
class ParameterError(LlmFromScratchError): ...  # names of parameters
class InitializationError(LlmFromScratchError): ...  # SplitMix64 draws
class RopeError(LlmFromScratchError): ...  # rotary positions
class HeadLayoutError(LlmFromScratchError): ...  # split and merge heads
class CausalAttentionError(LlmFromScratchError): ...  # one table a lane
class MultiHeadAttentionError(LlmFromScratchError): ...  # MHA with RoPE
class RmsNormError(LlmFromScratchError): ...  # RMSNorm
class SwiGluError(LlmFromScratchError): ...  # SwiGLU feed-forward
class DecoderBlockError(LlmFromScratchError): ...  # the pre-norm block
class GradcheckError(LlmFromScratchError): ...  # central differences
class OptimizerError(LlmFromScratchError): ...  # Adam
class TrainingError(LlmFromScratchError): ...  # the loop and its loss
class DepthLabError(LlmFromScratchError): ...  # the chapters' stacks
class LearnedHeadsError(LlmFromScratchError): ...  # chapter 30's lab
class HistoryError(LlmFromScratchError): ...  # historical contrasts
class EditionError(LlmFromScratchError): ...  # the book's edition
class FormatError(LlmFromScratchError): ...  # the book's printed formats


class Shown(reprlib.Repr):
    """A value in a message, cut short by ``reprlib`` (``[0, 1, 2, 3, 4,
    5, ...]``); a huge integer by its size."""

    def repr_int(self, value, level):
        if abs(value) > 10**30:
            return f"an integer of {value.bit_length()} bits"
        return repr(value)


shown = Shown().repr


@contextmanager
def chained(error, prefix):
    """Re-raise a nested component's error as ``error("prefix: ...")``."""
    try:
        yield
    except LlmFromScratchError as source:
        raise error(f"{prefix}: {source}") from source
