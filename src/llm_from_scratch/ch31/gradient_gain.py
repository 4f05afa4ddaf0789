"""How much one sublayer scales the gradient, from the moments of its activation.

Post: a sublayer maps a stream ``x`` of RMS 1 to ``y = N(x + f(x))``; its VJP is
``dL/dx = (I + J_f)^T J_N^T dL/dy`` with ``J_N = (I - n n^T / d) / RMS(x + f)``.
If ``f(x)`` is uncorrelated with ``x`` and ``J_f`` with the upstream gradient,

    ||dL/dx||² / ||dL/dy||²  ≈  (1 + κ_J) / (1 + κ_f)

where ``κ_f = E f_i²`` (so ``RMS(x + f)² = 1 + κ_f``) is the branch's forward
gain and ``κ_J = E ||J_f^T v||² / ||v||²`` its backward gain.

Pre: ``y = x + f(N(x))``; the branch reads ``x / RMS(x)``, so

    ||dL/dx||² / ||dL/dy||²  ≈  1 + κ_J / RMS(x)².

For the lab's feed-forward networks (weights uniform on ``±c/sqrt(n_in)``,
variance ``c² / (3 n_in)``) every pre-activation ``a = x W`` of a unit-RMS row
has variance ``s² = c² / 3``, and with ``a, b ~ N(0, s²)``:

* SwiGLU ``(SiLU(a) ⊙ b) W_down``: ``κ_f = s⁴ E[SiLU(a)²]``,
  ``κ_J = s⁴ (E[SiLU(a)²] + s² E[SiLU'(a)²])`` — the product of two linear
  paths has two terms in its derivative;
* ReLU ``ReLU(a) W_down``: ``κ_f = κ_J = s⁴ / 2``, because
  ``ReLU(a) = a ReLU'(a)``.

The expectations are Gauss–Hermite sums over ``a ~ N(0, s²)``; SiLU and its
slope are the tape's own (``tensor.silu`` and its VJP).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..book.settings import changed, choice, number
from ..checks import finite_number, shown
from ..errors import DepthLabError
from ..rng import SplitMix64
from ..tensor import Tensor, silu
from .depth_lab import FFNS, MAX_WEIGHT_SCALE, SEEDS, DepthRun, Settings, _Stack

_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(80)   # N(0, 1)
_WEIGHTS = _WEIGHTS / _WEIGHTS.sum()
MAX_SPREAD = MAX_WEIGHT_SCALE    # s of the lab's pre-activations is c / sqrt(3)


def expectation(function: Callable[[np.ndarray], np.ndarray], s: float) -> float:
    """``E[function(a)]`` for ``a ~ N(0, s²)``: ``function`` maps the nodes
    ``[80]`` to finite values ``[80]``."""
    if not callable(function):
        raise DepthLabError(f"expectation function must be callable, got {type(function).__name__}")
    s = number(s, "expectation s", 0, MAX_SPREAD, DepthLabError)
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        try:
            values = np.asarray(function(s * _NODES), dtype=float)
            total = float(np.sum(_WEIGHTS * values))
        except (FloatingPointError, TypeError, ValueError) as error:
            raise DepthLabError(f"expectation of {shown(getattr(function, '__name__', function))} "
                                f"at s {s:g}: {type(error).__name__}: {error}") from error
    if values.shape != _NODES.shape or not math.isfinite(total):
        raise DepthLabError(f"expectation function must give {len(_NODES)} finite values, "
                            f"got shape {list(values.shape)} summing to {total}")
    return total


def silu_and_slope(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``SiLU(a)`` and ``SiLU'(a)``, both from the tape: its forward and its VJP."""
    x = Tensor(a, requires_grad=True)
    y = silu(x)
    y.backward()
    return y.value, x.grad


