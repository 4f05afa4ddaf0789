"""RMSNorm: ``x / sqrt(mean(x^2) + eps) * gain`` over the feature axis of ``[..., d]``."""

from __future__ import annotations

import math

import numpy as np

from .errors import RmsNormError
from .linear import live_input, require_parameter, require_width
from .parameter import Parameter, ParameterList
from .tensor import Tensor, rms_norm

STAGE = "rmsnorm"


def _check_epsilon(epsilon: object) -> float:
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float, np.integer, np.floating)) \
            or not math.isfinite(epsilon) or epsilon < 0:
        raise RmsNormError(f"RMSNorm epsilon must be a finite number >= 0, got {epsilon!r}", stage=STAGE)
    return float(epsilon)


class RmsNorm:
    """Scale each row to unit root mean square, then by a learned ``gain: [d]``.

    ``epsilon = 0`` is allowed (the chapter's worked example); a row that is
    all zeros then has no scale and is rejected instead of producing ``inf``.
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
        return cls(Parameter(name, np.ones(width)), epsilon)

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
        if self.epsilon == 0.0 and x.value.size:
            zero_rows = int(np.count_nonzero(~np.any(x.value != 0.0, axis=-1)))
            if zero_rows:
                raise RmsNormError(
                    f"RMSNorm with epsilon 0 cannot scale an all-zero row, got {zero_rows} such rows", stage=STAGE)
        return rms_norm(x, self.gain, self.epsilon)
