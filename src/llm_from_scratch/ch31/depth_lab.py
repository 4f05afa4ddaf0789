"""The depth lab: a stack of L decoder blocks at initialisation.

Three wirings of the same four parts of a ``DecoderBlock`` (two RMSNorms,
causal attention, a feed-forward network), each a few lines that read like
the formula:

* ``pre``  — ``x' = x + MHA(N_a(x))``, ``y = x' + FFN(N_f(x'))``: the
  package's block (LLaMA's order);
* ``post`` — ``x' = N_a(x + MHA(x))``, ``y = N_f(x' + FFN(x'))``: the order
  of the original Transformer, with the same norms;
* ``none`` — ``x' = MHA(N_a(x))``, ``y = FFN(N_f(x'))``: no residual
  connections.

Every block comes from ``DecoderBlock.new`` on one ``SplitMix64`` stream, so
the variants share their weights. On top sit a final RMSNorm and a random
vocabulary head; the loss is the mean cross-entropy against random target
tokens, a stand-in for the language-model loss of chapter 32. ``run``
measures, per layer, the RMS of the residual stream, the gradient norm of the
stream and of each block's parameters.

Two switches isolate the parts: ``ffn="relu"`` replaces SwiGLU by
``ReLU(x W_gate) W_down`` (the same two matrices, ``W_up`` left out), the
network of the original Transformer; ``branches="attention"`` or ``"ffn"``
keeps one sublayer of every block and makes the other the identity. Two more
bring the stack closer to Xiong et al. (2020): ``init="xavier"`` rescales
every matrix ``[n_in, n_out]`` drawn on ``±1/sqrt(n_in)`` to Xavier's
``±sqrt(6 / (n_in + n_out))`` (the same draws), and ``final_norm=False``
puts the head straight on the last block, as in a Post-LN Transformer,
whose last sublayer already ends with a norm.

A lab's settings are one ``Settings``, checked where it is made: a bad one
gets a ``DepthLabError`` that names the setting, the value and the allowed
range, and so does a lab too large for memory, before anything is built.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np

from ..attention import MultiHeadAttention
from ..block import DecoderBlock, DecoderBlockConfig
from ..book.settings import Check, changed, choice, flag, integer
from ..book.training import cross_entropy
from ..checks import shown
from ..errors import DepthLabError, LlmFromScratchError, chained
from ..parameter import Parameter
from ..rmsnorm import RmsNorm
from ..rng import SplitMix64, uniform_weight
from ..swiglu import SwiGlu
from ..tensor import Tensor, matmul, relu
from ..text import texts

TEXT = texts("labs31")
VARIANTS = ("pre", "post", "none")
NORMS = ("rms", "layer")
FFNS = ("swiglu", "relu")
BRANCHES = ("both", "attention", "ffn")
INITS = ("package", "xavier")
LABELS = {variant: TEXT[f"label.{variant}"] for variant in VARIANTS}
LAYER_NORM_LABELS = {variant: TEXT[f"label.layer.{variant}"]
                     for variant in VARIANTS}
LAYER_NORM_EPSILON = 1e-5
TENSORS = ("attention_norm.gain", "attention.query.weight",   # of a block,
           "attention.key.weight", "attention.value.weight",  # in order
           "attention.output.weight", "ffn_norm.gain", "ffn.gate.weight",
           "ffn.up.weight", "ffn.down.weight")

# limits that keep a learner's run within seconds and memory
MAX_LAYERS, MAX_WIDTH, MAX_FFN_WIDTH, MAX_HEADS = 256, 512, 2048, 64
MAX_BATCH, MAX_TOKENS, MAX_VOCABULARY = 256, 256, 4096
MAX_WEIGHT_SCALE = 100.0   # beyond it float64 products start to overflow
MAX_VALUES = 2 ** 25       # float64 values held at once: 256 MiB
SEEDS = 2 ** 64

Step = Callable[[Tensor], Tensor]


@dataclass(frozen=True)
class Settings:
    """One setting of the lab: the stack, its wiring and its data."""

    LAB: ClassVar[str] = "depth lab"
    ERROR: ClassVar[type] = DepthLabError

    layers: int = 24
    width: int = 32                 # d
    variant: str = "pre"            # one of VARIANTS
    norm: str = "rms"               # "layer": centre each row first
    ffn: str = "swiglu"             # "relu": ReLU(x W_gate) W_down
    branches: str = "both"          # or keep "attention" or "ffn" only
    weight_scale: float = 1.0       # multiplies every weight matrix
    init: str = "package"           # "xavier": ±sqrt(6 / (n_in + n_out))
    final_norm: bool = True         # False: the head reads the last block
    heads: int = 4
    ffn_width: int | None = None    # None: 4 * width
    batch: int = 4
    tokens: int = 8
    vocabulary: int = 64
    seed: int = 31                  # blocks; the data from seed + 1

    def __post_init__(self) -> None:
        check = Check(self)
        check.integer("layers", 1, MAX_LAYERS)
        check.integer("width", 1, MAX_WIDTH)
        for name, options in (("variant", VARIANTS), ("norm", NORMS),
                              ("ffn", FFNS), ("branches", BRANCHES),
                              ("init", INITS)):
            check.choice(name, options)
        check.number("weight_scale", 0, MAX_WEIGHT_SCALE)
        object.__setattr__(self, "final_norm", flag(
            self.final_norm, f"{self.LAB} final_norm", DepthLabError))
        check.integer("heads", 1, MAX_HEADS)
        if self.width % self.heads or self.width // self.heads % 2:
            raise DepthLabError(
                f"depth lab heads must split width {self.width} into "
                f"heads of even width (RoPE turns pairs), got {self.heads}")
        if self.ffn_width is not None:
            check.integer("ffn_width", 1, MAX_FFN_WIDTH)
        check.integer("batch", 1, MAX_BATCH)
        check.integer("tokens", 1, MAX_TOKENS)
        check.integer("vocabulary", 2, MAX_VOCABULARY)
        check.integer("seed", 0, SEEDS - 1)
        check.size(3 * self.weights + self.activations, MAX_VALUES,
                   "weights, their gradients and the activations of both "
                   "passes")

    @property
    def hidden(self) -> int:
        """``d_ff``: the feed-forward width."""
        return 4 * self.width if self.ffn_width is None else self.ffn_width

    @property
    def weights(self) -> int:
        """The blocks' weights, the final gain and the head ``[d, V]``."""
        d, f = self.width, self.hidden
        block = 2 * d + 4 * d * d + 3 * d * f
        return self.layers * block + d + d * self.vocabulary

    @property
    def activations(self) -> int:
        """An upper estimate of what the tape holds at once, forward values
        and their gradients (measured with ``tracemalloc``): per block as
        much as 24 arrays ``[B, T, d]``, 6 ``[B, T, d_ff]`` and 4 ``[B, h, T,
        T]``; on top 4 ``[B, T, V]``."""
        b, t = self.batch, self.tokens
        block = b * t * (24 * self.width + 6 * self.hidden
                         + 4 * self.heads * t)
        return self.layers * block + 4 * b * t * self.vocabulary

    def block_config(self) -> DecoderBlockConfig:
        return DecoderBlockConfig(
            model_width=self.width, heads=self.heads,
            feed_forward_width=self.hidden, max_positions=self.tokens)


