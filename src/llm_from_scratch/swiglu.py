"""SwiGLU feed-forward network: ``down(SiLU(x W_gate) * (x W_up))``.

No biases; ``x: [..., d_in] -> gate, up: [..., d_ff] -> [..., d_out]``,
the same map for every token.
"""

from __future__ import annotations

from dataclasses import dataclass

from .checks import check_features, check_name, checked, positive_int
from .errors import SwiGluError, chained
from .linear import Linear
from .parameter import Parameter, ParameterList
from .rng import SplitMix64, check_generator, uniform_weight
from .tensor import Tensor, silu

ROLES = ("gate", "up", "down")


def check_input(layer: SwiGlu, x: object) -> None:
    check_features(x, layer.input_width, "SwiGLU input", SwiGluError,
                   "input width")


@dataclass(frozen=True)
class SwiGluForward:
    gate: Tensor       # [..., d_ff]  x @ W_gate
    up: Tensor         # [..., d_ff]  x @ W_up
    activated: Tensor  # [..., d_ff]  SiLU(gate)
    hidden: Tensor     # [..., d_ff]  SiLU(gate) * up
    output: Tensor     # [..., d_out] hidden @ W_down


class SwiGlu:
    """Weights gate, up ``[d_in, d_ff]`` and down ``[d_ff, d_out]``."""

    def __init__(self, gate: Linear, up: Linear, down: Linear) -> None:
        """Use ``from_parameters`` or ``new``: they check the parts."""
        self.gate, self.up, self.down = gate, up, down

    @classmethod
    def from_parameters(cls, gate_weight: Parameter, up_weight: Parameter,
                        down_weight: Parameter) -> SwiGlu:
        weights = (gate_weight, up_weight, down_weight)
        projections = []
        for role, weight in zip(ROLES, weights, strict=True):
            with chained(SwiGluError, f"SwiGLU {role} projection"):
                projections.append(Linear(weight))
        gate, up, down = projections
        if up.weight.shape != gate.weight.shape:
            raise SwiGluError(
                "SwiGLU up weight shape must equal gate weight shape "
                f"{list(gate.weight.shape)}, got {list(up.weight.shape)}")
        if down.input_width != gate.output_width:
            raise SwiGluError("SwiGLU down input width must equal hidden "
                              f"width {gate.output_width}, "
                              f"got {down.input_width}")
        with chained(SwiGluError, "SwiGLU parameters"):
            ParameterList(weights)  # every name once
        return cls(gate, up, down)

    @staticmethod
    def check_configuration(*widths: object) -> list[int]:
        """What ``new`` checks before it draws: three positive widths."""
        return [positive_int(width, f"SwiGLU {role} width", SwiGluError)
                for role, width in zip(("input", "hidden", "output"),
                                       widths, strict=True)]

    @classmethod
    def new(cls, prefix: str, input_width: int, hidden_width: int,
            output_width: int, rng: SplitMix64) -> SwiGlu:
        """Fresh gate, up, down weights, drawn in this order after the
        checks, so a failure leaves ``rng`` untouched."""
        d_in, d_ff, d_out = cls.check_configuration(
            input_width, hidden_width, output_width)
        check_name(prefix, "SwiGLU name prefix", SwiGluError)
        check_generator(rng, "SwiGLU init", SwiGluError)
        shapes = ((d_in, d_ff), (d_in, d_ff), (d_ff, d_out))
        weights = [Parameter(f"{prefix}.{role}.weight",
                             uniform_weight(rng, *shape))
                   for role, shape in zip(ROLES, shapes, strict=True)]
        return cls.from_parameters(*weights)

    @property
    def input_width(self) -> int:
        return self.gate.input_width

    @property
    def hidden_width(self) -> int:
        return self.gate.output_width

    @property
    def output_width(self) -> int:
        return self.down.output_width

    def parameters(self) -> ParameterList:
        """``gate.weight, up.weight, down.weight``."""
        return ParameterList([self.gate.weight, self.up.weight,
                              self.down.weight])

    @checked(check_input)
    def forward(self, x: Tensor) -> SwiGluForward:
        """``[..., d_in] -> [..., d_out]``."""
        gate = x @ self.gate.weight         # [..., d_ff]
        up = x @ self.up.weight             # [..., d_ff]
        activated = silu(gate)              # SiLU(x W_gate)
        hidden = activated * up             # SiLU(x W_gate) * (x W_up)
        output = hidden @ self.down.weight  # [..., d_out]
        return SwiGluForward(gate, up, activated, hidden, output)
