"""Bias-free linear projection ``y = x @ W`` with ``W: [d_in, d_out]`` (row vectors)."""

from __future__ import annotations

from .errors import LinearError, ParameterError, TensorError
from .parameter import Parameter, ParameterList
from .rng import SplitMix64, require_rng, uniform_weight
from .tensor import Tensor, ensure_live, is_int, matmul


def require_parameter(value: object, role: str, rank: int, error: type, stage: str) -> Parameter:
    """``value`` if it is a Parameter of the given rank with no empty axis, else ``error``."""
    if not isinstance(value, Parameter):
        raise error(f"{role} must be a Parameter, got {type(value).__name__}", stage=stage)
    if value.ndim != rank:
        raise error(f"{role} must have rank {rank}, got rank {value.ndim} with shape {list(value.shape)}",
                    stage=stage)
    if 0 in value.shape:
        raise error(f"{role} must have no empty axis, got shape {list(value.shape)}", stage=stage)
    return value


def require_width(value: object, role: str, error: type, stage: str) -> int:
    """A positive Python integer width, else ``error``."""
    if not is_int(value) or int(value) <= 0:
        raise error(f"{role} must be a positive integer, got {value!r}", stage=stage)
    return int(value)


def require_prefix(prefix: object, error: type, stage: str) -> str:
    """A non-empty name prefix such as ``block.attention``, else ``error``."""
    if not isinstance(prefix, str) or not prefix.strip():
        raise error(f"{stage} name prefix must be a non-empty string, got {prefix!r}", stage=stage)
    return prefix


def live_input(x: object, error: type, stage: str) -> Tensor:
    """``x`` if it is a live Tensor; otherwise ``error`` chained from the ``TensorError``."""
    try:
        return ensure_live(x, stage)
    except TensorError as source:
        raise error(str(source), stage=stage) from source


class Linear:
    """``[..., d_in] -> [..., d_out]`` through one weight matrix, no bias."""

    def __init__(self, weight: Parameter) -> None:
        self.weight = require_parameter(weight, "linear weight", 2, LinearError, "linear")
        self._parameters = ParameterList([self.weight])

    @classmethod
    def from_parameters(cls, weight: Parameter) -> Linear:
        return cls(weight)

    @classmethod
    def new(cls, name: str, input_width: int, output_width: int, rng: SplitMix64) -> Linear:
        """Fresh weights from ``rng``; ``rng`` advances only if construction succeeds."""
        d_in = require_width(input_width, "linear input width", LinearError, "linear init")
        d_out = require_width(output_width, "linear output width", LinearError, "linear init")
        require_rng(rng, "linear init", LinearError)
        trial = rng.clone()
        try:
            weight = Parameter(name, uniform_weight(trial, d_in, d_out))
        except ParameterError as source:  # a bad name: the trial draws are discarded
            raise LinearError(f"linear init: {source}", stage="linear init") from source
        layer = cls(weight)
        rng.commit(trial)
        return layer

    @property
    def input_width(self) -> int:
        return self.weight.shape[0]

    @property
    def output_width(self) -> int:
        return self.weight.shape[1]

    def parameters(self) -> ParameterList:
        return self._parameters

    def forward(self, x: Tensor) -> Tensor:
        """``x: [..., d_in] -> [..., d_out]``."""
        x = live_input(x, LinearError, "linear")
        if x.ndim < 1 or x.shape[-1] != self.input_width:
            got = x.shape[-1] if x.ndim else "a scalar"
            raise LinearError(
                f"linear input final width must equal weight input width {self.input_width}, got {got}",
                stage="linear",
            )
        return matmul(x, self.weight)