@dataclass(frozen=True)
class Parts:
    """The four parts of one block as functions ``[B, T, d] -> [B, T, d]``."""

    attention_norm: Step
    attention: Step
    feed_forward_norm: Step
    feed_forward: Step


# -- three wirings of the same parts -----------------------------------------

def pre_norm(p: Parts, x: Tensor) -> Tensor:
    _wired(p, x, "pre")
    x1 = x + p.attention(p.attention_norm(x))          # x'
    return x1 + p.feed_forward(p.feed_forward_norm(x1))


def post_norm(p: Parts, x: Tensor) -> Tensor:
    _wired(p, x, "post")
    x1 = p.attention_norm(x + p.attention(x))          # x'
    return p.feed_forward_norm(x1 + p.feed_forward(x1))


def no_residual(p: Parts, x: Tensor) -> Tensor:
    _wired(p, x, "none")
    x1 = p.attention(p.attention_norm(x))              # x'
    return p.feed_forward(p.feed_forward_norm(x1))


def _wired(p: object, x: object, variant: str) -> None:
    """A wiring's arguments: ``Parts`` and a ``Tensor [B, T, d]``."""
    if not isinstance(p, Parts):
        raise DepthLabError(f"depth lab {variant} wiring parts must be "
                            f"Parts, got {type(p).__name__}")
    if not isinstance(x, Tensor) or x.ndim != 3:
        got = (f"Tensor of shape {list(x.shape)}" if isinstance(x, Tensor)
               else type(x).__name__)
        raise DepthLabError(f"depth lab {variant} wiring input must be a "
                            f"Tensor [B, T, d], got {got}")


