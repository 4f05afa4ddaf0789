"""RMSNorm: ``x / sqrt(mean(x^2) + eps) * gain`` over the last axis."""

import math

import numpy as np

from .checks import (check_name, check_parameter, check_size,
                     check_tensor, checked, finite_number, positive_int)
from .errors import RmsNormError
from .parameter import Parameter, ParameterList
from .tensor import Tensor, rms_norm

FLOAT64_MAX = float(np.finfo(np.float64).max)


def check_input(norm, x):
    """A live ``[..., d]`` Tensor whose rows the norm can scale: past
    ``sqrt(max_float / d)`` ``mean(x^2)`` overflows, and with ``eps = 0``
    a row whose mean square is 0 has no scale."""
    width = norm.feature_width
    check_tensor(x, "RMSNorm input", RmsNormError, width, "feature width")
    if x.value.size == 0:
        return
    limit = math.sqrt(FLOAT64_MAX / width)
    peak = max(x.value.max(), -x.value.min())
    if peak > limit:
        raise RmsNormError(f"RMSNorm input magnitude must be at most "
                           f"{limit:.3g} so mean(x^2) stays finite, "
                           f"got max |x| = {peak:.3g}")
    zero = norm.epsilon == 0 and np.count_nonzero(
        np.mean(x.value**2, axis=-1) == 0)
    if zero:
        raise RmsNormError("RMSNorm with epsilon 0 cannot scale a row "
                           f"whose mean square is 0, got {zero} such rows")


class RmsNorm:
    """Each row scaled to unit root mean square, then by ``gain: [d]``;
    ``epsilon = 0`` is allowed (the chapter's worked example)."""

    def __init__(self, gain: Parameter, epsilon: float) -> None:
        """Use ``from_parameters`` or ``new``: they check the parts."""
        self.gain, self.epsilon = gain, epsilon

    @classmethod
    def from_parameters(cls, gain: Parameter, epsilon: float = 1e-5):
        check_parameter(gain, "RMSNorm gain", 1, RmsNormError)
        return cls(gain, finite_number(epsilon, "RMSNorm epsilon",
                                       RmsNormError, zero_allowed=True))

    @classmethod
    def new(cls, name: str, feature_width: int, epsilon: float = 1e-5):
        """A gain of ones (RMSNorm draws nothing from a generator)."""
        width = positive_int(feature_width, "RMSNorm feature width",
                             RmsNormError)
        check_size(width, "RMSNorm gain", RmsNormError)
        check_name(name, "RMSNorm gain name", RmsNormError)
        return cls.from_parameters(Parameter(name, np.ones(width)), epsilon)

    @property
    def feature_width(self) -> int:
        return self.gain.shape[0]

    def parameters(self) -> ParameterList:
        return ParameterList([self.gain])

    @checked(check_input, RmsNormError, "RMSNorm")
    def forward(self, x: Tensor) -> Tensor:
        """``[..., d] -> [..., d]``."""
        return rms_norm(x, self.gain, self.epsilon)
