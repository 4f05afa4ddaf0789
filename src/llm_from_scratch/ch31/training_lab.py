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
and a head ``[d, V]``; ``Adam`` trains all of it. Bad settings get a
``DepthLabError`` naming the argument, the value and the allowed range.

Only early readings are reproducible. Two runs that differ only in the order
of a float sum (another BLAS kernel, or the rows of a batch permuted) agree
to the last bits for a while and then part: on seed 31 after about 44 steps
(Post at ``lr=0.03``, which stalls either way), 135 (Post with warm-up) and
166 (Pre). So the chapter reads a run by when it first gets below a level
and by coarse verdicts, and trains 120 steps by default.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..block import DecoderBlock
from ..book.training import TrainingRun, train
from ..errors import DepthLabError
from ..optim import Adam
from ..parameter import Parameter, ParameterList
from ..rmsnorm import RmsNorm
from ..rng import GAMMA, MASK, SplitMix64, uniform_weight
from ..tensor import Tensor
from . import depth_lab
from .depth_lab import check_choice, check_integer

MAX_TRAIN_LAYERS, MAX_STEPS, MAX_WARMUP = 64, 20_000, 20_000
STEPS = 120                   # the default length of a run
MAX_LEARNING_RATE = 1.0
DEFAULTS = {"width": 16, "heads": 2, "batch": 16, "tokens": 8,
            "vocabulary": 16, "period": 3, "seed": 31}

Batches = Callable[[int], tuple[np.ndarray, np.ndarray]]


# -- the task -------------------------------------------------------------------