STEPS: dict[str, Callable[[Parts, Tensor], Tensor]] = {
    "pre": pre_norm, "post": post_norm, "none": no_residual}


# -- the parts ----------------------------------------------------------------

def parts_of(block: DecoderBlock, norm: str = "rms",
             ffn: str = "swiglu") -> Parts:
    """The block's parts; ``norm="layer"`` centres each row before its
    RMSNorm, ``ffn="relu"`` uses ``ReLU(x W_gate) W_down``. Attention and
    SwiGLU are one tape step each (their ``output``: the numbers of
    ``forward(z).output``, bit for bit, without the stages' 24 steps).

    LayerNorm with unit gain and zero bias is RMSNorm of the centred row:
    ``(z - mean z) / sqrt(var z + eps)``, and ``var z = mean((z - mean z)^2)``.
    """
    if not isinstance(block, DecoderBlock):
        raise DepthLabError("depth lab block must be a DecoderBlock, "
                            f"got {type(block).__name__}")
    choice(norm, "depth lab norm", NORMS, DepthLabError)
    choice(ffn, "depth lab ffn", FFNS, DepthLabError)

    def normalise(layer: RmsNorm) -> Step:
        if norm == "rms":
            return layer.forward
        width = layer.feature_width
        centring = Tensor(np.eye(width) - 1.0 / width)   # z @ C = z - mean z
        layer = RmsNorm(layer.gain, epsilon=LAYER_NORM_EPSILON)
        return lambda z: layer.forward(matmul(z, centring))

    if ffn == "swiglu":
        def feed_forward(z: Tensor) -> Tensor:
            return block.feed_forward.output(z)   # forward(z).output
    else:
        gate, _, down = block.feed_forward.parameters()

        def feed_forward(z: Tensor) -> Tensor:
            return relu(z @ gate) @ down

    return Parts(
        attention_norm=normalise(block.attention_norm),
        attention=block.attention.output,   # forward(z).output
        feed_forward_norm=normalise(block.feed_forward_norm),
        feed_forward=feed_forward)


def _identity(z: Tensor) -> Tensor:
    return z


def _nothing(z: Tensor) -> Tensor:
    return Tensor(np.zeros(z.shape))


def keep_branches(p: Parts, branches: str, variant: str) -> Parts:
    """Every block reduced to the sublayer ``branches`` names: the other one
    becomes the identity of the stream (``x + 0`` in Pre and Post, ``x`` in
    the variant without residual connections)."""
    if not isinstance(p, Parts):
        raise DepthLabError(f"depth lab parts must be Parts, got {type(p).__name__}")
    choice(branches, "depth lab branches", BRANCHES, DepthLabError)
    choice(variant, "depth lab variant", VARIANTS, DepthLabError)
    dropped = _identity if variant == "none" else _nothing
    if branches == "attention":
        return replace(p, feed_forward_norm=_identity, feed_forward=dropped)
    if branches == "ffn":
        return replace(p, attention_norm=_identity, attention=dropped)
    return p


