"""The depth lab: a stack of L decoder blocks at initialisation.

Three wirings of the same four parts of a ``DecoderBlock`` (two RMSNorms,
causal attention, a feed-forward network), each a few lines that read like
the formula:

* ``pre``  — ``x' = x + MHA(N_a(x))``, ``y = x' + FFN(N_f(x'))``: the
  package's block (LLaMA's order);
* ``post`` — ``x' = N_a(x + MHA(x))``, ``y = N_f(x' + FFN(x'))``: the order
  of the original Transformer, with the same norms;
* ``none`` — ``x' = MHA(N_a(x))``, ``y = FFN(N_f(x'))``: no residual paths.

Every block comes from ``DecoderBlock.new`` on one ``SplitMix64`` stream, so
the variants share their weights. On top sit a final RMSNorm and a random
vocabulary head; the loss is the mean cross-entropy against random target
tokens, a stand-in for the language-model loss of chapter 32. ``run``
measures, per layer, the RMS of the residual stream, the gradient norm of the
stream and of each block's parameters.

Two switches isolate the parts: ``ffn="relu"`` replaces SwiGLU by
``ReLU(x W_gate) W_down`` (the same two matrices, ``W_up`` left out), the
network of the original Transformer; ``branches="attention"`` or ``"ffn"``
keeps one sublayer of every block and makes the other the identity.

Bad settings get a ``DepthLabError`` that names the argument, the value and
the allowed range.
"""

from __future__ import annotations

import inspect
import math
import numbers
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace

import numpy as np

from ..attention import MultiHeadAttention
from ..block import DecoderBlock, DecoderBlockConfig
from ..book.training import cross_entropy
from ..checks import is_int
from ..errors import DepthLabError, LlmFromScratchError, chained
from ..parameter import Parameter
from ..rmsnorm import RmsNorm
from ..rng import SplitMix64, uniform_weight
from ..swiglu import SwiGlu
from ..tensor import Tensor, matmul, relu

VARIANTS = ("pre", "post", "none")
NORMS = ("rms", "layer")
FFNS = ("swiglu", "relu")
BRANCHES = ("both", "attention", "ffn")
LABELS = {"pre": "Pre-RMSNorm", "post": "Post-RMSNorm",
          "none": "без остаточных путей"}
LAYER_NORM_LABELS = {"pre": "Pre-LN", "post": "Post-LN",
                     "none": "без остаточных путей, LN"}
LAYER_NORM_EPSILON = 1e-5

# limits that keep a learner's run within seconds and memory
MAX_LAYERS, MAX_WIDTH, MAX_FFN_WIDTH, MAX_HEADS = 256, 512, 2048, 64
MAX_BATCH, MAX_TOKENS, MAX_VOCABULARY = 256, 256, 4096
MAX_WEIGHT_SCALE = 100.0   # beyond it float64 products start to overflow
MAX_SIZE = 2 ** 25         # layers * batch * tokens * (width + ffn_width)
SEEDS = 2 ** 64

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
    x1 = x + p.attention(p.attention_norm(x))          # x'
    return x1 + p.feed_forward(p.feed_forward_norm(x1))


def post_norm(p: Parts, x: Tensor) -> Tensor:
    x1 = p.attention_norm(x + p.attention(x))          # x'
    return p.feed_forward_norm(x1 + p.feed_forward(x1))


def no_residual(p: Parts, x: Tensor) -> Tensor:
    x1 = p.attention(p.attention_norm(x))              # x'
    return p.feed_forward(p.feed_forward_norm(x1))


STEPS: dict[str, Callable[[Parts, Tensor], Tensor]] = {
    "pre": pre_norm, "post": post_norm, "none": no_residual}


# -- the parts ----------------------------------------------------------------

