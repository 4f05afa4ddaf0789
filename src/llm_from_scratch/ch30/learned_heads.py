"""Heads that learn their jobs: chapter 30's two jobs, learned from random weights.

The task of ``lesson30.two_job_layer`` with no weight set by hand and no
first-token marker: six tokens, feature 0 is 1 and feature 2 carries a
content value ``c_n ~ N(0, 1)``; output column 0 must copy the content of
the previous token, output column 4 the content of the first token. The loss
is the mean squared error over the rows ``m = 2 .. T-1``, where these are two
different tokens. RoPE is the only source of positions, so "first" means "the
farthest key" to every query.

Why one head cannot do both: with one head both output columns are ``W_O``
applied to one mix of the values, ``z = sum_n p_n c_n`` (feature 0 only adds
a constant, since the weights of a row sum to 1). At every row the
prediction ``(y_0, y_4) = alpha + beta z`` lies on one line of the plane,
the same for all inputs. The squared error of a point on the line is at least
the squared distance of the target ``t = (c_{m-1}, c_0)`` from the line, that
is ``(n . t - const)^2`` for the line's unit normal ``n``; for ``m >= 2`` the
two contents are independent with unit variance, so ``Var(n . t) = n_0^2 +
n_4^2 = 1``: the mean squared distance is at least 1 and, averaged over the
two columns, the error is at least ``ONE_HEAD_BOUND = 1/2`` in expectation,
whatever the weights. (On a finite sample the best line does a little better
or worse: ``line_bound``.) Two heads give two mixes and can reach 0.

The training's held-out loss is taken every ``EVERY`` steps on the same 4096
sequences (``held_out``), so a curve of it is not the noise of 32-sequence
batches, and a one-head curve never goes below ``line_bound`` of those sequences.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..attention import MultiHeadAttention
from ..book.optim import Adam
from ..book.settings import Check, changed, integer
from ..book.training import TrainingRun, fit
from ..errors import LearnedHeadsError, chained
from ..rng import SplitMix64
from ..rope import RotaryEmbedding
from ..tensor import Tensor

TOKENS, WIDTH, ROPE_BASE = 6, 8, 100.0
CONSTANT, CONTENT = 0, 2           # input features, as in lesson30's two-job input
COLUMNS = (0, 4)                   # output columns: previous token, first token
FIRST_ROW = 2                      # rows 0 and 1: previous token = first token
BATCH, STEPS, LEARNING_RATE, SEED = 32, 1000, 0.03, 30
HELD_OUT, HELD_OUT_SEED = 4096, 3030
EVERY = 50                         # steps between two held-out losses of the chapter's runs
SURVEY_SEEDS, SURVEY_STEPS = range(31, 51), 150   # the page's table of other starts
ONE_HEAD_BOUND = 0.5
JOBS = ("previous", "first")       # the columns of job_weights
MAX_STEPS, MAX_LEARNING_RATE, SEEDS = 20_000, 1.0, 2**64
MAX_SEQUENCES = 2**18              # a batch of them holds 12.6M float64 values
LAB = "learned heads"


@dataclass(frozen=True)
class Settings:
    """One run of the two-job layer: its heads, its start and its training."""

    LAB: ClassVar[str] = LAB
    ERROR: ClassVar[type] = LearnedHeadsError

    heads: int = 2                 # 1, 2 or 4: d_model 8 in heads of even width
    steps: int = STEPS
    seed: int = SEED               # the start (SplitMix64) and the batches
    learning_rate: float = LEARNING_RATE
    every: int | None = None       # steps between two held-out losses (None: none)
    rope_base: float = ROPE_BASE

    def __post_init__(self) -> None:
        check = Check(self)
        check.integer("heads", 1, WIDTH)
        if WIDTH % self.heads or WIDTH // self.heads % 2:
            raise LearnedHeadsError(f"{LAB} heads must split d_model {WIDTH} into heads of even width "
                                    f"(RoPE rotates pairs), got {self.heads}")
        check.integer("steps", 1, MAX_STEPS)
        check.integer("seed", 0, SEEDS - 1)
        check.number("learning_rate", 0, MAX_LEARNING_RATE)
        if self.every is not None:
            check.integer("every", 1, self.steps)
        check.number("rope_base", 0, float("inf"))
        with chained(LearnedHeadsError, f"{LAB} rope_base"):     # angles that overflow
            RotaryEmbedding(WIDTH // self.heads, TOKENS, self.rope_base)


def task_batch(step: int, size: int = BATCH, seed: int = SEED) -> tuple[np.ndarray, np.ndarray]:
    """``x: [B, 6, 8]`` and ``targets: [B, 4, 2]``: for rows 2..5, the content of
    the previous token and of the first token. Batch ``step`` is always the same."""
    step = integer(step, f"{LAB} step", 0, SEEDS - 1, LearnedHeadsError)
    size = integer(size, f"{LAB} batch size", 1, MAX_SEQUENCES, LearnedHeadsError)
    seed = integer(seed, f"{LAB} seed", 0, SEEDS - 1, LearnedHeadsError)
    content = np.random.default_rng([seed, step]).standard_normal((size, TOKENS))
    x = np.zeros((size, TOKENS, WIDTH))
    x[..., CONSTANT] = 1.0
    x[..., CONTENT] = content
    previous = content[:, FIRST_ROW - 1:TOKENS - 1]             # tokens m - 1 of rows m
    first = np.broadcast_to(content[:, :1], previous.shape)     # token 0
    return x, np.stack([previous, first], axis=-1)


def two_job_loss(output: np.ndarray, targets: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean squared error of output columns 0 and 4 on rows 2..5 against ``targets [B, 4, 2]``,
    and its gradient w.r.t. the whole ``output [B, 6, 8]`` (zero elsewhere)."""
    output = _finite(output, "output", (TOKENS, WIDTH))
    targets = _finite(targets, "targets", (TOKENS - FIRST_ROW, len(COLUMNS)), batch=len(output))
    try:
        with np.errstate(over="raise", invalid="raise"):
            error = output[:, FIRST_ROW:, COLUMNS] - targets           # [B, 4, 2]
            grad = np.zeros(output.shape)
            grad[:, FIRST_ROW:, COLUMNS] = 2.0 * error / error.size
            return float(np.mean(error**2)), grad
    except FloatingPointError as overflow:
        raise LearnedHeadsError(f"{LAB} loss of outputs up to {np.abs(output).max():.3g} overflows") from overflow