# -- the stack ---------------------------------------------------------------

def _factor(shape: tuple[int, ...], settings: Settings) -> float:
    """What a matrix ``[n_in, n_out]`` drawn on ``±1/sqrt(n_in)`` is
    multiplied by: ``weight_scale``, times ``sqrt(6 n_in / (n_in + n_out))``
    under ``init="xavier"`` (Xavier's bound ``sqrt(6 / (n_in + n_out))``)."""
    n_in, n_out = shape
    xavier = math.sqrt(6.0 * n_in / (n_in + n_out))
    return settings.weight_scale * (xavier if settings.init == "xavier"
                                    else 1.0)


def _scaled(block: DecoderBlock, settings: Settings,
            config: DecoderBlockConfig) -> DecoderBlock:
    """The same block with every weight matrix multiplied by its factor."""
    p = [Parameter(q.name, _factor(q.shape, settings) * q.value)
         if q.ndim == 2 else q for q in block.parameters()]
    attention = MultiHeadAttention(
        *p[1:5], heads=config.heads, max_positions=config.max_positions,
        rope_base=config.rope_base)
    feed_forward = SwiGlu(*p[6:9])
    return DecoderBlock(block.attention_norm, attention,
                        block.feed_forward_norm, feed_forward)


def build_stack(settings: Settings | None = None,
                **changes: object) -> list[DecoderBlock]:
    """``layers`` blocks drawn one after another from ``SplitMix64(seed)``."""
    settings = changed(Settings, settings, changes)
    config, rng = settings.block_config(), SplitMix64(settings.seed)
    with chained(DepthLabError, f"depth lab blocks (width {config.model_width}"
                 f", heads {config.heads})"):
        blocks = [DecoderBlock.new(f"layer{index}", config, rng)
                  for index in range(settings.layers)]
    if settings.weight_scale != 1.0 or settings.init != "package":
        blocks = [_scaled(block, settings, config) for block in blocks]
    return blocks


def _uniform(rng: SplitMix64, shape: tuple[int, ...]) -> np.ndarray:
    """Draws uniform on ``[-1, 1)``."""
    return 2.0 * rng.next_f64(int(np.prod(shape))).reshape(shape) - 1.0