def parts_of(block: DecoderBlock, norm: str = "rms",
             ffn: str = "swiglu") -> Parts:
    """The block's parts; ``norm="layer"`` centres each row before its
    RMSNorm, ``ffn="relu"`` uses ``ReLU(x W_gate) W_down``.

    LayerNorm with unit gain and zero bias is RMSNorm of the centred row:
    ``(z - mean z) / sqrt(var z + eps)``, and ``var z = mean((z - mean z)^2)``.
    """
    check_choice(norm, "norm", NORMS)
    check_choice(ffn, "ffn", FFNS)

    def normalise(layer: RmsNorm) -> Step:
        if norm == "rms":
            return layer.forward
        width = layer.feature_width
        centring = Tensor(np.eye(width) - 1.0 / width)   # z @ C = z - mean z
        layer = RmsNorm(layer.gain, epsilon=LAYER_NORM_EPSILON)
        return lambda z: layer.forward(matmul(z, centring))

    if ffn == "swiglu":
        def feed_forward(z: Tensor) -> Tensor:
            return block.feed_forward.forward(z).output
    else:
        gate, _, down = block.feed_forward.parameters()

        def feed_forward(z: Tensor) -> Tensor:
            return relu(z @ gate) @ down

    return Parts(
        attention_norm=normalise(block.attention_norm),
        attention=lambda z: block.attention.forward(z).output,
        feed_forward_norm=normalise(block.feed_forward_norm),
        feed_forward=feed_forward)


def _identity(z: Tensor) -> Tensor:
    return z


def _nothing(z: Tensor) -> Tensor:
    return Tensor(np.zeros(z.shape))


def keep_branches(p: Parts, branches: str, variant: str) -> Parts:
    """Every block reduced to the sublayer ``branches`` names: the other one
    becomes the identity of the stream (``x + 0`` in Pre and Post, ``x`` in
    the variant without residual paths)."""
    check_choice(branches, "branches", BRANCHES)
    dropped = _identity if variant == "none" else _nothing
    if branches == "attention":
        return replace(p, feed_forward_norm=_identity, feed_forward=dropped)
    if branches == "ffn":
        return replace(p, attention_norm=_identity, attention=dropped)
    return p


# -- the stack ---------------------------------------------------------------

def _scaled(block: DecoderBlock, factor: float,
            config: DecoderBlockConfig) -> DecoderBlock:
    """The same block with every weight matrix multiplied by ``factor``."""
    p = [Parameter(q.name, factor * q.value) if q.ndim == 2 else q
         for q in block.parameters()]
    attention = MultiHeadAttention(
        *p[1:5], heads=config.heads, max_positions=config.max_positions,
        rope_base=config.rope_base)
    feed_forward = SwiGlu(*p[6:9])
    return DecoderBlock(block.attention_norm, attention,
                        block.feed_forward_norm, feed_forward)


def build_stack(layers: int, width: int, *, heads: int = 4,
                ffn_width: int | None = None, tokens: int = 8,
                weight_scale: float = 1.0, seed: int = 31
                ) -> list[DecoderBlock]:
    """``layers`` blocks drawn one after another from ``SplitMix64(seed)``."""
    layers = check_integer(layers, "layers", 1, MAX_LAYERS)
    width = check_integer(width, "width", 1, MAX_WIDTH)
    ffn_width = 4 * width if ffn_width is None else ffn_width
    config = DecoderBlockConfig(
        model_width=width, heads=check_integer(heads, "heads", 1, MAX_HEADS),
        feed_forward_width=check_integer(ffn_width, "ffn_width", 1, MAX_FFN_WIDTH),
        max_positions=check_integer(tokens, "tokens", 1, MAX_TOKENS))
    weight_scale = check_scale(weight_scale)
    rng = SplitMix64(check_integer(seed, "seed", 0, SEEDS - 1))
    with chained(DepthLabError, f"depth lab blocks (width {width}, "
                 f"heads {config.heads})"):
        blocks = [DecoderBlock.new(f"layer{index}", config, rng)
                  for index in range(layers)]
    if weight_scale != 1.0:
        blocks = [_scaled(block, weight_scale, config) for block in blocks]
    return blocks


def _uniform(rng: SplitMix64, shape: tuple[int, ...]) -> np.ndarray:
    """Draws uniform on ``[-1, 1)``."""
    return 2.0 * rng.next_f64(int(np.prod(shape))).reshape(shape) - 1.0


