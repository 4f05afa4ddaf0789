"""Rotary position embedding on adjacent pairs ``(2i, 2i+1)`` of a head row.

At position ``p`` pair ``i`` turns by ``p * rope_base ** (-2i / d_h)``. The
cos/sin tables for positions ``0 .. max_positions-1`` are built once;
``rotate`` reads the rows of the interval ``[offset, offset + T)``.
"""

from __future__ import annotations

import math

import numpy as np

from .checks import (check_positions, check_tensor, checked, finite_number,
                     positive_int)
from .errors import RopeError
from .tensor import Tensor, rotate_pairs


def check_configuration(head_width: object, max_positions: object,
                        rope_base: object) -> tuple[int, int, float]:
    """An even head width, a positive capacity, finite angles."""
    d_h = positive_int(head_width, "RoPE head width", RopeError)
    if d_h % 2:
        raise RopeError(f"RoPE head width must be even, got {d_h}")
    capacity = positive_int(max_positions, "RoPE max positions", RopeError)
    base = finite_number(rope_base, "RoPE base", RopeError)
    try:  # the fastest pair turns by base ** (-(d_h - 2) / d_h) per token
        largest = (capacity - 1) * base ** (-(d_h - 2) / d_h)
    except OverflowError:
        largest = math.inf
    if not math.isfinite(largest):
        raise RopeError(f"RoPE angles must be finite, got overflow for "
                        f"base {rope_base!r} with head width {d_h} and "
                        f"max positions {capacity}")
    return d_h, capacity, base


def check_input(rope: RotaryEmbedding, x: object,
                position_offset: object = 0) -> None:
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
        self.head_width, self.max_positions, self.rope_base = (
            check_configuration(head_width, max_positions, rope_base))
        pairs = np.arange(self.head_width // 2)
        frequencies = self.rope_base ** (-2.0 * pairs / self.head_width)
        positions = np.arange(self.max_positions)
        angles = positions[:, None] * frequencies        # [P, d_h/2]
        self.cos, self.sin = np.cos(angles), np.sin(angles)

    @checked(check_input)
    def rotate(self, x: Tensor, position_offset: int = 0) -> Tensor:
        """``x: [..., T, d_h]``, token ``t`` at position offset + t."""
        window = slice(position_offset, position_offset + x.shape[-2])
        return rotate_pairs(x, self.cos[window], self.sin[window])
