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

import numpy as np

from ..attention import MultiHeadAttention
from ..book.training import TrainingRun, fit
from ..optim import Adam
from ..rng import SplitMix64
from ..tensor import Tensor

TOKENS, WIDTH, ROPE_BASE = 6, 8, 100.0
CONSTANT, CONTENT = 0, 2           # input features, as in lesson30's two-job input
COLUMNS = (0, 4)                   # output columns: previous token, first token
FIRST_ROW = 2                      # rows 0 and 1: previous token = first token
BATCH, STEPS, LEARNING_RATE, SEED = 32, 1000, 0.03, 30
HELD_OUT, HELD_OUT_SEED = 4096, 3030
EVERY = 50                         # steps between two held-out losses of the chapter's runs
ONE_HEAD_BOUND = 0.5
JOBS = ("previous", "first")       # the columns of job_weights


def task_batch(step: int, size: int = BATCH, seed: int = SEED) -> tuple[np.ndarray, np.ndarray]:
    """``x: [B, 6, 8]`` and ``targets: [B, 4, 2]``: for rows 2..5, the content of
    the previous token and of the first token. Batch ``step`` is always the same."""
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
    error = output[:, FIRST_ROW:, COLUMNS] - targets           # [B, 4, 2]
    grad = np.zeros(output.shape)
    grad[:, FIRST_ROW:, COLUMNS] = 2.0 * error / error.size
    return float(np.mean(error**2)), grad


def random_layer(heads: int, seed: int = SEED, rope_base: float = ROPE_BASE) -> MultiHeadAttention:
    """The two-job layer's configuration (``d_model = 8``, six positions, base 100)
    with random ``W_Q, W_K, W_V, W_O``; the same 256 parameters for any ``heads``."""
    return MultiHeadAttention.new("learned", model_width=WIDTH, heads=heads, max_positions=TOKENS,
                                  rope_base=rope_base, rng=SplitMix64(seed))


@dataclass(frozen=True)
class Learned:
    """A layer after training, the losses of its batches and, when asked, its held-out losses."""

    heads: int
    layer: MultiHeadAttention
    run: TrainingRun
    checkpoints: np.ndarray       # the steps at which the held-out loss was taken (0 = before training)
    held_out: np.ndarray          # held_out_loss(layer) at those steps


def learn(heads: int, steps: int = STEPS, seed: int = SEED, learning_rate: float = LEARNING_RATE, *,
          every: int | None = None, rope_base: float = ROPE_BASE) -> Learned:
    """Train ``random_layer(heads, seed)`` with Adam for ``steps`` batches of the task.

    With ``every``, training stops every ``every`` steps to take the held-out loss (and
    before the first step and after the last); the updates are the same as without."""
    layer = random_layer(heads, seed, rope_base)
    adam = Adam(layer.parameters(), lr=learning_rate)

    def model(x: np.ndarray) -> Tensor:
        return layer.forward(Tensor(x)).output

    checkpoints, held = [], []

    def checkpoint(step: int) -> None:
        if every and (step % every == 0 or step == steps):
            checkpoints.append(step)
            held.append(held_out_loss(layer))

    checkpoint(0)
    run = fit(model, lambda step: task_batch(step, seed=seed), adam, steps, two_job_loss, checkpoint)
    return Learned(heads, layer, run, np.array(checkpoints, int), np.array(held))


# -- what the trained layer does, on sequences it never saw ------------------------

def held_out() -> tuple[np.ndarray, np.ndarray]:
    return task_batch(0, size=HELD_OUT, seed=HELD_OUT_SEED)


def held_out_loss(layer: MultiHeadAttention) -> float:
    x, targets = held_out()
    return two_job_loss(layer.forward(Tensor(x)).output.value, targets)[0]


def mean_weights(layer: MultiHeadAttention) -> np.ndarray:
    """``[h, T, T]``: every head's attention table, averaged over the held-out sequences."""
    return layer.forward(Tensor(held_out()[0])).attention_weights.value.mean(axis=0)


def job_weights(layer: MultiHeadAttention) -> np.ndarray:
    """``[h, 2]``: per head, the mean weight of rows 2..5 on the previous token and on
    the first token."""
    weights = mean_weights(layer)
    rows = np.arange(FIRST_ROW, TOKENS)
    return np.stack([weights[:, rows, rows - 1].mean(axis=1), weights[:, rows, 0].mean(axis=1)], axis=1)


def jobs(layer: MultiHeadAttention) -> list[str]:
    """Per head, the job it does: ``"previous"`` or ``"first"``, where its weight is larger."""
    return [JOBS[j] for j in np.argmax(job_weights(layer), axis=1)]


def line_bound(targets: np.ndarray) -> float:
    """The least mean squared error of any predictions that lie on one line, for
    these ``targets [..., 2]``: half the smaller eigenvalue of their covariance.

    Over all sequences it is ``ONE_HEAD_BOUND``; on a finite sample it is a
    little above or below."""
    pairs = targets.reshape(-1, 2)
    return float(np.linalg.eigvalsh(np.cov(pairs.T, bias=True))[0] / 2)


def output_pairs(layer: MultiHeadAttention, sequences: int = 75) -> tuple[np.ndarray, np.ndarray]:
    """The predicted columns 0 and 4 and their targets ``(z_{m-1}, z_0)`` on the first
    ``sequences`` held-out sequences, rows 2..5: two ``[4 * sequences, 2]`` arrays."""
    x, targets = held_out()
    y = layer.forward(Tensor(x[:sequences])).output.value[:, FIRST_ROW:, COLUMNS]
    return y.reshape(-1, 2), targets[:sequences].reshape(-1, 2)


def column_correlation(layer: MultiHeadAttention) -> float:
    """Correlation of the predicted columns 0 and 4 over the held-out rows 2..5.

    With one head it is +-1: both columns are one number ``z`` times two constants."""
    y = layer.forward(Tensor(held_out()[0])).output.value[:, FIRST_ROW:, COLUMNS].reshape(-1, 2)
    return float(np.corrcoef(y.T)[0, 1])