def random_layer(settings: Settings | None = None, **changes: object) -> MultiHeadAttention:
    """The two-job layer's configuration (``d_model = 8``, six positions, base 100)
    with random ``W_Q, W_K, W_V, W_O``; the same 256 parameters for any ``heads``."""
    s = changed(Settings, settings, changes)
    return MultiHeadAttention.new("learned", model_width=WIDTH, heads=s.heads, max_positions=TOKENS,
                                  rope_base=s.rope_base, rng=SplitMix64(s.seed))


@dataclass(frozen=True)
class Learned:
    """A layer after training, the losses of its batches and, when asked, its held-out losses."""

    settings: Settings
    layer: MultiHeadAttention
    run: TrainingRun
    checkpoints: np.ndarray       # the steps at which the held-out loss was taken (0 = before training)
    held_out: np.ndarray          # held_out_loss(layer) at those steps
    held_out_jobs: tuple[tuple[str, ...], ...] = ()   # jobs(layer) at those steps

    @property
    def heads(self) -> int:
        return self.settings.heads


def learn(settings: Settings | None = None, **changes: object) -> Learned:
    """Train ``random_layer(settings)`` with Adam for ``steps`` batches of the task:
    ``settings`` (default ``Settings()``) with ``changes`` made, e.g. ``learn(heads=1)``.

    With ``every``, training stops every ``every`` steps to take the held-out loss (and
    before the first step and after the last); the updates are the same as without."""
    s = changed(Settings, settings, changes)
    layer = random_layer(s)
    adam = Adam(layer.parameters(), lr=s.learning_rate)

    def model(x: np.ndarray) -> Tensor:
        return layer.forward(Tensor(x)).output

    checkpoints, held, held_jobs = [], [], []

    def checkpoint(step: int) -> None:
        if s.every and (step % s.every == 0 or step == s.steps):
            loss, shares = _held_out_pass(layer)
            checkpoints.append(step)
            held.append(loss)
            held_jobs.append(_jobs(shares))

    checkpoint(0)
    run = fit(model, lambda step: task_batch(step, seed=s.seed), adam, s.steps, two_job_loss, checkpoint)
    return Learned(s, layer, run, np.array(checkpoints, int), np.array(held), tuple(held_jobs))


