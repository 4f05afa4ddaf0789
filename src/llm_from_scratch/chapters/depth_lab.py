"""The depth lab: a stack of L decoder blocks at initialisation.

Three wirings of the same four parts of a ``DecoderBlock`` (two RMSNorms,
causal attention, SwiGLU), each a few lines that read like the formula:

* ``pre``  — ``h = x + MHA(N_a(x))``, ``y = h + FFN(N_f(h))``: the
  package's block (LLaMA's order);
* ``post`` — ``h = N_a(x + MHA(x))``, ``y = N_f(h + FFN(h))``: the order
  of the original Transformer, with the same norms;
* ``none`` — ``h = MHA(N_a(x))``, ``y = FFN(N_f(h))``: no residual paths.

Every block comes from ``DecoderBlock.new`` on one ``SplitMix64`` stream, so
the variants share their weights. On top sit a final RMSNorm and a random
vocabulary head; the loss is the mean cross-entropy against random target
tokens, a stand-in for the language-model loss of chapter 32. ``run``
measures, per layer, the RMS of the residual stream and the gradient norm
of each block's parameters.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..attention import MultiHeadAttention
from ..block import DecoderBlock, DecoderBlockConfig
from ..parameter import Parameter
from ..rmsnorm import RmsNorm
from ..rng import SplitMix64, uniform_weight
from ..swiglu import SwiGlu
from ..tensor import Tensor, matmul

VARIANTS = ("pre", "post", "none")
NORMS = ("rms", "layer")
LABELS = {"pre": "Pre-RMSNorm", "post": "Post-RMSNorm",
          "none": "без остаточных путей"}
LAYER_NORM_LABELS = {"pre": "Pre-LN", "post": "Post-LN",
                     "none": "без остаточных путей, LN"}
LAYER_NORM_EPSILON = 1e-5

Step = Callable[[Tensor], Tensor]


@dataclass(frozen=True)
class Parts:
    """The four parts of one block as functions ``[B, T, d] -> [B, T, d]``."""

    attention_norm: Step
    attention: Step
    feed_forward_norm: Step
    feed_forward: Step


# -- three wirings of the same parts -----------------------------------------

def pre_norm(p: Parts, x: Tensor) -> Tensor:
    h = x + p.attention(p.attention_norm(x))
    return h + p.feed_forward(p.feed_forward_norm(h))


def post_norm(p: Parts, x: Tensor) -> Tensor:
    h = p.attention_norm(x + p.attention(x))
    return p.feed_forward_norm(h + p.feed_forward(h))


def no_residual(p: Parts, x: Tensor) -> Tensor:
    h = p.attention(p.attention_norm(x))
    return p.feed_forward(p.feed_forward_norm(h))


STEPS: dict[str, Callable[[Parts, Tensor], Tensor]] = {
    "pre": pre_norm, "post": post_norm, "none": no_residual}


def parts_of(block: DecoderBlock, norm: str = "rms") -> Parts:
    """The block's parts; ``norm="layer"`` centres each row before its RMSNorm.

    LayerNorm with unit gain and zero bias is RMSNorm of the centred row:
    ``(z - mean z) / sqrt(var z + eps)``, and ``var z = mean((z - mean z)^2)``.
    """
    if norm not in NORMS:
        raise ValueError(f"norm must be one of {NORMS}, got {norm!r}")

    def normalise(layer: RmsNorm) -> Step:
        if norm == "rms":
            return layer.forward
        width = layer.feature_width
        centring = Tensor(np.eye(width) - 1.0 / width)   # z @ C = z - mean z
        layer = RmsNorm.from_parameters(layer.gain, epsilon=LAYER_NORM_EPSILON)
        return lambda z: layer.forward(matmul(z, centring))

    return Parts(
        attention_norm=normalise(block.attention_norm),
        attention=lambda z: block.attention.forward(z).output,
        feed_forward_norm=normalise(block.feed_forward_norm),
        feed_forward=lambda z: block.feed_forward.forward(z).output)


# -- the stack ---------------------------------------------------------------

def scaled_block(block: DecoderBlock, factor: float) -> DecoderBlock:
    """The same block with every weight matrix multiplied by ``factor``."""
    def scaled(weight: Parameter) -> Parameter:
        return Parameter(weight.name, factor * weight.value)

    a, f = block.attention, block.feed_forward
    attention = MultiHeadAttention.from_parameters(
        scaled(a.w_q), scaled(a.w_k), scaled(a.w_v), scaled(a.w_o),
        heads=a.heads, max_positions=a.max_positions,
        rope_base=a.rope.rope_base)
    feed_forward = SwiGlu.from_parameters(scaled(f.w_gate), scaled(f.w_up),
                                          scaled(f.w_down))
    return DecoderBlock.from_parts(block.attention_norm, attention,
                                   block.feed_forward_norm, feed_forward)


def build_stack(layers: int, width: int, *, heads: int = 4,
                ffn_width: int | None = None, tokens: int = 8,
                weight_scale: float = 1.0, seed: int = 31
                ) -> list[DecoderBlock]:
    """``layers`` blocks drawn one after another from ``SplitMix64(seed)``."""
    config = DecoderBlockConfig(model_width=width, heads=heads,
                                feed_forward_width=ffn_width or 4 * width,
                                max_positions=tokens)
    rng = SplitMix64(seed)
    blocks = [DecoderBlock.new(f"layer{index}", config, rng)
              for index in range(layers)]
    if weight_scale != 1.0:
        blocks = [scaled_block(block, weight_scale) for block in blocks]
    return blocks


def _uniform(rng: SplitMix64, shape: tuple[int, ...]) -> np.ndarray:
    """Draws uniform on ``[-1, 1)``: a weight with one input row."""
    count = int(np.prod(shape))
    return uniform_weight(rng, 1, count).reshape(shape)


def lab_data(width: int, *, batch: int = 4, tokens: int = 8,
             vocabulary: int = 64, seed: int = 31
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Inputs ``[B, T, d]`` (stand-ins for embeddings) with RMS about 1, a head ``[d, V]``, targets ``[B, T]``."""
    rng = SplitMix64(seed + 1)                  # not the blocks' stream
    x = np.sqrt(3.0) * _uniform(rng, (batch, tokens, width))  # variance 1
    head = uniform_weight(rng, width, vocabulary)
    draws = (_uniform(rng, (batch, tokens)) + 1.0) / 2.0      # [0, 1)
    return x, head, np.floor(draws * vocabulary).astype(np.int64)


