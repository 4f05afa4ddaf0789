"""Bias-free projection ``y = x @ W`` of rows, with ``W: [d_in, d_out]``."""

from __future__ import annotations

from .checks import (check_features, check_name, check_parameter, checked,
                     positive_int)
from .errors import LinearError
from .parameter import Parameter, ParameterList
from .rng import SplitMix64, check_generator, uniform_weight
from .tensor import Tensor


def check_input(layer: Linear, x: object) -> None:
    check_features(x, layer.input_width, "linear input", LinearError,
                   "weight input width")


class Linear:
    """``[..., d_in] -> [..., d_out]`` through one weight, no bias."""

    def __init__(self, weight: Parameter) -> None:
        self.weight = check_parameter(weight, "linear weight", 2,
                                      LinearError)

    @classmethod
    def from_parameters(cls, weight: Parameter) -> Linear:
        return cls(weight)

    @classmethod
    def new(cls, name: str, input_width: int, output_width: int,
            rng: SplitMix64) -> Linear:
        """A weight uniform on ``±1/sqrt(d_in)``, drawn after the checks."""
        error = LinearError
        d_in = positive_int(input_width, "linear input width", error)
        d_out = positive_int(output_width, "linear output width", error)
        check_name(name, "linear weight name", error)
        check_generator(rng, "linear init", error)
        return cls(Parameter(name, uniform_weight(rng, d_in, d_out)))

    @property
    def input_width(self) -> int:
        return self.weight.shape[0]

    @property
    def output_width(self) -> int:
        return self.weight.shape[1]

    def parameters(self) -> ParameterList:
        return ParameterList([self.weight])

    @checked(check_input)
    def forward(self, x: Tensor) -> Tensor:
        """``[..., d_in] -> [..., d_out]``."""
        return x @ self.weight
