"""Rotary position embedding on adjacent pairs ``(2i, 2i+1)`` of every head row.

Pair ``i`` of the row at absolute position ``p`` turns by the angle
``p * rope_base ** (-2i / d_h)``. The cos/sin tables for positions
``0 .. max_positions-1`` are built once; ``rotate`` reads the rows of the
interval ``[offset, offset + T)``.
"""

from __future__ import annotations

import math

import numpy as np

from .errors import RopeError
from .linear import live_input, require_width
from .tensor import Tensor, is_int, rotate_pairs


def check_position_interval(offset: object, tokens: int, max_positions: int, error: type, stage: str) -> int:
    """The offset as ``int`` if ``[offset, offset + tokens)`` fits the capacity, else ``error``.

    Python integers do not overflow; the invalid offsets are negative or non-integer ones.
    """
    if not is_int(offset):
        raise error(f"{stage} position offset must be an integer, got {offset!r}", stage=stage)
    offset = int(offset)
    if offset < 0:
        raise error(f"{stage} position offset must be non-negative, got {offset}", stage=stage)
    if offset + tokens > max_positions:
        raise error(
            f"{stage} position interval [{offset}, {offset + tokens}) exceeds capacity {max_positions}",
            stage=stage,
        )
    return offset


class RotaryEmbedding:
    """RoPE for head rows of even width ``head_width``, positions ``< max_positions``."""

    def __init__(self, head_width: int, max_positions: int, rope_base: float) -> None:
        stage = "rope configuration"
        self.head_width = require_width(head_width, "RoPE head width", RopeError, stage)
        if self.head_width % 2:
            raise RopeError(f"RoPE head width must be even, got {self.head_width}", stage=stage)
        self.max_positions = require_width(max_positions, "RoPE max positions", RopeError, stage)
        if isinstance(rope_base, bool) or not isinstance(rope_base, (int, float, np.floating, np.integer)) \
                or not math.isfinite(rope_base) or rope_base <= 0:
            raise RopeError(f"RoPE base must be a finite positive number, got {rope_base!r}", stage=stage)
        self.rope_base = float(rope_base)
        pairs = np.arange(self.head_width // 2, dtype=np.float64)
        with np.errstate(over="ignore", invalid="ignore"):  # a tiny base overflows: refused just below
            frequencies = self.rope_base ** (-2.0 * pairs / self.head_width)          # [d_h/2]
            angles = np.arange(self.max_positions, dtype=np.float64)[:, None] * frequencies  # [P, d_h/2]
        if not np.all(np.isfinite(angles)):
            raise RopeError(
                f"RoPE angles must be finite, got overflow for base {rope_base!r} with head width "
                f"{self.head_width} and max positions {self.max_positions}", stage=stage)
        self.cos, self.sin = np.cos(angles), np.sin(angles)

    def rotate(self, x: Tensor, position_offset: int = 0) -> Tensor:
        """``x: [..., T, d_h]`` -> same shape, token ``t`` rotated as position ``offset + t``."""
        x = live_input(x, RopeError, "rope")
        if x.ndim < 2 or x.shape[-1] != self.head_width:
            raise RopeError(
                f"RoPE input must have shape [..., tokens, {self.head_width}], got {list(x.shape)}",
                stage="rope",
            )
        tokens = x.shape[-2]
        offset = check_position_interval(position_offset, tokens, self.max_positions, RopeError, "rope")
        window = slice(offset, offset + tokens)
        return rotate_pairs(x, self.cos[window], self.sin[window])