def lab_data(settings: Settings | None = None, **changes: object
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Inputs ``[B, T, d]`` (stand-ins for embeddings) with RMS about 1, a
    head ``[d, V]``, targets ``[B, T]``; from ``SplitMix64(seed + 1)``."""
    s = changed(Settings, settings, changes)
    rng = SplitMix64((s.seed + 1) % SEEDS)      # not the blocks' stream
    x = np.sqrt(3.0) * _uniform(rng, (s.batch, s.tokens, s.width))  # var 1
    head = uniform_weight(rng, s.width, s.vocabulary)
    draws = (_uniform(rng, (s.batch, s.tokens)) + 1.0) / 2.0      # [0, 1)
    return x, head, np.floor(draws * s.vocabulary).astype(np.int64)


@dataclass(frozen=True)
class DepthRun:
    """One stack at initialisation, measured once."""

    settings: Settings
    loss: float
    stream_rms: np.ndarray        # [L + 1]: the input, then after block l
    stream_gradients: np.ndarray  # [L + 1]: ||dLoss/dx_l||, same layers
    gradient_norms: np.ndarray    # [L]: ||dLoss/dθ_l|| over block l's tensors
    tensor_names: tuple[str, ...]  # the 9 names without "layerN." (TENSORS)
    tensor_norms: np.ndarray      # [L, 9]: the same, per tensor

    @property
    def layers(self) -> int:
        return len(self.gradient_norms)

    def tensor_gradient(self, name: str) -> np.ndarray:
        """``[L]``: gradient norms of one tensor, e.g. ``"ffn.down.weight"``."""
        choice(name, "depth lab tensor", self.tensor_names, DepthLabError)
        return self.tensor_norms[:, self.tensor_names.index(name)]


def run(settings: Settings | None = None, **changes: object) -> DepthRun:
    """Stack ``layers`` blocks, run forward and backward once, measure.

    ``settings`` (default ``Settings()``) with ``changes`` made, e.g.
    ``run(variant="post", weight_scale=3 ** 0.5)``. ``weight_scale``
    multiplies every weight matrix drawn by ``DecoderBlock.new`` (uniform on
    ``±1/sqrt(fan_in)``, variance ``1/(3 fan_in)``; ``sqrt(3)`` gives
    variance ``1/fan_in``). Equal settings give bitwise equal results:
    everything is built afresh.
    """
    settings = changed(Settings, settings, changes)
    stack = _Stack(settings)
    with stack.numerics():
        inputs, outputs = stack.forward(settings.layers)
        x_top, loss = stack.top_backward(outputs[-1])
        upstream = x_top.grad
        for x_l, y in zip(reversed(inputs), reversed(outputs), strict=True):
            y.backward(upstream)                  # one block, top down
            upstream = x_l.grad
    blocks = stack.blocks
    norms = np.array([[_norm(p.grad) for p in block.parameters()]
                      for block in blocks])
    values = [x_l.value for x_l in inputs] + [x_top.value]
    grads = [x_l.grad for x_l in inputs] + [x_top.grad]
    return DepthRun(
        settings=settings, loss=loss,
        stream_rms=np.array([_rms(v) for v in values]),
        stream_gradients=np.array([_norm(g) for g in grads]),
        gradient_norms=np.sqrt((norms ** 2).sum(axis=1)),
        tensor_names=_tensor_names(blocks[0]), tensor_norms=norms)


class _Stack:
    """The blocks, the data and the wiring of one lab setting."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.blocks = build_stack(settings)
        self.x, self.head, self.targets = lab_data(settings)
        self.final_norm = RmsNorm.new("final_norm.gain", settings.width)
        self.parts = [keep_branches(parts_of(block, settings.norm,
                                             settings.ffn),
                                    settings.branches, settings.variant)
                      for block in self.blocks]
        self.wire = STEPS[settings.variant]

    def numerics(self):
        return numerics("depth lab run (weight_scale "
                        f"{shown(self.settings.weight_scale)})")

    def forward(self, layers: int) -> tuple[list[Tensor], list[Tensor]]:
        """Each block on a leaf of its own: ``x_l`` (its grad is
        ``dLoss/dx_l``) and the block's output ``[B, T, d]``."""
        inputs, outputs, stream = [], [], self.x
        for parts in self.parts[:layers]:         # [B, T, d] -> [B, T, d]
            x_l = Tensor(stream, requires_grad=True)
            outputs.append(self.wire(parts, x_l))
            inputs.append(x_l)
            stream = outputs[-1].value
        return inputs, outputs

    def top_backward(self, output: Tensor) -> tuple[Tensor, float]:
        """The final RMSNorm, the head and the loss on ``output``; the
        gradient sent back to a leaf holding it, and the loss."""
        x_top = Tensor(output.value, requires_grad=True)
        top = (self.final_norm.forward(x_top)     # [B, T, d]
               if self.settings.final_norm else x_top)
        loss, grad_logits = cross_entropy(top.value @ self.head,
                                          self.targets)
        top.backward(grad_logits @ self.head.T)   # dLoss/d(top): [B, T, d]
        return x_top, loss


def _tensor_names(block: DecoderBlock) -> tuple[str, ...]:
    """The block's 9 tensor names without ``layerN.``."""
    return tuple(name.split(".", 1)[1] for name in block.parameters().names)


def _rms(values: np.ndarray) -> float:
    return float(np.sqrt(np.mean(values ** 2)))


def _norm(grad: np.ndarray | None) -> float:
    return 0.0 if grad is None else float(np.sqrt(np.sum(grad ** 2)))


def label(variant: str, norm: str = "rms") -> str:
    """How tables and figures name a wiring: ``Pre-RMSNorm``, ``Post-LN``, …"""
    choice(variant, "depth lab variant", VARIANTS, DepthLabError)
    choice(norm, "depth lab norm", NORMS, DepthLabError)
    return (LABELS if norm == "rms" else LAYER_NORM_LABELS)[variant]


def compare(settings: Settings | None = None, *,
            variants: Sequence[str] = VARIANTS,
            **changes: object) -> dict[str, DepthRun]:
    """``run`` for every variant, with the same weights and data."""
    _not_among(changes, "variant", "variants")
    settings = changed(Settings, settings, changes)
    return {variant: run(settings, variant=variant)
            for variant in _variants(variants)}


def top_block_gradient(depths: Iterable[int] = range(1, 25),
                       settings: Settings | None = None, *,
                       tensor: str | None = None,
                       variants: Sequence[str] = VARIANTS,
                       **changes: object) -> dict[str, np.ndarray]:
    """Per variant, ``[len(depths)]``: the gradient norm of the top block of
    a stack of each depth; with ``tensor`` (e.g. ``"ffn.down.weight"``), of
    that one tensor of the top block.

    A stack of depth ``L`` is the first ``L`` blocks of the deepest one (the
    blocks are drawn one after another), so one forward pass serves every
    depth: at each depth the final RMSNorm and the head sit on that block,
    and the gradient goes back through it alone. The numbers are those of
    ``run(layers=L, ...)`` bit for bit (a test checks it).
    """
    depths = _depths(depths)
    if tensor is not None:
        choice(tensor, "depth lab tensor", TENSORS, DepthLabError)
    _not_among(changes, "layers", "depths")
    _not_among(changes, "variant", "variants")
    settings = changed(Settings, settings, {**changes, "layers": max(depths)})
    variants = _variants(variants)

    def tops(variant: str) -> np.ndarray:
        stack = _Stack(replace(settings, variant=variant))
        with stack.numerics():
            _, outputs = stack.forward(max(depths))
            values = {}
            for depth in sorted(set(depths)):     # the top block only
                x_top, _ = stack.top_backward(outputs[depth - 1])
                outputs[depth - 1].backward(x_top.grad)
                norms = np.array([_norm(p.grad) for p in
                                  stack.blocks[depth - 1].parameters()])
                values[depth] = float(
                    np.sqrt((norms ** 2).sum()) if tensor is None
                    else norms[TENSORS.index(tensor)])
        return np.array([values[depth] for depth in depths])

    return {variant: tops(variant) for variant in variants}


# -- tables for the notebook ----------------------------------------------------

def short(value: float) -> str:
    """Three significant digits, no exponent: ``0.472``, ``2.99``, ``2363``."""
    try:
        finite = isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)
    except OverflowError:               # an integer beyond the float range
        finite = False
    if not finite:
        raise DepthLabError(f"depth lab short needs a finite number, got {shown(value)}")
    value = float(value)                # a Fraction or a Decimal formats as a float does
    return f"{value:.0f}" if value >= 100 else f"{value:#.3g}"