def copy_task(*, batch: int = 16, tokens: int = 8, vocabulary: int = 16,
              period: int = 3, seed: int = 31) -> Batches:
    """``batches(step) -> (inputs [B, T], targets [B, T])``: sequences of
    ``T + 1`` tokens that repeat their first ``period`` tokens; the targets
    are the inputs shifted by one. Batch ``s`` is draws ``s·n … (s+1)·n - 1``
    of ``SplitMix64(seed)`` (``n = batch · period``), so any step can be asked
    for in any order."""
    batch = check_integer(batch, "batch", 1, depth_lab.MAX_BATCH)
    tokens = check_integer(tokens, "tokens", 1, depth_lab.MAX_TOKENS)
    vocabulary = check_integer(vocabulary, "vocabulary", 2,
                               depth_lab.MAX_VOCABULARY)
    period = check_integer(period, "period", 1, tokens)
    seed = check_integer(seed, "seed", 0, depth_lab.SEEDS - 1)
    draws = batch * period

    def batches(step: int) -> tuple[np.ndarray, np.ndarray]:
        step = check_integer(step, "step", 0, 2 ** 40)
        rng = SplitMix64((seed + step * draws * GAMMA) & MASK)
        first = np.floor(rng.next_f64(draws) * vocabulary).astype(np.int64)
        repeats = -(-(tokens + 1) // period)                # ceil
        sequence = np.tile(first.reshape(batch, period), repeats)
        return sequence[:, :tokens], sequence[:, 1:tokens + 1]

    return batches


def context_free_loss(vocabulary: int = 16) -> float:
    """``ln V``: the best a model that ignores the context can do."""
    return math.log(vocabulary)


def best_loss(vocabulary: int = 16, period: int = 3, tokens: int = 8) -> float:
    """``(period - 1) / T · ln V``: only the first ``period - 1`` targets of a
    sequence are unpredictable."""
    return (period - 1) / tokens * math.log(vocabulary)


# -- the model ------------------------------------------------------------------

@dataclass(frozen=True)
class StackModel:
    """Embeddings, a stack of blocks in one wiring, final RMSNorm, head."""

    variant: str
    embedding: Parameter          # [V, d]
    blocks: list[DecoderBlock]
    final_norm: RmsNorm
    head: Parameter               # [d, V]

    def parameters(self) -> ParameterList:
        return ParameterList([self.embedding, *self.final_norm.parameters(),
                              self.head,
                              *(p for b in self.blocks
                                for p in b.parameters())])

    def top(self, tokens: np.ndarray) -> Tensor:
        """``tokens [B, T]`` -> the normalised top of the stack ``[B, T, d]``."""
        one_hot = np.eye(self.embedding.shape[0])[tokens]    # [B, T, V]
        x = Tensor(one_hot) @ self.embedding                  # [B, T, d]
        wire = depth_lab.STEPS[self.variant]
        for block in self.blocks:
            x = wire(depth_lab.parts_of(block), x)
        return self.final_norm.forward(x)

    def __call__(self, tokens: np.ndarray) -> Tensor:
        """``tokens [B, T]`` -> logits ``[B, T, V]``."""
        return self.top(tokens) @ self.head


def new_model(variant: str = "pre", layers: int = 4, *, width: int = 16,
              heads: int = 2, vocabulary: int = 16, tokens: int = 8,
              seed: int = 31) -> StackModel:
    """The blocks from ``SplitMix64(seed)`` as in the lab; embeddings and head
    from ``SplitMix64(seed + 1)``. Pre and Post of one seed share every
    weight."""
    check_choice(variant, "variant", depth_lab.VARIANTS)
    layers = check_integer(layers, "layers", 1, MAX_TRAIN_LAYERS)
    vocabulary = check_integer(vocabulary, "vocabulary", 2,
                               depth_lab.MAX_VOCABULARY)
    blocks = depth_lab.build_stack(layers, width, heads=heads,
                                   tokens=tokens, seed=seed)
    rng = SplitMix64((seed + 1) % depth_lab.SEEDS)
    embedding = np.sqrt(3.0) * (2.0 * rng.next_f64(vocabulary * width)
                                - 1.0).reshape(vocabulary, width)
    return StackModel(variant=variant,
                      embedding=Parameter("embedding", embedding),
                      blocks=blocks,
                      final_norm=RmsNorm.new("final_norm.gain", width),
                      head=Parameter("head", uniform_weight(
                          rng, width, vocabulary)))


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

    @property
    def relative_moves(self) -> np.ndarray:
        """Each move divided by the RMS of the top before that step."""
        before = np.concatenate([[self.start_rms], self.rms[:-1]])
        return self.moves / before


@dataclass(frozen=True)
class Training:
    """One run: its settings and the loss before every update; with
    ``probe=True`` also the readings of the top after every update."""

    variant: str
    layers: int
    lr: float
    warmup: int
    run: TrainingRun
    seed: int = DEFAULTS["seed"]
    top: TopReadings | None = None
    switch: tuple[int, float] | None = None   # (after update n, the new lr)

    @property
    def losses(self) -> np.ndarray:
        return self.run.losses


def train_stack(variant: str = "pre", layers: int = 4, lr: float = 0.01,
                warmup: int = 0, steps: int = STEPS, *, probe: bool = False,
                switch: tuple[int, float] | None = None,
                **task: int) -> Training:
    """Adam on the copy task; ``task`` overrides ``DEFAULTS`` (width, heads,
    batch, tokens, vocabulary, period, seed). Overflow or a gradient that is
    not finite stops the run at that step (``run.diverged_at``). With
    ``probe`` the top of the stack is read on a fixed probe batch after every
    update (``Training.top``); the updates are the same either way. With
    ``switch=(n, lr2)`` the learning rate is ``lr2`` after the ``n``-th
    update (``0 < n < steps``)."""
    if not isinstance(probe, (bool, np.bool_)):
        raise DepthLabError(f"training probe must be True or False, "
                            f"got {probe!r}")
    settings = _task(task)
    model, batches, optimizer, steps, switch = _setup(
        variant, layers, lr, warmup, steps, switch, settings)
    first = optimizer.lr

    def switched(n: int) -> None:
        if switch is not None and n == switch[0]:
            optimizer.lr = switch[1]

    with np.errstate(over="raise", invalid="raise", divide="raise"):
        if probe:
            result, top = _probed(model, batches, optimizer, steps,
                                  copy_task(**_task_settings(settings, 3))(0)[0],
                                  switched)
        else:
            result, top = train(model, batches, optimizer, steps, switched), None
    return Training(variant=variant, layers=int(layers), lr=first,
                    warmup=optimizer.warmup, run=result,
                    seed=settings["seed"], top=top, switch=switch)


def _probed(model: StackModel, batches: Batches, optimizer: Adam,
            steps: int, probe: np.ndarray, then: Callable[[int], None]
            ) -> tuple[TrainingRun, TopReadings]:
    """``train``, reading the top after each update (before ``then(n)``)."""
    def read() -> np.ndarray:
        return model.top(probe).value                       # [B, T, d]

    def rms(values: np.ndarray) -> float:
        return float(np.sqrt(np.mean(values ** 2)))

    def share(values: np.ndarray) -> float:       # what differs by position
        size = rms(values)
        return rms(values - values.mean(axis=(0, 1))) / size if size else 0.0

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

    run = train(model, batches, optimizer, steps, after)
    return run, _readings(start, moves, sizes, varying)


def _readings(start: tuple[float, float], moves: list[float],
              sizes: list[float], varying: list[float]) -> TopReadings:
    return TopReadings(*start, np.array(moves), np.array(sizes),
                       np.array(varying))


def top_movement(variant: str = "pre", layers: int = 4, lr: float = 0.03,
                 warmup: int = 0, steps: int = 40, **task: int
                 ) -> np.ndarray:
    """``[steps]``: how far one Adam step moves the normalised top of the
    stack, ``RMS(top_after - top_before)`` on a fixed probe batch (the top
    starts with RMS about 1; ``Training.top.relative_moves`` divides by the
    RMS before each step)."""
    with depth_lab.numerics(f"top movement ({variant}, lr {lr!r})"):
        training = train_stack(variant, layers, lr, warmup, steps,
                               probe=True, **task)
    return training.top.moves


def first_step(lr: float = 0.03, **task: int) -> dict[str, float]:
    """The first Adam update of a fresh model: the largest and the smallest
    ``|Δθ|`` over all weights, and the RMS of the block matrices."""
    settings = _task(task)
    lr = check_learning_rate(lr)
    model = new_model("pre", 1, **_model_settings(settings))
    matrices = [p for p in model.blocks[0].parameters() if p.ndim == 2]
    before = [p.value for p in matrices]
    train(model, copy_task(**_task_settings(settings, 2)),
          Adam(model.parameters(), lr=lr), 1)
    moves = np.concatenate([np.abs(p.value - b).ravel()
                            for p, b in zip(matrices, before, strict=True)])
    weights = np.concatenate([b.ravel() for b in before])
    return {"largest": float(moves.max()), "smallest": float(moves.min()),
            "weight_rms": float(np.sqrt(np.mean(weights ** 2)))}


# -- reading a run --------------------------------------------------------------

def smoothed(losses: np.ndarray, window: int = 20) -> np.ndarray:
    """Running mean over ``window`` steps (shorter at the start)."""
    losses = np.asarray(losses, dtype=float)
    window = check_integer(window, "window", 1, MAX_STEPS)
    sums = np.cumsum(np.concatenate([[0.0], losses]))
    ends = np.arange(1, len(losses) + 1)
    starts = np.maximum(0, ends - window)
    return (sums[ends] - sums[starts]) / (ends - starts)


def final_loss(training: Training, last: int = 30) -> float:
    """The mean loss of the last ``last`` steps."""
    return float(np.mean(training.losses[-last:]))


def first_below(training: Training, level: float = 2.0,
                window: int = 20) -> int | None:
    """The first step at which the running mean of the loss is below
    ``level``, or ``None``. Early in a run the trajectories of two BLAS
    kernels still agree, so this is the number to print, not a late loss."""
    below = np.flatnonzero(smoothed(training.losses, window) < level)
    return int(below[0]) if below.size else None


def verdict(training: Training, vocabulary: int = 16,
            level: float = 2.0) -> str:
    """A coarse reading of a run:

    * ``расходится на шаге ~N`` — the loss or a gradient stopped being finite
      (N rounded to tens);
    * ``не учится`` — the running mean never got below ``ln V - 0.5``;
    * ``почти не учится`` — it did, but never below ``level``;
    * ``учится`` — it got below ``level`` and its last 30 steps stayed below
      it on average;
    * ``учится, потом срывается`` — it got below ``level``, but its last 30
      steps are above it on average.
    """
    if training.run.diverged:
        return f"расходится на шаге ~{round(training.run.diverged_at, -1)}"
    lowest = float(smoothed(training.losses).min())
    if lowest >= level:
        near = lowest > context_free_loss(vocabulary) - 0.5
        return "не учится" if near else "почти не учится"
    return ("учится" if final_loss(training) < level
            else "учится, потом срывается")


def training_table(runs: list[Training], vocabulary: int = 16,
                   level: float = 2.0) -> tuple[list[str], list[list[str]]]:
    """Header and rows for ``markdown_table``: one row per run, with coarse
    readings only (a verdict, a step rounded to tens)."""
    header = ["схема", "L", "η", "разогрев", "итог",
              f"потери < {level:g} с шага"]
    rows = []
    for t in runs:
        step = first_below(t, level)
        rows.append([depth_lab.label(t.variant), str(t.layers), f"{t.lr:g}",
                     f"{t.warmup} шагов" if t.warmup else "нет",
                     verdict(t, vocabulary, level),
                     "—" if step is None else f"~{round(step, -1)}"])
    return header, rows


def seeds_table(runs: dict[str, list[Training]], vocabulary: int = 16,
                level: float = 2.0) -> tuple[list[str], list[list[str]]]:
    """Header and rows for ``markdown_table``: per setting (``runs`` maps a
    title to its runs on several seeds), how many runs got each verdict and
    the range of the first step below ``level``, rounded to tens."""
    header = ["запуск", "зёрна", "итог", f"потери < {level:g} с шага"]
    rows = []
    for title, group in runs.items():
        verdicts = [verdict(t, vocabulary, level) for t in group]
        counts = {v: verdicts.count(v) for v in dict.fromkeys(verdicts)}
        summary = (f"{verdicts[0]}: {len(group)} из {len(group)}"
                   if len(counts) == 1 else
                   ", ".join(f"{v}: {n}" for v, n in counts.items()))
        reached = sorted(round(s, -1) for s in
                         (first_below(t, level) for t in group)
                         if s is not None)
        span = ("—" if not reached else f"~{reached[0]}"
                if reached[0] == reached[-1]
                else f"~{reached[0]}–{reached[-1]}")
        rows.append([title, ", ".join(str(t.seed) for t in group),
                     summary, span])
    return header, rows


def schedule(lr: float = 0.03, warmup: int = 0, steps: int = STEPS
             ) -> np.ndarray:
    """``[steps]``: the learning rate ``Adam`` uses at steps 1 … steps."""
    optimizer = Adam([], lr=check_learning_rate(lr),
                     warmup=check_integer(warmup, "warmup", 0, MAX_WARMUP))
    steps = check_integer(steps, "steps", 1, MAX_STEPS)
    return np.array([optimizer.rate(t) for t in range(1, steps + 1)])


# -- checks -------------------------------------------------------------------

def check_learning_rate(lr: object, name: str = "lr") -> float:
    """A finite learning rate in ``(0, MAX_LEARNING_RATE]``."""
    try:
        ok = (not isinstance(lr, (bool, np.bool_)) and isinstance(
            lr, (int, float, np.integer, np.floating))
              and math.isfinite(lr) and 0 < lr <= MAX_LEARNING_RATE)
    except OverflowError:
        ok = False
    if not ok:
        raise DepthLabError(f"training {name} must be a finite number in "
                            f"(0, {MAX_LEARNING_RATE:g}], got {lr!r}")
    return float(lr)


def check_switch(switch: object, steps: int) -> tuple[int, float] | None:
    """``None``, or ``(n, lr)`` with an update ``0 < n < steps`` and a
    learning rate as ``check_learning_rate`` takes it."""
    if switch is None:
        return None
    if not isinstance(switch, (tuple, list)) or len(switch) != 2:
        raise DepthLabError("training switch must be None or a pair "
                            f"(update, lr), got {switch!r}")
    return (check_integer(switch[0], "switch update", 1, steps - 1),
            check_learning_rate(switch[1], "switch lr"))


def _setup(variant: str, layers: int, lr: float, warmup: int, steps: int,
           switch: object, task: dict[str, int]
           ) -> tuple[StackModel, Batches, Adam, int, tuple[int, float] | None]:
    """Every setting checked, then the model, its batches and its optimizer."""
    settings = _task(task)
    lr = check_learning_rate(lr)
    warmup = check_integer(warmup, "warmup", 0, MAX_WARMUP)
    steps = check_integer(steps, "steps", 1, MAX_STEPS)
    switch = check_switch(switch, steps)
    model = new_model(variant, layers, **_model_settings(settings))
    batches = copy_task(**_task_settings(settings, 2))
    optimizer = Adam(model.parameters(), lr=lr, warmup=warmup)
    return model, batches, optimizer, steps, switch


def _task(task: dict[str, int]) -> dict[str, int]:
    unknown = sorted(set(task) - set(DEFAULTS))
    if unknown:
        raise DepthLabError(f"training setting {unknown[0]!r} is unknown; "
                            f"known: {', '.join(DEFAULTS)}")
    return {**DEFAULTS, **task}


def _model_settings(settings: dict[str, int]) -> dict[str, int]:
    return {key: settings[key]
            for key in ("width", "heads", "vocabulary", "tokens", "seed")}


def _task_settings(settings: dict[str, int], stream: int) -> dict[str, int]:
    """The task's settings; its data come from ``SplitMix64(seed + stream)``
    (the blocks use ``seed``, embeddings and head ``seed + 1``)."""
    picked = {key: settings[key]
              for key in ("batch", "tokens", "vocabulary", "period")}
    seed = check_integer(settings["seed"], "seed", 0, depth_lab.SEEDS - 1)
    return {**picked, "seed": (seed + stream) % depth_lab.SEEDS}
