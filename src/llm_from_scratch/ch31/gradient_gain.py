"""How much one sublayer scales the gradient, from the moments of its activation.

Post: a sublayer maps a stream ``x`` of RMS 1 to ``y = N(x + f(x))``; its VJP is
``dL/dx = (I + J_f)^T J_N^T dL/dy`` with ``J_N = (I - n n^T / d) / RMS(x + f)``.
If ``f(x)`` is uncorrelated with ``x`` and ``J_f`` with the upstream gradient,

    ||dL/dx||² / ||dL/dy||²  ≈  (1 + γ_J) / (1 + γ_f)

where ``γ_f = E f_i²`` (so ``RMS(x + f)² = 1 + γ_f``) is the branch's forward
gain and ``γ_J = E ||J_f^T v||² / ||v||²`` its backward gain.

Pre: ``y = x + f(N(x))``; the branch reads ``x / RMS(x)``, so

    ||dL/dx||² / ||dL/dy||²  ≈  1 + γ_J / RMS(x)².

For the lab's feed-forward networks (weights uniform on ``±k/sqrt(n_in)``,
variance ``k² / (3 n_in)``) every pre-activation ``a = x W`` of a unit-RMS row
has variance ``s² = k² / 3``, and with ``a, b ~ N(0, s²)``:

* SwiGLU ``(SiLU(a) ⊙ b) W_down``: ``γ_f = s⁴ E[SiLU(a)²]``,
  ``γ_J = s⁴ (E[SiLU(a)²] + s² E[SiLU'(a)²])`` — the product of two linear
  paths has two terms in its derivative;
* ReLU ``ReLU(a) W_down``: ``γ_f = γ_J = s⁴ / 2``, because
  ``ReLU(a) = a ReLU'(a)``.

The expectations are Gauss–Hermite sums over ``a ~ N(0, s²)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .depth_lab import FFNS, DepthRun, check_choice, check_scale

_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(80)   # N(0, 1)
_WEIGHTS = _WEIGHTS / _WEIGHTS.sum()


def expectation(function, s: float) -> float:
    """``E[function(a)]`` for ``a ~ N(0, s²)``."""
    return float(np.sum(_WEIGHTS * function(s * _NODES)))


def silu(a: np.ndarray) -> np.ndarray:
    return a * 0.5 * (1.0 + np.tanh(0.5 * a))


def silu_slope(a: np.ndarray) -> np.ndarray:
    sigmoid = 0.5 * (1.0 + np.tanh(0.5 * a))
    return sigmoid * (1.0 + a * (1.0 - sigmoid))


@dataclass(frozen=True)
class BranchGains:
    """The two gains of one feed-forward branch at one weight scale."""

    ffn: str
    weight_scale: float
    forward: float     # γ_f
    backward: float    # γ_J

    @property
    def post(self) -> float:
        """The predicted gradient gain of one Post sublayer."""
        return math.sqrt((1.0 + self.backward) / (1.0 + self.forward))

    def pre(self, stream_rms: float) -> float:
        """The predicted gradient gain of one Pre sublayer over a stream of
        this RMS."""
        return math.sqrt(1.0 + self.backward / stream_rms ** 2)


def ffn_gains(ffn: str = "swiglu", weight_scale: float = 1.0) -> BranchGains:
    """``γ_f`` and ``γ_J`` of the lab's feed-forward branch from the moments
    of its activation (module docstring)."""
    check_choice(ffn, "ffn", FFNS)
    k = check_scale(weight_scale)
    s2 = k * k / 3.0
    s = math.sqrt(s2)
    if ffn == "relu":
        forward = backward = s2 * s2 / 2.0
    else:
        value = expectation(lambda a: silu(a) ** 2, s)
        slope = expectation(lambda a: silu_slope(a) ** 2, s)
        forward = s2 * s2 * value
        backward = s2 * s2 * (value + s2 * slope)
    return BranchGains(ffn, k, forward, backward)


def measured_gain(run: DepthRun) -> float:
    """The lab's gradient gain per block: the geometric mean of
    ``||dL/dx_l|| / ||dL/dx_{l+1}||`` over the blocks between the first and
    the last (the input is not the output of a norm, the top block feeds the
    final norm)."""
    g = run.stream_gradients
    ratios = g[1:-2] / g[2:-1]
    return float(np.exp(np.mean(np.log(ratios))))


def predicted_pre_ratio(run: DepthRun, gains: BranchGains) -> float:
    """``||dL/dx_0|| / ||dL/dx_L||`` of a Pre stack of single sublayers
    (``branches="ffn"``) predicted from ``gains`` and the RMS of the stream
    that the lab measured entering each block."""
    return float(np.prod([gains.pre(rms) for rms in run.stream_rms[:-1]]))