def summary_table(runs: Mapping[str, DepthRun],
                  layers: Sequence[int] = (1, 6, 12, 24), *,
                  title: str = "") -> tuple[list[str], list[list[str]]]:
    """Header and rows for ``markdown_table``: per variant, the stream's RMS
    and the block's gradient norm after the given layers (counted from 1);
    ``title`` fills a first column (e.g. the weight scale)."""
    picked = _table_layers(layers, _runs(runs))
    if not isinstance(title, str):
        raise DepthLabError(f"depth lab table title must be a string, got {shown(title)}")
    first = [TEXT["depth.scale"]] if title else []
    header = [*first, TEXT["depth.wiring"], TEXT["depth.quantity"],
              *(TEXT["depth.layer"].format(layer=layer) for layer in picked)]
    rows = []
    for variant, result in runs.items():
        lead = [title] if title else []
        rows.append([*lead, label(variant, result.settings.norm),
                     TEXT["depth.stream_rms"],
                     *(f"{result.stream_rms[k]:.3f}" for k in picked)])
        rows.append([*([""] if title else []), "", TEXT["depth.gradient"],
                     *(short(result.gradient_norms[k - 1]) for k in picked)])
    return header, rows


def gradient_table(panels: Mapping[str, Mapping[str, DepthRun]],
                   layers: Sequence[int] = (1, 6, 12, 24)
                   ) -> tuple[list[str], list[list[str]]]:
    """Header and rows for ``markdown_table``: the block gradient norms after
    the given layers, one row per setting (``panels`` maps a title to runs)."""
    if not isinstance(panels, Mapping) or not panels:
        raise DepthLabError("depth lab panels must map titles to runs, "
                            f"got {shown(panels)}")
    picked = _table_layers(layers, min(_runs(runs) for runs in panels.values()))
    header = [TEXT["depth.scale"], TEXT["depth.wiring"],
              *(TEXT["depth.layer"].format(layer=layer) for layer in picked)]
    rows = []
    for title, runs in panels.items():
        for variant, result in runs.items():
            rows.append([title, label(variant, result.settings.norm),
                         *(short(result.gradient_norms[k - 1])
                           for k in picked)])
    return header, rows