# -- what the trained layer does, on sequences it never saw ------------------------

def held_out() -> tuple[np.ndarray, np.ndarray]:
    return task_batch(0, size=HELD_OUT, seed=HELD_OUT_SEED)


def held_out_loss(layer: MultiHeadAttention) -> float:
    return _held_out_pass(layer)[0]


def held_out_spread(layer: MultiHeadAttention) -> float:
    """How far ``held_out_loss`` may lie from the layer's expected loss: the standard
    deviation of the per-sequence losses over ``sqrt(HELD_OUT)``.

    A head that copies the previous token and outputs a constant for the first one errs by
    about ``z_0`` in column 4, the same number in all four rows of a sequence, so its
    spread is about ``sqrt(Var(z_0^2 / 2) / HELD_OUT) = 0.011``; a head that copies the
    first token errs by four different ``z_{m-1}`` and spreads half as much."""
    x, targets = held_out()
    output = _finite(_layer(layer).forward(Tensor(x)).output.value, "output", (TOKENS, WIDTH))
    try:
        with np.errstate(over="raise", invalid="raise"):
            per_sequence = np.mean((output[:, FIRST_ROW:, COLUMNS] - targets) ** 2, axis=(1, 2))
            return float(per_sequence.std() / np.sqrt(HELD_OUT))
    except FloatingPointError as overflow:
        raise LearnedHeadsError(f"{LAB} spread of outputs up to {np.abs(output).max():.3g} "
                                f"overflows") from overflow


def _held_out_pass(layer: MultiHeadAttention) -> tuple[float, np.ndarray]:
    """One forward pass over the held-out sequences: the loss and ``job_weights``."""
    x, targets = held_out()
    forward = _layer(layer).forward(Tensor(x))
    return two_job_loss(forward.output.value, targets)[0], _job_shares(forward.attention_weights.value.mean(axis=0))


def mean_weights(layer: MultiHeadAttention) -> np.ndarray:
    """``[h, T, T]``: every head's attention table, averaged over the held-out sequences."""
    return _layer(layer).forward(Tensor(held_out()[0])).attention_weights.value.mean(axis=0)


def job_weights(layer: MultiHeadAttention) -> np.ndarray:
    """``[h, 2]``: per head, the mean weight of rows 2..5 on the previous token and on
    the first token."""
    return _job_shares(mean_weights(layer))


def _job_shares(weights: np.ndarray) -> np.ndarray:
    rows = np.arange(FIRST_ROW, TOKENS)
    return np.stack([weights[:, rows, rows - 1].mean(axis=1), weights[:, rows, 0].mean(axis=1)], axis=1)


def jobs(layer: MultiHeadAttention) -> list[str]:
    """Per head, the job it does: ``"previous"`` or ``"first"``, where its weight is larger."""
    return list(_jobs(job_weights(layer)))


def _jobs(shares: np.ndarray) -> tuple[str, ...]:
    return tuple(JOBS[j] for j in np.argmax(shares, axis=1))