def cross_entropy(logits: np.ndarray, targets: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean cross-entropy of ``logits [B, T, V]`` and its gradient w.r.t. the logits."""
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    picked = targets[..., None]
    loss = -float(np.take_along_axis(log_p, picked, axis=-1).mean())
    grad = np.exp(log_p)
    np.put_along_axis(grad, picked, np.take_along_axis(grad, picked, -1) - 1.0, -1)
    return loss, grad / targets.size


@dataclass(frozen=True)
class DepthRun:
    """One stack at initialisation, measured once."""

    variant: str
    norm: str
    width: int
    weight_scale: float
    loss: float
    stream_rms: np.ndarray       # [L + 1]: the input, then after block l
    gradient_norms: np.ndarray   # [L]: ||dLoss/dθ_l|| over all 9 tensors of block l
    tensor_names: tuple[str, ...]  # the 9 names without the "layerN." prefix
    tensor_norms: np.ndarray     # [L, 9]: the same, per tensor

    @property
    def layers(self) -> int:
        return len(self.gradient_norms)

    def tensor_gradient(self, name: str) -> np.ndarray:
        """``[L]``: gradient norms of one tensor, e.g. ``"ffn.down.weight"``."""
        return self.tensor_norms[:, self.tensor_names.index(name)]


def run(layers: int = 24, width: int = 32, variant: str = "pre", *,
        norm: str = "rms", weight_scale: float = 1.0, heads: int = 4,
        ffn_width: int | None = None, batch: int = 4, tokens: int = 8,
        vocabulary: int = 64, seed: int = 31) -> DepthRun:
    """Stack ``layers`` blocks, run forward and backward once, measure.

    ``variant``: one of ``VARIANTS``; ``norm``: ``"rms"`` or ``"layer"``;
    ``weight_scale`` multiplies every weight matrix drawn by
    ``DecoderBlock.new`` (uniform on ``±1/sqrt(fan_in)``, variance
    ``1/(3 fan_in)``; ``sqrt(3)`` gives variance ``1/fan_in``). Equal
    arguments give bitwise equal results: everything is built afresh.
    """
    if variant not in STEPS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    if isinstance(layers, bool) or not isinstance(layers, int) or layers < 1:
        raise ValueError(f"layers must be a positive integer, got {layers!r}")
    blocks = build_stack(layers, width, heads=heads, ffn_width=ffn_width,
                         tokens=tokens, weight_scale=weight_scale, seed=seed)
    x, head, targets = lab_data(width, batch=batch, tokens=tokens,
                                vocabulary=vocabulary, seed=seed)
    final_norm = RmsNorm.new("final_norm.gain", width)
    step = STEPS[variant]

    stream = [Tensor(x)]
    for block in blocks:                          # [B, T, d] -> [B, T, d]
        stream.append(step(parts_of(block, norm), stream[-1]))
    top = final_norm.forward(stream[-1])          # [B, T, d]
    loss, grad_logits = cross_entropy(top.value @ head, targets)
    top.backward(grad_logits @ head.T)            # dLoss/d(top): [B, T, d]

    norms = np.array([[_norm(p.grad) for p in block.parameters()]
                      for block in blocks])
    top.release()
    names = tuple(name.split(".", 1)[1] for name in blocks[0].parameters().names)
    return DepthRun(
        variant=variant, norm=norm, width=width, weight_scale=float(weight_scale),
        loss=loss, stream_rms=np.array([_rms(s.value) for s in stream]),
        gradient_norms=np.sqrt((norms ** 2).sum(axis=1)),
        tensor_names=names, tensor_norms=norms)


def _rms(values: np.ndarray) -> float:
    return float(np.sqrt(np.mean(values ** 2)))


def _norm(grad: np.ndarray | None) -> float:
    return 0.0 if grad is None else float(np.sqrt(np.sum(grad ** 2)))


def label(variant: str, norm: str = "rms") -> str:
    """How tables and figures name a wiring: ``Pre-RMSNorm``, ``Post-LN``, …"""
    return (LABELS if norm == "rms" else LAYER_NORM_LABELS)[variant]


def compare(layers: int = 24, width: int = 32, *,
            variants: tuple[str, ...] = VARIANTS, **options) -> dict[str, DepthRun]:
    """``run`` for every variant, with the same weights and data."""
    return {variant: run(layers, width, variant, **options) for variant in variants}


def top_block_gradient(depths: range = range(1, 25), width: int = 32, *,
                       tensor: str | None = None,
                       variants: tuple[str, ...] = VARIANTS,
                       **options) -> dict[str, np.ndarray]:
    """Per variant, ``[len(depths)]``: the gradient norm of the top block of a
    stack of each depth; with ``tensor`` (e.g. ``"ffn.down.weight"``), of that
    one tensor of the top block."""
    def top(result: DepthRun) -> float:
        if tensor is None:
            return float(result.gradient_norms[-1])
        return float(result.tensor_gradient(tensor)[-1])

    return {variant: np.array([top(run(depth, width, variant, **options))
                               for depth in depths])
            for variant in variants}


def _short(value: float) -> str:
    """Three significant digits, no exponent: ``0.472``, ``0.900``, ``2.99``, ``2363``."""
    return f"{value:.0f}" if value >= 100 else f"{value:#.3g}"


def summary_table(runs: dict[str, DepthRun], layers: tuple[int, ...] = (1, 6, 12, 24)
                  ) -> tuple[list[str], list[list[str]]]:
    """Header and rows for ``markdown_table``: per variant, the stream's RMS
    and the block's gradient norm after the given layers (counted from 1)."""
    header = ["схема", "величина", *(f"слой {layer}" for layer in layers)]
    rows = []
    for variant, result in runs.items():
        rows.append([label(variant, result.norm), "RMS потока",
                     *(f"{result.stream_rms[layer]:.3f}" for layer in layers)])
        rows.append(["", "градиент", *(_short(result.gradient_norms[layer - 1]) for layer in layers)])
    return header, rows


def gradient_table(panels: dict[str, dict[str, DepthRun]],
                   layers: tuple[int, ...] = (1, 6, 12, 24)
                   ) -> tuple[list[str], list[list[str]]]:
    """Header and rows for ``markdown_table``: the block gradient norms after
    the given layers, one row per setting (``panels`` maps a title to runs)."""
    header = ["масштаб весов", "схема", *(f"слой {layer}" for layer in layers)]
    rows = [[title, label(variant, result.norm),
             *(_short(result.gradient_norms[layer - 1]) for layer in layers)]
            for title, runs in panels.items() for variant, result in runs.items()]
    return header, rows
