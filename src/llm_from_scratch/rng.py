"""SplitMix64, a tiny deterministic generator, and weights drawn from it.

SplitMix64 adds a fixed odd constant to a 64-bit counter and mixes the
sum, so draw ``k`` depends only on the starting state and ``k``: ``n``
draws are one vectorised computation over ``state + k * GAMMA``.
"""

from contextlib import contextmanager

import numpy as np

from .checks import MAX_SIZE, check_name, is_int, positive_int, shown
from .errors import InitializationError

GAMMA = 0x9E3779B97F4A7C15
MASK = (1 << 64) - 1


class SplitMix64:
    """A deterministic 64-bit generator; ``state`` is all of it."""

    def __init__(self, seed: int) -> None:
        if not is_int(seed) or not 0 <= int(seed) <= MASK:
            raise InitializationError("SplitMix64 seed must be an integer "
                                      f"in [0, 2**64), got {shown(seed)}")
        self.state = int(seed)

    def next_u64(self, count: int) -> np.ndarray:
        if not is_int(count) or not 0 <= int(count) <= MAX_SIZE:
            raise InitializationError(
                "SplitMix64 draw count must be an integer in "
                f"[0, {MAX_SIZE}], got {shown(count)}")
        k = np.arange(1, int(count) + 1, dtype=np.uint64)
        z = k * np.uint64(GAMMA) + np.uint64(self.state)  # wraps mod 2**64
        self.state = (self.state + int(count) * GAMMA) & MASK
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))

    def next_f64(self, count: int) -> np.ndarray:
        """``count`` floats uniform on ``[0, 1)`` from the top 53 bits."""
        top = (self.next_u64(count) >> np.uint64(11)).astype(np.float64)
        return top * 2.0**-53

    def __repr__(self) -> str:
        return f"SplitMix64(state={self.state:#018x})"


@contextmanager
def drawing(rng, prefix, stage, error):
    """A copy of ``rng`` to draw a layer's weights from; ``rng`` takes its
    state only if the ``with`` body succeeds: a failure leaves it as is."""
    check_name(prefix, f"{stage} name prefix", error)
    if not isinstance(rng, SplitMix64):
        raise error(f"{stage} init needs a SplitMix64 generator, "
                    f"got {type(rng).__name__}")
    trial = SplitMix64(rng.state)
    yield trial
    rng.state = trial.state


def uniform_weight(rng, fan_in, fan_out):
    """``[fan_in, fan_out]`` uniform on ``±1/sqrt(fan_in)``, row by row."""
    fan_in = positive_int(fan_in, "weight fan-in", InitializationError)
    fan_out = positive_int(fan_out, "weight fan-out", InitializationError)
    bound = 1.0 / np.sqrt(fan_in)
    draws = rng.next_f64(fan_in * fan_out).reshape(fan_in, fan_out)
    return (2.0 * draws - 1.0) * bound