def line_bound(targets: np.ndarray) -> float:
    """The least mean squared error of any predictions that lie on one line, for
    these ``targets [..., 2]``: half the smaller eigenvalue of their covariance.

    Over all sequences it is ``ONE_HEAD_BOUND``; on a finite sample it is a
    little above or below."""
    pairs = _finite(targets, "line targets", (len(COLUMNS),), leading=0).reshape(-1, 2)
    if len(pairs) < 2:
        raise LearnedHeadsError(f"{LAB} line targets must hold two pairs or more, got {len(pairs)}")
    return float(np.linalg.eigvalsh(np.cov(pairs.T, bias=True))[0] / 2)


def output_pairs(layer: MultiHeadAttention, sequences: int = 75) -> tuple[np.ndarray, np.ndarray]:
    """The predicted columns 0 and 4 and their targets ``(z_{m-1}, z_0)`` on the first
    ``sequences`` held-out sequences, rows 2..5: two ``[4 * sequences, 2]`` arrays."""
    sequences = integer(sequences, f"{LAB} sequences", 1, HELD_OUT, LearnedHeadsError)
    x, targets = held_out()
    y = _layer(layer).forward(Tensor(x[:sequences])).output.value[:, FIRST_ROW:, COLUMNS]
    return y.reshape(-1, 2), targets[:sequences].reshape(-1, 2)


def column_correlation(layer: MultiHeadAttention) -> float:
    """Correlation of the predicted columns 0 and 4 over the held-out rows 2..5.

    With one head it is +-1: both columns are one number ``z`` times two constants."""
    y = _layer(layer).forward(Tensor(held_out()[0])).output.value[:, FIRST_ROW:, COLUMNS].reshape(-1, 2)
    spread = y.std(axis=0)
    if not np.all(spread > 0):
        raise LearnedHeadsError(f"{LAB} column correlation needs columns that vary, "
                                f"got spreads {spread[0]:.3g} and {spread[1]:.3g}")
    return float(np.corrcoef(y.T)[0, 1])


# -- checks ---------------------------------------------------------------------------

def _layer(layer: object) -> MultiHeadAttention:
    """A layer of the task's shape: ``d_model = 8``, at least six positions."""
    if not isinstance(layer, MultiHeadAttention) or layer.model_width != WIDTH or layer.max_positions < TOKENS:
        got = (f"width {layer.model_width}, {layer.max_positions} positions"
               if isinstance(layer, MultiHeadAttention) else type(layer).__name__)
        raise LearnedHeadsError(f"{LAB} layer must be a MultiHeadAttention of width {WIDTH} with "
                                f"{TOKENS} positions or more, got {got}")
    return layer


def _finite(values: object, name: str, tail: tuple[int, ...], batch: int | None = None,
            leading: int = 1) -> np.ndarray:
    """A finite float array ``[B, *tail]`` (``B = batch`` if given), or with any
    number of leading axes for ``leading=0``."""
    array = np.asarray(values) if isinstance(values, (np.ndarray, list, tuple)) else None
    rank_ok = array is not None and (array.ndim == 1 + len(tail) if leading else array.ndim > len(tail))
    if not rank_ok or array.dtype.kind not in "fiu" or array.shape[-len(tail):] != tail \
            or (batch is not None and len(array) != batch):
        shape = list(array.shape) if array is not None else type(values).__name__
        want = f"[{'B' if batch is None else batch}, {', '.join(map(str, tail))}]"
        want = want if leading else f"[..., {', '.join(map(str, tail))}]"
        raise LearnedHeadsError(f"{LAB} {name} must be real numbers {want}, got {shape}")
    bad = array.size - np.count_nonzero(np.isfinite(array))
    if bad:
        raise LearnedHeadsError(f"{LAB} {name} must be finite, got {bad} NaN or infinite of {array.size}")
    return array.astype(np.float64, copy=False)