# -- checks -------------------------------------------------------------------

@contextmanager
def numerics(stage: str) -> Iterator[None]:
    """Overflow or NaN inside ``stage`` becomes a ``DepthLabError`` (never a
    NumPy warning), and so does a typed error of a layer."""
    try:
        with np.errstate(over="raise", invalid="raise", divide="raise"):
            yield
    except FloatingPointError as error:
        raise DepthLabError(f"{stage}: the float64 values overflowed "
                            f"({error})") from error
    except LlmFromScratchError as error:
        if isinstance(error, DepthLabError):
            raise
        raise DepthLabError(f"{stage}: {error}") from error


def _not_among(changes: Mapping[str, object], name: str, instead: str) -> None:
    if name in changes:
        raise DepthLabError(f"depth lab {name} is set by {instead} here, "
                            f"got {name}={shown(changes[name])}")


def _runs(runs: object) -> int:
    """A non-empty mapping of variants to ``DepthRun``; its fewest layers."""
    if not isinstance(runs, Mapping) or not runs or not all(
            isinstance(result, DepthRun) for result in runs.values()):
        raise DepthLabError("depth lab runs must map variants to DepthRun, "
                            f"got {shown(runs)}")
    return min(result.layers for result in runs.values())


def _variants(variants: object) -> tuple[str, ...]:
    if isinstance(variants, str) or not isinstance(variants, Sequence) \
            or not variants:
        raise DepthLabError("depth lab variants must be a non-empty tuple "
                            f"of {VARIANTS}, got {shown(variants)}")
    return tuple(choice(v, "depth lab variant", VARIANTS, DepthLabError)
                 for v in variants)


def _depths(depths: object) -> list[int]:
    if isinstance(depths, (str, bytes)) or not isinstance(depths, Iterable):
        raise DepthLabError("depth lab depths must be a sequence of "
                            f"integers, got {shown(depths)}")
    picked = [integer(depth, "depth lab depth", 1, MAX_LAYERS, DepthLabError)
              for depth in depths]
    if not picked:
        raise DepthLabError("depth lab depths must name at least one depth")
    return picked


def _table_layers(layers: object, depth: int) -> list[int]:
    """Layers counted from 1 up to the stack's depth: no negative wrap."""
    if isinstance(layers, (str, bytes)) or not isinstance(layers, Iterable):
        raise DepthLabError("depth lab table layers must be a sequence of "
                            f"integers, got {shown(layers)}")
    return [integer(layer, "depth lab table layer", 1, depth, DepthLabError)
            for layer in layers]
