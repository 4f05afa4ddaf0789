"""RMSNorm: ``x / sqrt(mean(x^2) + eps) * gain`` over the feature axis of ``[..., d]``."""

from __future__ import annotations

import math

import numpy as np

from .errors import ParameterError, RmsNormError
from .linear import live_input, require_parameter, require_width
from .parameter import Parameter, ParameterList
from .tensor import Tensor, rms_norm

STAGE = "rmsnorm"
FLOAT64_MAX = float(np.finfo(np.float64).max)


def _check_epsilon(epsilon: object) -> float:
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float, np.integer, np.floating)) \
            or not math.isfinite(epsilon) or epsilon < 0:
        raise RmsNormError(f"RMSNorm epsilon must be a finite number >= 0, got {epsilon!r}", stage=STAGE)
    return float(epsilon)


class RmsNorm:
    """Scale each row to unit root mean square, then by a learned ``gain: [d]``.

    ``epsilon = 0`` is allowed (the chapter's worked example); a row that is
    all zeros (or whose mean square underflows to 0) then has no scale and is
    rejected instead of producing ``inf``. Values past ``sqrt(max_float / d)``
    are rejected for any epsilon: ``mean(x^2)`` could overflow and zero the row.
    """

    def __init__(self, gain: Parameter, epsilon: float) -> None:
        self.gain = require_parameter(gain, "RMSNorm gain", 1, RmsNormError, STAGE)
        self.epsilon = _check_epsilon(epsilon)
        self._parameters = ParameterList([self.gain])

    @classmethod
    def from_parameters(cls, gain: Parameter, epsilon: float = 1e-5) -> RmsNorm:
        return cls(gain, epsilon)

    @classmethod
    def new(cls, name: str, feature_width: int, epsilon: float = 1e-5) -> RmsNorm:
        """Gain initialised to ones (RMSNorm draws nothing from a generator)."""
        width = require_width(feature_width, "RMSNorm feature width", RmsNormError, STAGE)
        _check_epsilon(epsilon)
        try:
            gain = Parameter(name, np.ones(width))
        except ParameterError as source:
            raise RmsNormError(f"RMSNorm init: {source}", stage=STAGE) from source
        return cls(gain, epsilon)

    @property
    def feature_width(self) -> int:
        return self.gain.shape[0]

    def parameters(self) -> ParameterList:
        return self._parameters

    def forward(self, x: Tensor) -> Tensor:
        """``[..., d] -> [..., d]``."""
        x = live_input(x, RmsNormError, STAGE)
        if x.ndim < 1 or x.shape[-1] != self.feature_width:
            got = x.shape[-1] if x.ndim else "a scalar"
            raise RmsNormError(
                f"RMSNorm input final width must equal feature width {self.feature_width}, got {got}", stage=STAGE)
        if x.value.size:
            _check_scale(x.value, self.epsilon)
        return rms_norm(x, self.gain, self.epsilon)


def _check_scale(x: np.ndarray, epsilon: float) -> None:
    """Refuse rows whose ``1 / sqrt(mean(x^2) + eps)`` is not a finite positive number.

    A row of magnitude past ``sqrt(max_float / d)`` may overflow ``mean(x^2)`` to inf (the row
    would silently become zeros); with ``eps = 0`` an all-zero row, or one whose mean square
    underflows to 0, has no scale at all.
    """
    width = x.shape[-1]
    limit = math.sqrt(FLOAT64_MAX / width)
    peak = max(float(x.max()), -float(x.min()))
    if peak > limit:
        raise RmsNormError(f"RMSNorm input magnitude must be at most {limit:.3g} so mean(x^2) stays finite, "
                           f"got max |x| = {peak:.3g}", stage=STAGE)
    if epsilon == 0.0:
        zero_rows = int(np.count_nonzero(~np.any(x != 0.0, axis=-1)))
        if zero_rows:
            raise RmsNormError(
                f"RMSNorm with epsilon 0 cannot scale an all-zero row, got {zero_rows} such rows", stage=STAGE)
        tiny_rows = int(np.count_nonzero(np.mean(x * x, axis=-1) == 0.0))
        if tiny_rows:
            raise RmsNormError(f"RMSNorm with epsilon 0 cannot scale a row whose mean square underflows to 0, "
                               f"got {tiny_rows} such rows", stage=STAGE)