def lab_data(width: int, *, batch: int = 4, tokens: int = 8,
             vocabulary: int = 64, seed: int = 31
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Inputs ``[B, T, d]`` (stand-ins for embeddings) with RMS about 1, a
    head ``[d, V]``, targets ``[B, T]``; from ``SplitMix64(seed + 1)``."""
    width = check_integer(width, "width", 1, MAX_WIDTH)
    batch = check_integer(batch, "batch", 1, MAX_BATCH)
    tokens = check_integer(tokens, "tokens", 1, MAX_TOKENS)
    vocabulary = check_integer(vocabulary, "vocabulary", 2, MAX_VOCABULARY)
    seed = check_integer(seed, "seed", 0, SEEDS - 1)
    rng = SplitMix64((seed + 1) % SEEDS)        # not the blocks' stream
    x = np.sqrt(3.0) * _uniform(rng, (batch, tokens, width))  # variance 1
    head = uniform_weight(rng, width, vocabulary)
    draws = (_uniform(rng, (batch, tokens)) + 1.0) / 2.0      # [0, 1)
    return x, head, np.floor(draws * vocabulary).astype(np.int64)


@dataclass(frozen=True)
class DepthRun:
    """One stack at initialisation, measured once."""

    variant: str
    norm: str
    ffn: str
    branches: str
    width: int
    weight_scale: float
    loss: float
    stream_rms: np.ndarray        # [L + 1]: the input, then after block l
    stream_gradients: np.ndarray  # [L + 1]: ||dLoss/dx_l||, same layers
    gradient_norms: np.ndarray    # [L]: ||dLoss/dθ_l|| over block l's tensors
    tensor_names: tuple[str, ...]  # the 9 names without "layerN."
    tensor_norms: np.ndarray      # [L, 9]: the same, per tensor

    @property
    def layers(self) -> int:
        return len(self.gradient_norms)

    def tensor_gradient(self, name: str) -> np.ndarray:
        """``[L]``: gradient norms of one tensor, e.g. ``"ffn.down.weight"``."""
        check_choice(name, "tensor", self.tensor_names)
        return self.tensor_norms[:, self.tensor_names.index(name)]


def run(layers: int = 24, width: int = 32, variant: str = "pre", *,
        norm: str = "rms", ffn: str = "swiglu", branches: str = "both",
        weight_scale: float = 1.0, heads: int = 4,
        ffn_width: int | None = None, batch: int = 4, tokens: int = 8,
        vocabulary: int = 64, seed: int = 31) -> DepthRun:
    """Stack ``layers`` blocks, run forward and backward once, measure.

    ``variant``: one of ``VARIANTS``; ``norm``: ``"rms"`` or ``"layer"``;
    ``ffn``: ``"swiglu"`` or ``"relu"``; ``branches``: ``"both"``,
    ``"attention"`` or ``"ffn"``; ``weight_scale`` multiplies every weight
    matrix drawn by ``DecoderBlock.new`` (uniform on ``±1/sqrt(fan_in)``,
    variance ``1/(3 fan_in)``; ``sqrt(3)`` gives variance ``1/fan_in``).
    Equal arguments give bitwise equal results: everything is built afresh.
    """
    stack = _Stack(layers, width, variant, norm=norm, ffn=ffn,
                   branches=branches, weight_scale=weight_scale, heads=heads,
                   ffn_width=ffn_width, batch=batch, tokens=tokens,
                   vocabulary=vocabulary, seed=seed)
    with stack.numerics():
        inputs, outputs = stack.forward(layers)
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
        variant=variant, norm=norm, ffn=ffn, branches=branches,
        width=int(width), weight_scale=float(weight_scale), loss=loss,
        stream_rms=np.array([_rms(v) for v in values]),
        stream_gradients=np.array([_norm(g) for g in grads]),
        gradient_norms=np.sqrt((norms ** 2).sum(axis=1)),
        tensor_names=_tensor_names(blocks[0]), tensor_norms=norms)


class _Stack:
    """The blocks, the data and the wiring of one lab setting, checked."""

    def __init__(self, layers: int, width: int, variant: str, *,
                 norm: str, ffn: str, branches: str, weight_scale: float,
                 heads: int, ffn_width: int | None, batch: int, tokens: int,
                 vocabulary: int, seed: int) -> None:
        check_choice(variant, "variant", VARIANTS)
        check_choice(norm, "norm", NORMS)
        check_choice(ffn, "ffn", FFNS)
        check_choice(branches, "branches", BRANCHES)
        _check_size(layers, width, ffn_width, batch, tokens)
        self.blocks = build_stack(layers, width, heads=heads,
                                  ffn_width=ffn_width, tokens=tokens,
                                  weight_scale=weight_scale, seed=seed)
        self.x, self.head, self.targets = lab_data(
            width, batch=batch, tokens=tokens, vocabulary=vocabulary,
            seed=seed)
        self.final_norm = RmsNorm.new("final_norm.gain", width)
        self.parts = [keep_branches(parts_of(block, norm, ffn), branches,
                                    variant) for block in self.blocks]
        self.wire = STEPS[variant]
        self.weight_scale = weight_scale

    def numerics(self):
        return numerics(f"depth lab run (weight_scale {self.weight_scale!r})")

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
        top = self.final_norm.forward(x_top)      # [B, T, d]
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
    check_choice(variant, "variant", VARIANTS)
    check_choice(norm, "norm", NORMS)
    return (LABELS if norm == "rms" else LAYER_NORM_LABELS)[variant]


def compare(layers: int = 24, width: int = 32, *,
            variants: Sequence[str] = VARIANTS,
            **options) -> dict[str, DepthRun]:
    """``run`` for every variant, with the same weights and data."""
    return {variant: run(layers, width, variant, **options)
            for variant in _variants(variants)}


def top_block_gradient(depths: Iterable[int] = range(1, 25),
                       width: int = 32, *, tensor: str | None = None,
                       variants: Sequence[str] = VARIANTS,
                       **options) -> dict[str, np.ndarray]:
    """Per variant, ``[len(depths)]``: the gradient norm of the top block of
    a stack of each depth; with ``tensor`` (e.g. ``"ffn.down.weight"``), of
    that one tensor of the top block.

    A stack of depth ``L`` is the first ``L`` blocks of the deepest one (the
    blocks are drawn one after another), so one forward pass serves every
    depth: at each depth the final RMSNorm and the head sit on that block,
    and the gradient goes back through it alone. The numbers are those of
    ``run(L, ...)`` bit for bit (a test checks it).
    """
    depths = _depths(depths)
    if tensor is not None and not isinstance(tensor, str):
        raise DepthLabError("depth lab tensor must be a name such as "
                            f"'ffn.down.weight', got {tensor!r}")
    settings = {name: p.default for name, p in
                inspect.signature(run).parameters.items()
                if p.kind is inspect.Parameter.KEYWORD_ONLY}
    unknown = sorted(set(options) - set(settings))
    if unknown:
        raise DepthLabError(f"depth lab option {unknown[0]!r} is unknown; "
                            f"known: {', '.join(settings)}")
    settings.update(options)

    def tops(variant: str) -> np.ndarray:
        stack = _Stack(max(depths), width, variant, **settings)
        names = _tensor_names(stack.blocks[0])
        if tensor is not None:
            check_choice(tensor, "tensor", names)
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
                    else norms[names.index(tensor)])
        return np.array([values[depth] for depth in depths])

    return {variant: tops(variant) for variant in _variants(variants)}


# -- tables for the notebook ----------------------------------------------------

def short(value: float) -> str:
    """Three significant digits, no exponent: ``0.472``, ``2.99``, ``2363``."""
    return f"{value:.0f}" if value >= 100 else f"{value:#.3g}"


def summary_table(runs: dict[str, DepthRun],
                  layers: Sequence[int] = (1, 6, 12, 24), *,
                  title: str = "") -> tuple[list[str], list[list[str]]]:
    """Header and rows for ``markdown_table``: per variant, the stream's RMS
    and the block's gradient norm after the given layers (counted from 1);
    ``title`` fills a first column (e.g. the weight scale)."""
    first = ["масштаб весов"] if title else []
    header = [*first, "схема", "величина",
              *(f"слой {layer}" for layer in layers)]
    rows = []
    for variant, result in runs.items():
        picked = _table_layers(layers, result.layers)
        lead = [title] if title else []
        rows.append([*lead, label(variant, result.norm), "RMS потока",
                     *(f"{result.stream_rms[k]:.3f}" for k in picked)])
        rows.append([*([""] if title else []), "", "градиент",
                     *(short(result.gradient_norms[k - 1]) for k in picked)])
    return header, rows


def gradient_table(panels: dict[str, dict[str, DepthRun]],
                   layers: Sequence[int] = (1, 6, 12, 24)
                   ) -> tuple[list[str], list[list[str]]]:
    """Header and rows for ``markdown_table``: the block gradient norms after
    the given layers, one row per setting (``panels`` maps a title to runs)."""
    header = ["масштаб весов", "схема", *(f"слой {layer}" for layer in layers)]
    rows = []
    for title, runs in panels.items():
        for variant, result in runs.items():
            picked = _table_layers(layers, result.layers)
            rows.append([title, label(variant, result.norm),
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


def check_integer(value: object, name: str, low: int, high: int) -> int:
    """``value`` as an ``int`` in ``[low, high]`` (any integer type)."""
    if not is_int(value) or not low <= value <= high:
        raise DepthLabError(f"depth lab {name} must be an integer in "
                            f"[{low}, {high}], got {value!r}")
    return int(value)


def check_choice(value: object, name: str, options: Sequence[str]) -> str:
    if not isinstance(value, str) or value not in options:
        allowed = ", ".join(repr(option) for option in options)
        raise DepthLabError(f"depth lab {name} must be one of {allowed}, "
                            f"got {value!r}")
    return value


def check_scale(value: object) -> float:
    """A finite weight scale in ``(0, MAX_WEIGHT_SCALE]``."""
    ok = isinstance(value, numbers.Real) and not isinstance(
        value, (bool, np.bool_))
    try:
        ok = ok and math.isfinite(value) and 0 < value <= MAX_WEIGHT_SCALE
    except OverflowError:     # an integer too large for a float
        ok = False
    if not ok:
        raise DepthLabError(f"depth lab weight_scale must be a finite number "
                            f"in (0, {MAX_WEIGHT_SCALE:g}], got {value!r}")
    return float(value)


def _check_size(layers: object, width: object, ffn_width: object,
                batch: object, tokens: object) -> None:
    """Each size in its range, and all of them together within ``MAX_SIZE``."""
    layers = check_integer(layers, "layers", 1, MAX_LAYERS)
    width = check_integer(width, "width", 1, MAX_WIDTH)
    hidden = 4 * width if ffn_width is None else check_integer(
        ffn_width, "ffn_width", 1, MAX_FFN_WIDTH)
    batch = check_integer(batch, "batch", 1, MAX_BATCH)
    tokens = check_integer(tokens, "tokens", 1, MAX_TOKENS)
    size = layers * batch * tokens * (width + hidden)
    if size > MAX_SIZE:
        raise DepthLabError(
            f"depth lab size layers * batch * tokens * (width + ffn_width) "
            f"must be at most {MAX_SIZE}, got {layers} * {batch} * {tokens} "
            f"* ({width} + {hidden}) = {size}")


def _variants(variants: object) -> tuple[str, ...]:
    if isinstance(variants, str) or not isinstance(variants, Sequence) \
            or not variants:
        raise DepthLabError("depth lab variants must be a non-empty tuple "
                            f"of {VARIANTS}, got {variants!r}")
    return tuple(check_choice(v, "variant", VARIANTS) for v in variants)


def _depths(depths: object) -> list[int]:
    if isinstance(depths, (str, bytes)) or not isinstance(depths, Iterable):
        raise DepthLabError("depth lab depths must be a sequence of "
                            f"integers, got {depths!r}")
    picked = [check_integer(depth, "depth", 1, MAX_LAYERS) for depth in depths]
    if not picked:
        raise DepthLabError("depth lab depths must name at least one depth")
    return picked


def _table_layers(layers: object, depth: int) -> list[int]:
    """Layers counted from 1 up to the stack's depth: no negative wrap."""
    if isinstance(layers, (str, bytes)) or not isinstance(layers, Iterable):
        raise DepthLabError("depth lab table layers must be a sequence of "
                            f"integers, got {layers!r}")
    return [check_integer(layer, "table layer", 1, depth) for layer in layers]
