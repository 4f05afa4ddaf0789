"""SwiGLU feed-forward network: ``down(SiLU(x W_gate) * (x W_up))``, no biases.

``x: [..., d_in] -> gate, up: [..., d_ff] -> [..., d_out]``; the same
transformation is applied to every token independently.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import LlmFromScratchError, SwiGluError
from .linear import Linear, live_input, require_prefix, require_width
from .parameter import Parameter, ParameterList
from .rng import SplitMix64, require_rng
from .tensor import Tensor, mul, silu

STAGE = "swiglu"


@dataclass(frozen=True)
class SwiGluForward:
    gate: Tensor       # [..., d_ff]  x @ W_gate
    up: Tensor         # [..., d_ff]  x @ W_up
    activated: Tensor  # [..., d_ff]  SiLU(gate)
    hidden: Tensor     # [..., d_ff]  SiLU(gate) * up
    output: Tensor     # [..., d_out] hidden @ W_down


class SwiGlu:
    """Three bias-free projections: gate ``[d_in, d_ff]``, up ``[d_in, d_ff]``, down ``[d_ff, d_out]``."""

    def __init__(self, gate: Linear, up: Linear, down: Linear) -> None:
        for role, projection in (("gate", gate), ("up", up), ("down", down)):
            if not isinstance(projection, Linear):
                raise SwiGluError(f"SwiGLU {role} projection must be a Linear, got {type(projection).__name__}",
                                  stage=STAGE)
        if up.input_width != gate.input_width or up.output_width != gate.output_width:
            raise SwiGluError(
                f"SwiGLU up weight shape must equal gate weight shape {[gate.input_width, gate.output_width]}, "
                f"got {[up.input_width, up.output_width]}", stage=STAGE)
        if down.input_width != gate.output_width:
            raise SwiGluError(
                f"SwiGLU down input width must equal hidden width {gate.output_width}, got {down.input_width}",
                stage=STAGE)
        try:
            self._parameters = ParameterList([gate.weight, up.weight, down.weight])
        except LlmFromScratchError as source:
            raise SwiGluError(f"SwiGLU parameters: {source}", stage=STAGE) from source
        self.gate, self.up, self.down = gate, up, down

    @classmethod
    def from_parameters(cls, gate_weight: Parameter, up_weight: Parameter, down_weight: Parameter) -> SwiGlu:
        projections = []
        for role, weight in (("gate", gate_weight), ("up", up_weight), ("down", down_weight)):
            try:
                projections.append(Linear.from_parameters(weight))
            except LlmFromScratchError as source:
                raise SwiGluError(f"SwiGLU {role} projection: {source}", stage=STAGE) from source
        return cls(*projections)

    @classmethod
    def new(cls, prefix: str, input_width: int, hidden_width: int, output_width: int,
            rng: SplitMix64) -> SwiGlu:
        """Gate, up, down drawn in that order; ``rng`` is untouched unless this succeeds."""
        d_in = require_width(input_width, "SwiGLU input width", SwiGluError, STAGE)
        d_ff = require_width(hidden_width, "SwiGLU hidden width", SwiGluError, STAGE)
        d_out = require_width(output_width, "SwiGLU output width", SwiGluError, STAGE)
        require_prefix(prefix, SwiGluError, STAGE)
        require_rng(rng, "SwiGLU init", SwiGluError)
        trial = rng.clone()
        layer = cls(Linear.new(f"{prefix}.gate.weight", d_in, d_ff, trial),
                    Linear.new(f"{prefix}.up.weight", d_in, d_ff, trial),
                    Linear.new(f"{prefix}.down.weight", d_ff, d_out, trial))
        rng.commit(trial)
        return layer

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
        return self._parameters

    def forward(self, x: Tensor) -> SwiGluForward:
        """``[..., d_in] -> [..., d_out]``."""
        x = live_input(x, SwiGluError, STAGE)
        if x.ndim < 1 or x.shape[-1] != self.input_width:
            got = x.shape[-1] if x.ndim else "a scalar"
            raise SwiGluError(f"SwiGLU input final width must equal input width {self.input_width}, got {got}",
                              stage=STAGE)
        gate = self.gate.forward(x)
        up = self.up.forward(x)
        activated = silu(gate)
        hidden = mul(activated, up)
        return SwiGluForward(gate=gate, up=up, activated=activated, hidden=hidden,
                             output=self.down.forward(hidden))
