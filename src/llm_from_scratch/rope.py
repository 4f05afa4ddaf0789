"""Rotary position embedding on adjacent pairs ``(2i, 2i+1)`` of a head row.

At position ``p`` pair ``i`` rotates by ``p * rope_base ** (-2i / d_h)``.
The cos/sin tables for positions ``0 .. max_positions-1`` are built once;
``rotate`` reads the rows of the interval ``[offset, offset + T)``.
"""

import numpy as np

from .checks import (check_positions, check_size, check_tensor, checked,
                     finite_number, positive_int)
from .errors import RopeError
from .tensor import Tensor, rotate_pairs


def check_input(rope, x, position_offset=0):
    check_tensor(x, "RoPE input", RopeError)
    if x.ndim < 2 or x.shape[-1] != rope.head_width:
        raise RopeError(f"RoPE input must have shape [..., tokens, "
                        f"{rope.head_width}], got {list(x.shape)}")
    check_positions(position_offset, x.shape[-2], rope.max_positions,
                    "rope", RopeError)


class RotaryEmbedding:
    """RoPE for head rows of even width ``head_width``."""

    def __init__(self, head_width: int, max_positions: int,
                 rope_base: float) -> None:
        d_h = positive_int(head_width, "RoPE head width", RopeError)
        if d_h % 2:
            raise RopeError(f"RoPE head width must be even, got {d_h}")
        capacity = positive_int(max_positions, "RoPE max positions",
                                RopeError)
        check_size(capacity * d_h // 2, "RoPE table", RopeError)
        base = finite_number(rope_base, "RoPE base", RopeError)
        with np.errstate(over="ignore", invalid="ignore"):  # base < 1
            angles = np.outer(np.arange(capacity),  # [P, d_h/2]
                              base ** (-2.0 * np.arange(d_h // 2) / d_h))
        if not np.isfinite(angles).all():
            raise RopeError(f"RoPE angles must be finite, got overflow for "
                            f"base {rope_base!r} with head width {d_h} and "
                            f"max positions {capacity}")
        self.head_width, self.max_positions, self.rope_base = (
            d_h, capacity, base)
        self.cos, self.sin = np.cos(angles), np.sin(angles)

    @checked(check_input, RopeError, "RoPE")
    def rotate(self, x: Tensor, position_offset: int = 0) -> Tensor:
        """``x: [..., T, d_h]``, token ``t`` at position offset + t."""
        start = int(position_offset)
        window = slice(start, start + x.shape[-2])
        return rotate_pairs(x, self.cos[window], self.sin[window])
