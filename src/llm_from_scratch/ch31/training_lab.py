"""The depth lab's stacks trained: Pre against Post, with and without warm-up.

The task needs the context. Every sequence repeats its first ``period``
tokens, ``a b c a b c a b c …`` (``a, b, c`` uniform on ``V`` tokens), and the
model predicts each next token. The next token is independent of the current
one, so a model that ignores the context cannot beat ``ln V``; a model that
reads the token ``period - 1`` places back predicts every target except the
first ``period - 1`` of a sequence, which have not appeared yet:
``(period - 1) / T * ln V`` (``best_loss``). The blocks come from
``SplitMix64(seed)``, embeddings and head from ``seed + 1``, the training
batches from ``seed + 2`` and a probe batch from ``seed + 3``.

The model: token embeddings ``[V, d]`` (uniform, RMS 1), ``L`` blocks of the
depth lab (``depth_lab.build_stack``) in one of its wirings, a final RMSNorm
and a head ``[d, V]``; ``Adam`` trains all of it. A run's settings are one
``Settings``, checked where it is made: a bad one gets a ``DepthLabError``
naming the setting, the value and the allowed range, and so does a run too
large for memory (weights, Adam's moments and activations), before anything
is built.

Only early readings are reproducible. Two runs that differ only in the order
of a float sum (another BLAS kernel, or the rows of a batch permuted) agree
to the last bits for a while and then part: on seed 31 after about 44 steps
(Post at ``lr=0.03``, which stalls either way), 135 (Post with warm-up) and
166 (Pre). So the chapter reads a run by when it first gets below a level
and by coarse verdicts, and trains 120 steps by default.
"""

from __future__ import annotations

import functools
import math
import multiprocessing
import numbers
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import threadpoolctl

from ..block import DecoderBlock
from ..book.optim import Adam
from ..book.settings import Check, changed, choice, flag, integer, number
from ..book.training import TrainingRun, train
from ..checks import shown
from ..errors import DepthLabError, chained
from ..parameter import Parameter, ParameterList
from ..rmsnorm import RmsNorm
from ..rng import GAMMA, MASK, SplitMix64, uniform_weight
from ..tensor import Tensor
from . import depth_lab
from .depth_lab import TEXT

MAX_TRAIN_LAYERS, MAX_STEPS, MAX_WARMUP = 64, 20_000, 20_000
MAX_LEARNING_RATE = 1.0
MAX_SEEDS_AT_ONCE = 1_000
MAX_VALUES = depth_lab.MAX_VALUES
STEPS = 120                   # the default length of a run
LAB = "training lab"

