"""``split_heads`` and ``merge_heads``: an exact inverse pair of reshape + transpose on the tape.

``[B, T, d_model] -> reshape -> [B, T, h, d_h] -> transpose -> [B, h, T, d_h]``
and back. Head ``i`` owns the model-width columns ``i*d_h .. (i+1)*d_h - 1``.
"""

from __future__ import annotations

from .errors import HeadLayoutError
from .linear import live_input
from .tensor import Tensor, is_int, reshape, transpose


def split_heads(x: Tensor, heads: int) -> Tensor:
    """``[B, T, d_model] -> [B, h, T, d_h]`` with ``d_h = d_model / h``."""
    x = live_input(x, HeadLayoutError, "head split")
    if x.ndim != 3:
        raise HeadLayoutError(
            f"head split input must have rank three [batch, tokens, model_width], got rank {x.ndim}",
            stage="head split",
        )
    if not is_int(heads):
        raise HeadLayoutError(f"head count must be an integer, got {heads!r}", stage="head split")
    if heads <= 0:
        raise HeadLayoutError(f"head count must be positive, got {heads}", stage="head split")
    batch, tokens, width = x.shape
    if width == 0:
        raise HeadLayoutError("head width must be nonzero, got model width 0", stage="head split")
    if width % heads:
        raise HeadLayoutError(f"model width {width} must be divisible by head count {heads}",
                              stage="head split")
    grouped = reshape(x, (batch, tokens, int(heads), width // int(heads)))  # [B, T, h, d_h]
    return transpose(grouped, (0, 2, 1, 3))                                # [B, h, T, d_h]


def merge_heads(x: Tensor) -> Tensor:
    """``[B, h, T, d_h] -> [B, T, h * d_h]``: the inverse of ``split_heads``."""
    x = live_input(x, HeadLayoutError, "head merge")
    if x.ndim != 4:
        raise HeadLayoutError(
            f"head merge input must have rank four [batch, heads, tokens, head_width], got rank {x.ndim}",
            stage="head merge",
        )
    batch, heads, tokens, head_width = x.shape
    if heads == 0:
        raise HeadLayoutError(f"head count must be nonzero, got shape {list(x.shape)}", stage="head merge")
    if head_width == 0:
        raise HeadLayoutError(f"head width must be nonzero, got shape {list(x.shape)}", stage="head merge")
    grouped = transpose(x, (0, 2, 1, 3))                          # [B, T, h, d_h]
    return reshape(grouped, (batch, tokens, heads * head_width))  # [B, T, d_model]
