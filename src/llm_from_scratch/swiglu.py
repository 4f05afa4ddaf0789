"""SwiGLU feed-forward network: ``down(SiLU(x W_gate) * (x W_up))``.

No biases; ``x: [..., d_in] -> gate, up: [..., d_ff] -> [..., d_out]``,
the same map for every token.
"""

from dataclasses import dataclass

from .checks import (check_parameter, check_size, check_tensor, checked,
                     positive_int)
from .errors import SwiGluError, chained
from .parameter import Layer, Parameter
from .rng import SplitMix64, drawing, uniform_weight
from .fused import swiglu
from .tensor import Tensor, silu

ROLES = ("gate", "up", "down")


def check_input(layer, x):
    check_tensor(x, "SwiGLU input", SwiGluError, layer.input_width,
                 "input width")


@dataclass(frozen=True)
class SwiGluForward:
    gate: Tensor       # [..., d_ff]  x @ W_gate
    up: Tensor         # [..., d_ff]  x @ W_up
    activated: Tensor  # [..., d_ff]  SiLU(gate)
    hidden: Tensor     # [..., d_ff]  SiLU(gate) * up
    output: Tensor     # [..., d_out] hidden @ W_down


class SwiGlu(Layer):
    """Weights gate, up ``[d_in, d_ff]`` and down ``[d_ff, d_out]``."""

    def __init__(self, gate_weight: Parameter, up_weight: Parameter,
                 down_weight: Parameter) -> None:
        weights = (gate_weight, up_weight, down_weight)
        for role, weight in zip(ROLES, weights, strict=True):
            check_parameter(weight, f"SwiGLU {role} weight", 2, SwiGluError)
        gate, up, down = (weight.shape for weight in weights)
        if up != gate:
            raise SwiGluError("SwiGLU up weight shape must equal gate "
                              f"weight shape {list(gate)}, got {list(up)}")
        if down[0] != gate[1]:
            raise SwiGluError("SwiGLU down input width must equal hidden "
                              f"width {gate[1]}, got {down[0]}")
        self.w_gate, self.w_up, self.w_down = weights
        self.input_width, self.output_width = gate[0], down[1]
        with chained(SwiGluError, "SwiGLU parameters"):
            self.parameters()  # every name once

    @classmethod
    def new(cls, prefix: str, input_width: int, hidden_width: int,
            output_width: int, rng: SplitMix64):
        """Fresh gate, up, down weights, drawn in this order."""
        d_in, d_ff, d_out = (
            positive_int(width, f"SwiGLU {role} width", SwiGluError)
            for role, width in zip(("input", "hidden", "output"), (
                input_width, hidden_width, output_width), strict=True))
        check_size(d_ff * max(d_in, d_out), "SwiGLU weight", SwiGluError)
        shapes = {"gate": (d_in, d_ff), "up": (d_in, d_ff),
                  "down": (d_ff, d_out)}
        with drawing(rng, prefix, "SwiGLU", SwiGluError) as trial:
            return cls(*(Parameter(f"{prefix}.{role}.weight",
                                   uniform_weight(trial, *shape))
                         for role, shape in shapes.items()))

    @checked(check_input, SwiGluError, "SwiGLU")
    def forward(self, x: Tensor) -> SwiGluForward:
        gate = x @ self.w_gate          # [..., d_ff]
        up = x @ self.w_up              # [..., d_ff]
        activated = silu(gate)          # SiLU(x W_gate)
        hidden = activated * up         # SiLU(x W_gate) * (x W_up)
        output = hidden @ self.w_down   # [..., d_out]
        return SwiGluForward(gate, up, activated, hidden, output)

    @checked(check_input, SwiGluError, "SwiGLU")
    def output(self, x: Tensor) -> Tensor:
        """``forward(x).output`` in one tape step, the same numbers bit
        for bit, without the stages (for training)."""
        return swiglu(x, self.w_gate, self.w_up, self.w_down)