@dataclass(frozen=True)
class BranchGains:
    """The two gains of one feed-forward branch at one weight scale."""

    ffn: str
    weight_scale: float
    forward: float     # κ_f
    backward: float    # κ_J

    def __post_init__(self) -> None:
        choice(self.ffn, "branch gains ffn", FFNS, DepthLabError)
        number(self.weight_scale, "branch gains weight_scale", 0, MAX_WEIGHT_SCALE, DepthLabError)
        for name in ("forward", "backward"):          # a gain is a mean square: >= 0
            finite_number(getattr(self, name), f"branch gains {name}", DepthLabError, zero_allowed=True)

    @property
    def post(self) -> float:
        """The predicted gradient gain of one Post sublayer."""
        return math.sqrt((1.0 + self.backward) / (1.0 + self.forward))

    def pre(self, stream_rms: float) -> float:
        """The predicted gradient gain of one Pre sublayer over a stream of
        this RMS."""
        rms = number(stream_rms, "Pre gain stream_rms", 0, math.inf, DepthLabError)
        try:
            square = rms ** 2
        except OverflowError:                  # a stream past 1e154: the branch adds nothing
            square = math.inf
        gain = 1.0 + self.backward / square if square > 0 else math.inf
        if not math.isfinite(gain):
            raise DepthLabError(f"Pre gain over a stream of RMS {stream_rms:g} overflows")
        return math.sqrt(gain)


def ffn_gains(ffn: str = "swiglu", weight_scale: float = 1.0) -> BranchGains:
    """``κ_f`` and ``κ_J`` of the lab's feed-forward branch from the moments
    of its activation (module docstring)."""
    choice(ffn, "depth lab ffn", FFNS, DepthLabError)
    k = number(weight_scale, "depth lab weight_scale", 0, MAX_WEIGHT_SCALE, DepthLabError)
    s2 = k * k / 3.0
    s = math.sqrt(s2)
    if ffn == "relu":
        forward = backward = s2 * s2 / 2.0
    else:
        value = expectation(lambda a: silu_and_slope(a)[0] ** 2, s)
        slope = expectation(lambda a: silu_and_slope(a)[1] ** 2, s)
        forward = s2 * s2 * value
        backward = s2 * s2 * (value + s2 * slope)
    return BranchGains(ffn, k, forward, backward)


def measured_gain(run: DepthRun) -> float:
    """The lab's gradient gain per block: the geometric mean of
    ``||dL/dx_l|| / ||dL/dx_{l+1}||`` over the blocks between the first and
    the last (the input is not the output of a norm, the top block feeds the
    final norm); it needs three blocks or more and no zero gradient."""
    g = _stream_gradients(run)
    with np.errstate(over="raise"):
        try:
            return float(np.exp(np.mean(np.log(g[1:-2] / g[2:-1]))))
        except FloatingPointError as error:
            raise DepthLabError(f"measured gain of stream gradients {g[1]:.3g} … {g[-2]:.3g} "
                                f"overflows ({error})") from error


def input_norm_gain(run: DepthRun) -> tuple[float, float]:
    """The two factors of ``measured_gain`` in a stack without residual
    connections, whose block is ``y = rest(N(x))``: the gain of the input
    RMSNorm's Jacobian, ``||dL/dx_l|| / ||dL/dN(x_l)||``, and the gain of
    the rest of the block, ``||dL/dN(x_l)|| / ||dL/dx_{l+1}||``, each a
    geometric mean over the blocks ``measured_gain`` uses; their product
    is ``measured_gain(run)``. The real gradient: the blocks run again on
    the stored stream, top down."""
    _stream_gradients(run)                     # a DepthRun, 3 blocks or more
    if run.settings.variant != "none":
        raise DepthLabError("input norm gain needs a stack without residual connections "
                            f"(variant 'none'), got variant {run.settings.variant!r}")
    stack = _Stack(run.settings)
    norm, rest = [], []
    with stack.numerics():
        inputs, outputs = stack.forward(run.layers)
        upstream = stack.top_backward(outputs[-1])[0].grad
        for parts, x_l in zip(reversed(stack.parts), reversed(inputs), strict=True):
            x = Tensor(x_l.value, requires_grad=True)
            normed = parts.attention_norm(x)                 # N(x_l)
            n = Tensor(normed.value, requires_grad=True)     # a leaf: dL/dN
            parts.feed_forward(parts.feed_forward_norm(parts.attention(n))).backward(upstream)
            normed.backward(n.grad)
            rest.append(_ratio(n.grad, upstream))
            norm.append(_ratio(x.grad, n.grad))
            upstream = x.grad
    inner = slice(1, run.layers - 1)           # as measured_gain: not the ends
    return tuple(float(np.exp(np.mean(np.log(np.array(v[::-1])[inner]))))
                 for v in (norm, rest))


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> float:
    """``||numerator|| / ||denominator||``; NaN for a zero denominator (only
    an end block's, which the means leave out)."""
    below = float(np.linalg.norm(denominator))
    return float(np.linalg.norm(numerator)) / below if below else math.nan


