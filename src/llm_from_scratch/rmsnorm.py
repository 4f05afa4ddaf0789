"""RMSNorm: ``x / sqrt(mean(x^2) + eps) * gain`` over the last axis."""

import numpy as np

from .checks import (check_name, check_parameter, check_size,
                     check_tensor, checked, finite_number, positive_int)
from .errors import RmsNormError
from .parameter import Layer, Parameter
from .tensor import Tensor, rms_norm


def check_input(norm, x):
    """A live ``[..., d]`` Tensor; with ``eps = 0`` no row may have mean
    square 0 (a row too large for ``x^2`` is refused by ``rms_norm``)."""
    check_tensor(x, "RMSNorm input", RmsNormError, norm.feature_width,
                 "feature width")
    if norm.epsilon != 0:
        return
    with np.errstate(over="ignore"):  # an inf mean square is not zero
        zero = np.count_nonzero(np.mean(x.value**2, axis=-1) == 0)
    if zero:
        raise RmsNormError("RMSNorm with epsilon 0 cannot scale a row "
                           f"whose mean square is 0, got {zero} such rows")


class RmsNorm(Layer):
    """Each row scaled to unit root mean square, then by ``gain: [d]``;
    ``epsilon = 0`` is allowed (the chapter's worked example)."""

    def __init__(self, gain: Parameter, epsilon: float = 1e-5) -> None:
        check_parameter(gain, "RMSNorm gain", 1, RmsNormError)
        self.gain, self.epsilon = gain, finite_number(
            epsilon, "RMSNorm epsilon", RmsNormError, zero_allowed=True)
        self.feature_width = gain.shape[0]

    @classmethod
    def new(cls, name: str, feature_width: int, epsilon: float = 1e-5):
        """A gain of ones (RMSNorm draws nothing from a generator)."""
        width = positive_int(feature_width, "RMSNorm feature width",
                             RmsNormError)
        check_size(width, "RMSNorm gain", RmsNormError)
        check_name(name, "RMSNorm gain name", RmsNormError)
        return cls(Parameter(name, np.ones(width)), epsilon)

    @checked(check_input, RmsNormError, "RMSNorm")
    def forward(self, x: Tensor) -> Tensor:
        return rms_norm(x, self.gain, self.epsilon)
