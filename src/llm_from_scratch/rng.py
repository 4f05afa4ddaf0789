"""SplitMix64: a tiny deterministic generator, and the weight initialisation built on it.

SplitMix64 advances a 64-bit counter by a fixed odd constant and mixes it, so
the ``k``-th draw depends only on the start state and ``k``: ``n`` draws are one
vectorised computation over ``state + k * GAMMA``. Layers draw their weights
through ``uniform_weight``; constructors work on a ``clone()`` and ``commit``
it only after every check passed, so a failed construction leaves the caller's
generator untouched.
"""

from __future__ import annotations

import numpy as np

from .errors import InitializationError
from .tensor import is_int

GAMMA = 0x9E3779B97F4A7C15
MASK = (1 << 64) - 1


class SplitMix64:
    """Deterministic 64-bit generator; ``state`` is the whole of it."""

    def __init__(self, seed: int) -> None:
        if not is_int(seed) or not 0 <= int(seed) <= MASK:
            raise InitializationError(
                f"SplitMix64 seed must be an integer in [0, 2**64), got {seed!r}", stage="splitmix64"
            )
        self.state = int(seed)

    def clone(self) -> SplitMix64:
        return SplitMix64(self.state)

    def commit(self, trial: SplitMix64) -> None:
        """Adopt the state of a trial copy that was used for a successful construction."""
        if not isinstance(trial, SplitMix64):
            raise InitializationError(f"SplitMix64 commit needs a SplitMix64 trial copy, got {type(trial).__name__}",
                                      stage="splitmix64")
        self.state = trial.state

    def next_u64(self, count: int) -> np.ndarray:
        """The next ``count`` outputs as ``uint64`` (one vectorised step per draw)."""
        if not is_int(count) or count < 0:
            raise InitializationError(f"SplitMix64 draw count must be a non-negative integer, got {count!r}",
                                      stage="splitmix64")
        count = int(count)
        steps = (np.arange(1, count + 1, dtype=np.uint64) * np.uint64(GAMMA)) + np.uint64(self.state)
        self.state = (self.state + count * GAMMA) & MASK
        z = steps
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))

    def next_f64(self, count: int) -> np.ndarray:
        """``count`` floats uniform on ``[0, 1)`` from the top 53 bits of each draw."""
        return (self.next_u64(count) >> np.uint64(11)).astype(np.float64) * 2.0**-53

    def __repr__(self) -> str:
        return f"SplitMix64(state={self.state:#018x})"


def require_rng(rng: object, stage: str, error: type = InitializationError) -> SplitMix64:
    """``rng`` if it is a SplitMix64, else ``error`` naming ``stage`` and the type received."""
    if not isinstance(rng, SplitMix64):
        raise error(f"{stage} needs a SplitMix64 generator, got {type(rng).__name__}", stage=stage)
    return rng


def uniform_weight(rng: SplitMix64, fan_in: int, fan_out: int) -> np.ndarray:
    """A ``[fan_in, fan_out]`` matrix uniform on ``[-1/sqrt(fan_in), 1/sqrt(fan_in))``, row-major draws."""
    bound = 1.0 / np.sqrt(fan_in)
    draws = rng.next_f64(fan_in * fan_out).reshape(fan_in, fan_out)
    return (2.0 * draws - 1.0) * bound