def random_upstream_gain(settings: Settings | None = None,
                         **changes: object) -> float:
    """The gain per block when the gradient arriving from above is replaced
    by noise: each block of the lab's stack (at its own input) gets a fresh
    upstream ``v [B, T, d]`` of independent unit-variance entries (uniform,
    from ``SplitMix64(seed + 2)``), and the gain is the geometric mean of
    ``||J^T v|| / ||v||`` over the blocks ``measured_gain`` uses. This is the
    setting of the moment formula; ``measured_gain`` gives the lab's real
    gradient, which has passed the blocks above."""
    settings = changed(Settings, settings, changes)
    if settings.layers < 3:
        raise DepthLabError("random upstream gain needs a stack of 3 blocks "
                            f"or more, got layers={settings.layers}")
    stack = _Stack(settings)
    rng = SplitMix64((settings.seed + 2) % SEEDS)
    ratios = []
    with stack.numerics():
        inputs, _ = stack.forward(settings.layers)
        for parts, x_l in zip(stack.parts, inputs, strict=True):
            x = Tensor(x_l.value, requires_grad=True)   # a graph of its own
            y = stack.wire(parts, x)
            v = math.sqrt(3.0) * (2.0 * rng.next_f64(x.value.size)
                                  .reshape(x.shape) - 1.0)
            y.backward(v)
            ratios.append(float(np.linalg.norm(x.grad) / np.linalg.norm(v)))
        inner = np.array(ratios[1:-1])   # as measured_gain: not the ends
        if not np.all(inner > 0):
            raise DepthLabError("random upstream gain needs nonzero "
                                "gradients, got a block that passes none")
        return float(np.exp(np.mean(np.log(inner))))


def predicted_pre_ratio(run: DepthRun, gains: BranchGains) -> float:
    """``||dL/dx_0|| / ||dL/dx_L||`` of a Pre stack of single sublayers
    (``branches="ffn"``) predicted from ``gains`` and the RMS of the stream
    that the lab measured entering each block."""
    if not isinstance(run, DepthRun) or not isinstance(gains, BranchGains):
        raise DepthLabError("predicted ratio needs a DepthRun and BranchGains, "
                            f"got {type(run).__name__} and {type(gains).__name__}")
    with np.errstate(over="raise"):
        try:
            return float(np.prod([gains.pre(rms) for rms in run.stream_rms[:-1]]))
        except FloatingPointError as error:
            raise DepthLabError(f"predicted ratio over {run.layers} blocks overflows") from error


def _stream_gradients(run: object) -> np.ndarray:
    if not isinstance(run, DepthRun):
        raise DepthLabError(f"measured gain needs a DepthRun, got {type(run).__name__}")
    g = run.stream_gradients
    if run.layers < 3:
        raise DepthLabError(f"measured gain needs a stack of 3 blocks or more, got {run.layers}")
    inner = g[1:-1]                                  # the blocks between the first and the last
    if not np.all(np.isfinite(inner) & (inner > 0)):
        zero = int(np.flatnonzero(~(np.isfinite(inner) & (inner > 0)))[0]) + 1
        raise DepthLabError(f"measured gain needs nonzero finite stream gradients, got {inner[zero - 1]} "
                            f"at layer {zero}")
    return g
