"""RMSNorm: ``x / sqrt(mean(x^2) + eps) * gain`` over the last axis."""

from __future__ import annotations

import math

import numpy as np

from .checks import (check_features, check_name, check_parameter, checked,
                     finite_number, positive_int)
from .errors import RmsNormError
from .parameter import Parameter, ParameterList
from .tensor import Tensor, rms_norm

FLOAT64_MAX = float(np.finfo(np.float64).max)


def check_input(norm: RmsNorm, x: object) -> None:
    """A live ``[..., d]`` Tensor whose ``mean(x^2)`` cannot overflow
    (past ``sqrt(max_float / d)`` the row would silently become zeros)."""
    width = norm.feature_width
    check_features(x, width, "RMSNorm input", RmsNormError, "feature width")
    if x.value.size == 0:
        return
    limit = math.sqrt(FLOAT64_MAX / width)
    peak = max(x.value.max(), -x.value.min())
    if peak > limit:
        raise RmsNormError(f"RMSNorm input magnitude must be at most "
                           f"{limit:.3g} so mean(x^2) stays finite, "
                           f"got max |x| = {peak:.3g}")


class RmsNorm:
    """Each row scaled to unit root mean square, then by ``gain: [d]``.

    ``epsilon = 0`` is allowed (the chapter's worked example).
    """

    def __init__(self, gain: Parameter, epsilon: float) -> None:
        """Use ``from_parameters`` or ``new``: they check the parts."""
        self.gain, self.epsilon = gain, epsilon

    @classmethod
    def from_parameters(cls, gain: Parameter,
                        epsilon: float = 1e-5) -> RmsNorm:
        check_parameter(gain, "RMSNorm gain", 1, RmsNormError)
        return cls(gain, finite_number(epsilon, "RMSNorm epsilon",
                                       RmsNormError, zero_allowed=True))

    @classmethod
    def new(cls, name: str, feature_width: int,
            epsilon: float = 1e-5) -> RmsNorm:
        """A gain of ones (RMSNorm draws nothing from a generator)."""
        width = positive_int(feature_width, "RMSNorm feature width",
                             RmsNormError)
        check_name(name, "RMSNorm gain name", RmsNormError)
        return cls.from_parameters(Parameter(name, np.ones(width)), epsilon)

    @property
    def feature_width(self) -> int:
        return self.gain.shape[0]

    def parameters(self) -> ParameterList:
        return ParameterList([self.gain])

    @checked(check_input)
    def forward(self, x: Tensor) -> Tensor:
        """``[..., d] -> [..., d]``."""
        return rms_norm(x, self.gain, self.epsilon)