Batches = Callable[[int], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class Settings:
    """One training run: the model, the optimiser and the task."""

    LAB: ClassVar[str] = LAB
    ERROR: ClassVar[type] = DepthLabError

    variant: str = "pre"            # one of depth_lab.VARIANTS
    layers: int = 4
    lr: float = 0.01
    warmup: int = 0                 # steps of linear warm-up
    steps: int = STEPS
    switch: tuple[int, float] | None = None   # (after update n, the new lr)
    width: int = 16
    heads: int = 2
    batch: int = 16
    tokens: int = 8
    vocabulary: int = 16
    period: int = 3
    seed: int = 31

    def __post_init__(self) -> None:
        check = Check(self)
        check.choice("variant", depth_lab.VARIANTS)
        check.integer("layers", 1, MAX_TRAIN_LAYERS)
        check.number("lr", 0, MAX_LEARNING_RATE)
        check.integer("warmup", 0, MAX_WARMUP)
        check.integer("steps", 1, MAX_STEPS)
        if self.switch is not None:
            if not isinstance(self.switch, (tuple, list)) or len(self.switch) != 2:
                raise DepthLabError(f"{LAB} switch must be None or a pair (update, lr), got {shown(self.switch)}")
            object.__setattr__(self, "switch", (
                integer(self.switch[0], f"{LAB} switch update", 1, self.steps - 1, DepthLabError),
                number(self.switch[1], f"{LAB} switch lr", 0, MAX_LEARNING_RATE, DepthLabError)))
        check.integer("width", 1, depth_lab.MAX_WIDTH)
        check.integer("heads", 1, depth_lab.MAX_HEADS)
        check.integer("batch", 1, depth_lab.MAX_BATCH)
        check.integer("tokens", 1, depth_lab.MAX_TOKENS)
        check.integer("vocabulary", 2, depth_lab.MAX_VOCABULARY)
        check.integer("period", 1, self.tokens)
        check.integer("seed", 0, depth_lab.SEEDS - 1)
        with chained(DepthLabError, f"{LAB} blocks"):
            stack = self.stack          # the heads against the width, checked there
        weights = stack.weights + self.vocabulary * self.width   # and embeddings [V, d]
        one_hot = self.batch * self.tokens * self.vocabulary      # [B, T, V]
        check.size(8 * weights + 2 * stack.activations + 2 * one_hot, MAX_VALUES,
                   "weights, gradients, Adam's moments and its new values; the activations of a "
                   "training step and of a probe")

    @property
    def stack(self) -> depth_lab.Settings:
        """The depth lab's settings of the blocks (and of a head ``[d, V]``)."""
        return depth_lab.Settings(layers=self.layers, width=self.width, variant=self.variant,
                                  heads=self.heads, batch=self.batch, tokens=self.tokens,
                                  vocabulary=self.vocabulary, seed=self.seed)


# -- the task -------------------------------------------------------------------

def copy_task(settings: Settings | None = None, *, stream: int = 0, **changes: object) -> Batches:
    """``batches(step) -> (inputs [B, T], targets [B, T])``: sequences of
    ``T + 1`` tokens that repeat their first ``period`` tokens; the targets
    are the inputs shifted by one. Batch ``s`` is draws ``s·n … (s+1)·n - 1``
    of ``SplitMix64(seed + stream)`` (``n = batch · period``), so any step can
    be asked for in any order; training reads stream 2, the probe stream 3."""
    s = changed(Settings, settings, changes)
    stream = integer(stream, f"{LAB} stream", 0, depth_lab.SEEDS - 1, DepthLabError)
    seed, draws = (s.seed + stream) % depth_lab.SEEDS, s.batch * s.period

    def batches(step: int) -> tuple[np.ndarray, np.ndarray]:
        step = integer(step, f"{LAB} step", 0, 2 ** 40, DepthLabError)
        rng = SplitMix64((seed + step * draws * GAMMA) & MASK)
        first = np.floor(rng.next_f64(draws) * s.vocabulary).astype(np.int64)
        repeats = -(-(s.tokens + 1) // s.period)                # ceil
        sequence = np.tile(first.reshape(s.batch, s.period), repeats)
        return sequence[:, :s.tokens], sequence[:, 1:s.tokens + 1]

    return batches


def context_free_loss(settings: Settings | None = None, **changes: object) -> float:
    """``ln V``: the best a model that ignores the context can do."""
    return math.log(changed(Settings, settings, changes).vocabulary)


def best_loss(settings: Settings | None = None, **changes: object) -> float:
    """``(period - 1) / T · ln V``: only the first ``period - 1`` targets of a
    sequence are unpredictable."""
    s = changed(Settings, settings, changes)
    return (s.period - 1) / s.tokens * math.log(s.vocabulary)


# -- the model ------------------------------------------------------------------

@dataclass(frozen=True)
class StackModel:
    """Embeddings, a stack of blocks in one wiring, final RMSNorm, head."""

    variant: str
    embedding: Parameter          # [V, d]
    blocks: list[DecoderBlock]
    final_norm: RmsNorm
    head: Parameter               # [d, V]

    def __post_init__(self) -> None:
        """``new_model`` builds one; one built by hand is checked the same way:
        the variant, and every part of one width ``d`` and one vocabulary ``V``."""
        choice(self.variant, f"{LAB} model variant", depth_lab.VARIANTS, DepthLabError)
        for name, value in (("embedding", self.embedding), ("head", self.head)):
            if not isinstance(value, Parameter) or value.ndim != 2:
                raise DepthLabError(f"{LAB} model {name} must be a Parameter of rank 2, got {shown(value)}")
        vocabulary, width = self.embedding.shape
        if self.head.shape != (width, vocabulary):
            raise DepthLabError(f"{LAB} model head must be [d, V] = [{width}, {vocabulary}] as the embedding "
                                f"[V, d] says, got {list(self.head.shape)}")
        if not isinstance(self.blocks, list) or not 1 <= len(self.blocks) <= MAX_TRAIN_LAYERS or not all(
                isinstance(b, DecoderBlock) and b.model_width == width for b in self.blocks):
            raise DepthLabError(f"{LAB} model blocks must be a list of 1 to {MAX_TRAIN_LAYERS} DecoderBlocks "
                                f"of width {width}, got {shown(self.blocks)}")
        if not isinstance(self.final_norm, RmsNorm) or self.final_norm.feature_width != width:
            raise DepthLabError(f"{LAB} model final_norm must be an RmsNorm of width {width}, "
                                f"got {shown(self.final_norm)}")

    def parameters(self) -> ParameterList:
        return ParameterList([self.embedding, *self.final_norm.parameters(),
                              self.head,
                              *(p for b in self.blocks
                                for p in b.parameters())])

    def stream(self, tokens: np.ndarray) -> Tensor:
        """Token ids ``[B, T]`` -> the stream after the last block."""
        tokens = self._tokens(tokens)
        one_hot = np.eye(self.embedding.shape[0])[tokens]    # [B, T, V]
        x = Tensor(one_hot) @ self.embedding                  # [B, T, d]
        wire = depth_lab.STEPS[self.variant]
        for block in self.blocks:
            x = wire(depth_lab.parts_of(block), x)
        return x

    def top(self, tokens: np.ndarray) -> Tensor:
        """Token ids ``[B, T]`` -> the final RMSNorm's output."""
        return self.final_norm.forward(self.stream(tokens))

    def __call__(self, tokens: np.ndarray) -> Tensor:
        """Token ids ``[B, T]`` -> logits ``[B, T, V]``."""
        return self.top(tokens) @ self.head

    def _tokens(self, tokens: object) -> np.ndarray:
        """Token ids ``[B, T]`` in ``[0, V)``, at most as many as the blocks' positions."""
        if isinstance(tokens, (list, tuple)):
            try:
                tokens = np.asarray(tokens)
            except ValueError:                          # a ragged list
                raise DepthLabError(f"{LAB} tokens must be integer ids [B, T], got a ragged list") from None
        vocabulary = self.embedding.shape[0]
        positions = self.blocks[0].attention.max_positions
        if not isinstance(tokens, np.ndarray) or tokens.dtype.kind not in "iu" or tokens.ndim != 2 \
                or not 1 <= tokens.shape[1] <= positions:
            got = f"dtype {tokens.dtype} {list(tokens.shape)}" if isinstance(tokens, np.ndarray) else repr(tokens)
            raise DepthLabError(f"{LAB} tokens must be integer ids [B, T] with 1 <= T <= {positions}, got {got:.60}")
        if tokens.size * vocabulary > MAX_VALUES:         # the one-hot rows [B, T, V]
            raise DepthLabError(f"{LAB} tokens {list(tokens.shape)} with {vocabulary} words would hold "
                                f"{tokens.size * vocabulary} values, more than the limit {MAX_VALUES}")
        outside = tokens[(tokens < 0) | (tokens >= vocabulary)]
        if outside.size:
            raise DepthLabError(f"{LAB} tokens must be ids in [0, {vocabulary}), got {int(outside[0])}")
        return tokens


def new_model(settings: Settings | None = None, **changes: object) -> StackModel:
    """The blocks from ``SplitMix64(seed)`` as in the lab; embeddings and head
    from ``SplitMix64(seed + 1)``. Pre and Post of one seed share every
    weight."""
    s = changed(Settings, settings, changes)
    blocks = depth_lab.build_stack(s.stack)
    rng = SplitMix64((s.seed + 1) % depth_lab.SEEDS)
    embedding = np.sqrt(3.0) * (2.0 * rng.next_f64(s.vocabulary * s.width)
                                - 1.0).reshape(s.vocabulary, s.width)
    return StackModel(variant=s.variant,
                      embedding=Parameter("embedding", embedding),
                      blocks=blocks,
                      final_norm=RmsNorm.new("final_norm.gain", s.width),
                      head=Parameter("head", uniform_weight(
                          rng, s.width, s.vocabulary)))


# -- training -------------------------------------------------------------------

@dataclass(frozen=True)
class TopReadings:
    """The normalised top of the stack on a fixed probe batch ``[B, T, d]``,
    read after every update (``[steps]`` each)."""

    start_rms: float          # RMS(top) before the first update
    start_varying: float      # the share below, before the first update
    moves: np.ndarray         # RMS(top_after - top_before): one step's move
    rms: np.ndarray           # RMS(top_after)
    varying: np.ndarray       # RMS(top - its mean over all positions) / RMS
    start_stream: float = math.nan          # RMS of the stream under the final norm, before
    stream: np.ndarray = field(default_factory=lambda: np.empty(0))   # ... and after each update

    def __post_init__(self) -> None:
        """``train_stack(probe=True)`` makes it; checked when made by hand."""
        for name in ("start_rms", "start_varying", "start_stream"):
            value = getattr(self, name)
            if not isinstance(value, numbers.Real) or isinstance(value, (bool, np.bool_)):
                raise DepthLabError(f"{LAB} top readings {name} must be a number, got {shown(value)}")
        steps = _readings(self, ("moves", "rms", "varying"), "top readings")
        if np.ndim(self.stream) != 1 or len(self.stream) not in (0, steps):
            raise DepthLabError(f"{LAB} top readings stream must be [steps] like moves ({steps}) or empty, "
                                f"got {shown(self.stream)}")

    @property
    def relative_moves(self) -> np.ndarray:
        """Each move divided by the RMS of the top before that step."""
        before = np.concatenate([[self.start_rms], self.rms[:-1]])
        return self.moves / before


@dataclass(frozen=True)
class BatchReadings:
    """The normalised top of the stack ``[B, T, d]`` in each step's own
    forward pass, on that step's training batch, before its update
    (``[steps]`` each). Free: no extra forward pass, the same updates."""

    rms: np.ndarray           # RMS(top)
    varying: np.ndarray       # RMS(top - its mean over all positions) / RMS

    def __post_init__(self) -> None:
        """``train_stack`` makes it; checked when made by hand."""
        _readings(self, ("rms", "varying"), "batch readings")


@dataclass(frozen=True)
class Training:
    """One run: its settings and the loss before every update; with
    ``probe=True`` also the readings of the top after every update.
    ``readings``: the top in every training step (``BatchReadings``)."""

    settings: Settings
    run: TrainingRun
    top: TopReadings | None = None
    readings: BatchReadings | None = None

    def __post_init__(self) -> None:
        """``train_stack`` makes it; a learner may build one from a run's losses
        (``Training(Settings(), TrainingRun(losses))``) to read them with the
        lab's readers: checked here, so a wrong part fails at once."""
        for name, kind, optional in (("settings", Settings, False), ("run", TrainingRun, False),
                                     ("top", TopReadings, True), ("readings", BatchReadings, True)):
            value = getattr(self, name)
            if not (isinstance(value, kind) or (optional and value is None)):
                raise DepthLabError(f"{LAB} training {name} must be a {kind.__name__}"
                                    f"{' or None' if optional else ''}, got {type(value).__name__}")
        if self.readings is not None and len(self.readings.rms) != len(self.run.losses):
            raise DepthLabError(f"{LAB} training readings must have one value a step, {len(self.run.losses)}, "
                                f"got {len(self.readings.rms)}")

    @property
    def losses(self) -> np.ndarray:
        return self.run.losses


def train_stack(settings: Settings | None = None, *, probe: bool = False,
                **changes: object) -> Training:
    """Adam on the copy task: ``settings`` (default ``Settings()``) with
    ``changes`` made, e.g. ``train_stack(variant="post", lr=0.03)``.
    Overflow stops the run at that step (``run.diverged_at``, ``run.message``).
    With ``probe`` the top of the stack is read on a fixed probe batch after
    every update (``Training.top``); the updates are the same either way. With
    ``switch=(n, lr2)`` the learning rate is ``lr2`` after the ``n``-th
    update (``0 < n < steps``)."""
    probe = flag(probe, f"{LAB} probe", DepthLabError)
    s = changed(Settings, settings, changes)
    model = new_model(s)
    batches = copy_task(s, stream=2)
    optimizer = Adam(model.parameters(), lr=s.lr, warmup=s.warmup)

    def switched(n: int) -> None:
        if s.switch is not None and n == s.switch[0]:
            optimizer.lr = s.switch[1]

    sizes: list[float] = []
    varying: list[float] = []

    def read_and_run(tokens: np.ndarray) -> Tensor:     # = model(tokens)
        top = model.top(tokens)
        sizes.append(_rms(top.value))
        varying.append(_varying(top.value))
        return top @ model.head

    with _one_blas_thread_inside(), np.errstate(over="raise", invalid="raise", divide="raise"):
        if probe:
            result, top = _probed(model, read_and_run, batches, optimizer, s.steps,
                                  copy_task(s, stream=3)(0)[0], switched)
        else:
            result, top = train(read_and_run, batches, optimizer, s.steps, switched), None
    done = len(result.losses)                 # a diverged run read one more
    readings = BatchReadings(np.array(sizes[:done]), np.array(varying[:done]))
    return Training(settings=s, run=result, top=top, readings=readings)


def train_seeds(settings: Settings | None = None, seeds: Sequence[int] = range(31, 41), *,
                workers: int | None = None, **changes: object) -> list[Training]:
    """``[train_stack(settings, seed=s, **changes) for s in seeds]``, the runs
    spread over ``workers`` processes (default: one a core, at most one a
    seed). Each run is computed as in the loop, so the results are the same
    bits; where processes cannot be forked (Windows, macOS) or with
    ``workers=1`` it is that loop."""
    if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Sequence) \
            or not 1 <= len(seeds) <= MAX_SEEDS_AT_ONCE:
        raise DepthLabError(f"{LAB} seeds must be a list of 1 to {MAX_SEEDS_AT_ONCE} seeds, got {shown(seeds)}")
    if workers is not None:
        workers = integer(workers, f"{LAB} workers", 1, 64, DepthLabError)
    base = changed(Settings, settings, changes)
    every = [changed(Settings, base, {"seed": seed}) for seed in seeds]   # each checked before any runs
    workers = min(len(every), workers or os.cpu_count() or 1)
    if workers == 1 or "fork" not in multiprocessing.get_all_start_methods():
        return [train_stack(s) for s in every]
    with multiprocessing.get_context("fork").Pool(workers, initializer=_one_blas_thread) as pool:
        return pool.map(train_stack, every, chunksize=1)


def _one_blas_thread() -> None:
    """In a worker: OpenBLAS on one thread (the results do not depend on it),
    so that the workers' BLAS threads do not fight over the cores."""
    _blas().limit(limits=1, user_api="blas")


def _one_blas_thread_inside() -> threadpoolctl.ThreadpoolController:
    """OpenBLAS on one thread for a run (a context manager), then as before.
    The results do not depend on it; the time does: the model's matrices are
    small, a second thread mostly waits for the first, and on a busy machine
    for a core."""
    return _blas().limit(limits=1, user_api="blas")


@functools.cache
def _blas() -> threadpoolctl.ThreadpoolController:
    """The thread pools of the libraries loaded now, NumPy's BLAS among them
    (looked up once: the lookup reads every loaded library)."""
    return threadpoolctl.ThreadpoolController()


def _rms(values: np.ndarray) -> float:
    return float(np.sqrt(np.mean(values ** 2)))


def _varying(values: np.ndarray) -> float:
    """What differs by position: RMS(values - their mean over ``[B, T]``) / RMS."""
    size = _rms(values)
    return _rms(values - values.mean(axis=(0, 1))) / size if size else 0.0


def _probed(model: StackModel, forward: Callable[[np.ndarray], Tensor], batches: Batches,
            optimizer: Adam, steps: int, probe: np.ndarray, then: Callable[[int], None]
            ) -> tuple[TrainingRun, TopReadings]:
    """``train``, reading the top after each update (before ``then(n)``)."""
    streams: list[float] = []

    def read() -> np.ndarray:
        stream = model.stream(probe)                        # [B, T, d]
        streams.append(_rms(stream.value))
        return model.final_norm.forward(stream).value       # the top, [B, T, d]

    rms, share = _rms, _varying

    before = [read()]
    start = (rms(before[0]), share(before[0]))
    moves, sizes, varying = [], [], []

    def after(n: int) -> None:            # an overflowed top stops the run
        now = read()
        moves.append(rms(now - before[0]))
        sizes.append(rms(now))
        varying.append(share(now))
        before[0] = now
        then(n)

    run = train(forward, batches, optimizer, steps, after)
    done = len(moves)                     # an overflow in the read leaves one more stream
    return run, TopReadings(*start, np.array(moves), np.array(sizes), np.array(varying),
                            streams[0], np.array(streams[1:done + 1]))


def top_movement(settings: Settings | None = None, **changes: object) -> np.ndarray:
    """``[steps]``: how far one Adam step moves the normalised top of the
    stack, ``RMS(top_after - top_before)`` on a fixed probe batch (the top
    starts with RMS about 1; ``Training.top.relative_moves`` divides by the
    RMS before each step)."""
    if "probe" in changes:
        raise DepthLabError(f"{LAB} top_movement always probes the top, got probe={shown(changes['probe'])}")
    return train_stack(settings, probe=True, **changes).top.moves


def first_step(settings: Settings | None = None, **changes: object) -> dict[str, float]:
    """The first Adam update of a fresh model: the largest and the smallest
    ``|Δθ|`` over the blocks' weight matrices, and their RMS before it."""
    s = changed(Settings, settings, changes)
    model = new_model(s)
    matrices = [p for block in model.blocks for p in block.parameters() if p.ndim == 2]
    before = [p.value for p in matrices]
    train(model, copy_task(s, stream=2), Adam(model.parameters(), lr=s.lr), 1)
    moves = np.concatenate([np.abs(p.value - b).ravel()
                            for p, b in zip(matrices, before, strict=True)])
    weights = np.concatenate([b.ravel() for b in before])
    return {"largest": float(moves.max()), "smallest": float(moves.min()),
            "weight_rms": float(np.sqrt(np.mean(weights ** 2)))}


# -- reading a run --------------------------------------------------------------

def smoothed(losses: Sequence[float], window: int = 20) -> np.ndarray:
    """Running mean over ``window`` steps (shorter at the start)."""
    losses = _losses(losses)
    window = integer(window, f"{LAB} window", 1, MAX_STEPS, DepthLabError)
    sums = np.cumsum(np.concatenate([[0.0], losses]))
    ends = np.arange(1, len(losses) + 1)
    starts = np.maximum(0, ends - window)
    return (sums[ends] - sums[starts]) / (ends - starts)


def final_loss(training: Training, last: int = 30) -> float:
    """The mean loss of the last ``last`` steps."""
    losses = _losses(_training(training).losses)
    last = integer(last, f"{LAB} last", 1, MAX_STEPS, DepthLabError)
    return float(np.mean(losses[-last:]))


def first_below(training: Training, level: float = 2.0,
                window: int = 20) -> int | None:
    """The first step at which the running mean of the loss is below
    ``level``, or ``None``. Early in a run the trajectories of two BLAS
    kernels still agree, so this is the number to print, not a late loss."""
    level = number(level, f"{LAB} level", 0, math.inf, DepthLabError)
    below = np.flatnonzero(smoothed(_training(training).losses, window) < level)
    return int(below[0]) if below.size else None


def verdict(training: Training, level: float = 2.0) -> str:
    """A coarse reading of a run (its words: ``TEXT["verdict.*"]``):

    * ``diverges`` at step ~N — the loss or a value stopped being finite
      (N rounded to tens);
    * ``stalls`` — the running mean never got below ``ln V - 0.5``;
    * ``barely`` — it did, but never below ``level``;
    * ``learns`` — it got below ``level`` and its last 30 steps stayed below
      it on average;
    * ``breaks`` — it got below ``level``, but its last 30 steps are above it
      on average.
    """
    training = _training(training)
    level = number(level, f"{LAB} level", 0, math.inf, DepthLabError)
    if training.run.diverged:
        return TEXT["verdict.diverges"].format(step=round(training.run.diverged_at, -1))
    lowest = float(smoothed(training.losses).min())
    if lowest >= level:
        near = lowest > context_free_loss(training.settings) - 0.5
        return TEXT["verdict.stalls"] if near else TEXT["verdict.barely"]
    return TEXT["verdict.learns"] if final_loss(training) < level else TEXT["verdict.breaks"]


def _about(step: int | None) -> str:
    return TEXT["training.never"] if step is None else TEXT["training.about"].format(step=round(step, -1))


def training_table(runs: Sequence[Training], level: float = 2.0) -> tuple[list[str], list[list[str]]]:
    """Header and rows for ``markdown_table``: one row per run, with coarse
    readings only (a verdict, a step rounded to tens)."""
    level = number(level, f"{LAB} level", 0, math.inf, DepthLabError)
    if isinstance(runs, (str, bytes)) or not isinstance(runs, Sequence) or not runs:
        raise DepthLabError(f"{LAB} runs must be a non-empty list of Training, got {shown(runs)}")
    header = [TEXT[f"training.{key}"] for key in ("wiring", "layers", "lr", "warmup", "result")]
    header.append(TEXT["training.first_below"].format(level=level))
    rows = []
    for t in runs:
        s, step = _training(t).settings, first_below(t, level)
        warmup = TEXT["training.warmup_steps"].format(warmup=s.warmup) if s.warmup else TEXT["training.no_warmup"]
        rows.append([depth_lab.label(s.variant), str(s.layers), f"{s.lr:g}", warmup,
                     verdict(t, level), _about(step)])
    return header, rows


def seeds_table(runs: Mapping[str, Sequence[Training]], level: float = 2.0
                ) -> tuple[list[str], list[list[str]]]:
    """Header and rows for ``markdown_table``: per setting (``runs`` maps a
    title to its runs on several seeds), how many runs got each verdict and
    the range of the first step below ``level``, rounded to tens."""
    level = number(level, f"{LAB} level", 0, math.inf, DepthLabError)
    if not isinstance(runs, Mapping) or not runs or not all(
            isinstance(group, Sequence) and group for group in runs.values()):
        raise DepthLabError(f"{LAB} runs must map titles to non-empty lists of Training, got {shown(runs)}")
    header = [TEXT["training.run"], TEXT["training.seeds"], TEXT["training.result"],
              TEXT["training.first_below"].format(level=level)]
    rows = []
    for title, group in runs.items():
        verdicts = [verdict(t, level) for t in group]
        counts = {v: verdicts.count(v) for v in dict.fromkeys(verdicts)}
        summary = (TEXT["training.all"].format(verdict=verdicts[0], count=len(group))
                   if len(counts) == 1 else
                   ", ".join(TEXT["training.count"].format(verdict=v, count=n) for v, n in counts.items()))
        reached = sorted(round(s, -1) for s in (first_below(t, level) for t in group) if s is not None)
        span = (_about(None) if not reached else _about(reached[0]) if reached[0] == reached[-1]
                else TEXT["training.span"].format(first=reached[0], last=reached[-1]))
        rows.append([title, ", ".join(str(t.settings.seed) for t in group), summary, span])
    return header, rows


def schedule(settings: Settings | None = None, **changes: object) -> np.ndarray:
    """``[steps]``: the learning rate ``Adam`` uses at steps 1 … steps."""
    s = changed(Settings, settings, changes)
    optimizer = Adam([], lr=s.lr, warmup=s.warmup)
    return np.array([optimizer.rate(t) for t in range(1, s.steps + 1)])


# -- checks -------------------------------------------------------------------

def _readings(readings: object, names: tuple[str, ...], what: str) -> int:
    """The fields ``names`` of ``readings``: 1-D real arrays of one length (returned)."""
    lengths = set()
    for name in names:
        value = getattr(readings, name)
        if not isinstance(value, np.ndarray) or value.ndim != 1 or value.dtype.kind not in "fiu" \
                or value.size > MAX_STEPS:
            raise DepthLabError(f"{LAB} {what} {name} must be a 1-D array of at most {MAX_STEPS} numbers, "
                                f"got {shown(value)}")
        lengths.add(value.size)
    if len(lengths) > 1:
        raise DepthLabError(f"{LAB} {what} {', '.join(names)} must have one length, got {sorted(lengths)}")
    return lengths.pop()


def _training(training: object) -> Training:
    if not isinstance(training, Training):
        raise DepthLabError(f"{LAB} run must be a Training, got {type(training).__name__}")
    return training


def _losses(losses: object) -> np.ndarray:
    """A non-empty ``[steps]`` of finite losses (a run that diverged keeps those before)."""
    size = len(losses) if isinstance(losses, (range, np.ndarray, list, tuple)) else None
    if size is not None and size > MAX_STEPS:           # before anything is converted
        raise DepthLabError(f"{LAB} losses must be at most {MAX_STEPS} steps, got {size}")
    if isinstance(losses, (str, bytes)) or (isinstance(losses, np.ndarray) and losses.dtype.kind not in "fiu"):
        kind = f"dtype {losses.dtype}" if isinstance(losses, np.ndarray) else type(losses).__name__
        raise DepthLabError(f"{LAB} losses must be real numbers, got {kind}")
    if isinstance(losses, (list, tuple)):             # no '1' and no True read as a number
        odd = next((v for v in losses if not isinstance(v, numbers.Real) or isinstance(v, (bool, np.bool_))), None)
        if odd is not None:
            raise DepthLabError(f"{LAB} losses must be real numbers, got {shown(odd)} in {shown(losses)}")
    try:
        values = np.asarray(losses, dtype=float)
    except (TypeError, ValueError, OverflowError) as error:
        raise DepthLabError(f"{LAB} losses must be numbers, got {shown(losses)}") from error
    if values.size > MAX_STEPS:
        raise DepthLabError(f"{LAB} losses must be at most {MAX_STEPS} steps, got {values.size}")
    if values.ndim == 1 and np.abs(values).max(initial=0.0) > 1e300:
        raise DepthLabError(f"{LAB} losses must be at most 1e300 in size, got {np.abs(values).max():.3g}")
    if values.ndim != 1 or not values.size:
        raise DepthLabError(f"{LAB} losses must be a non-empty list of numbers, got shape {list(values.shape)}")
    bad = values.size - np.count_nonzero(np.isfinite(values))
    if bad:
        raise DepthLabError(f"{LAB} losses must be finite, got {bad} NaN or infinite of {values.size}")
    return values
