"""Training on the package's tape: the cross-entropy of next-token logits and the loop.

A model is a function that runs forward on the tape and returns the logits ``[B, T, V]``
as a ``Tensor``; ``train`` takes the cross-entropy against the targets, sends its
gradient back with ``logits.backward(grad)``, and lets ``Adam`` move the parameters.
``fit`` is the same loop with another loss (chapter 30's heads learn a regression).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import LlmFromScratchError
from ..optim import Adam
from ..tensor import Tensor


def cross_entropy(logits: np.ndarray, targets: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean cross-entropy of ``logits [B, T, V]`` against ``targets [B, T]`` and its gradient w.r.t. the logits."""
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    picked = targets[..., None]
    loss = -float(np.take_along_axis(log_p, picked, axis=-1).mean())
    grad = np.exp(log_p)
    np.put_along_axis(grad, picked, np.take_along_axis(grad, picked, -1) - 1.0, -1)
    return loss, grad / targets.size


@dataclass(frozen=True)
class TrainingRun:
    """The loss before each update; a diverged run stops early."""

    losses: np.ndarray        # [steps] or fewer when it diverged
    diverged_at: int | None   # the step (from 0) whose loss or gradient was not finite

    @property
    def diverged(self) -> bool:
        return self.diverged_at is not None


def train(model: Callable[[np.ndarray], Tensor], batches: Callable[[int], tuple[np.ndarray, np.ndarray]],
          optimizer: Adam, steps: int, after: Callable[[int], None] | None = None) -> TrainingRun:
    """``steps`` updates; ``batches(step)`` gives ``(inputs, targets [B, T])``, ``model(inputs)`` the logits."""
    return fit(model, batches, optimizer, steps, cross_entropy, after)


Loss = Callable[[np.ndarray, np.ndarray], tuple[float, np.ndarray]]


def fit(model: Callable[[np.ndarray], Tensor], batches: Callable[[int], tuple[np.ndarray, np.ndarray]],
        optimizer: Adam, steps: int, loss: Loss, after: Callable[[int], None] | None = None) -> TrainingRun:
    """``train`` with any loss: ``loss(output, targets)`` gives the loss and its gradient w.r.t. the output.

    ``after(n)`` runs after the ``n``-th update (to read the model; it changes no update); a
    ``FloatingPointError`` it raises stops the run at that step, as one in the update does."""
    losses = []
    for step in range(steps):
        inputs, targets = batches(step)
        optimizer.zero_grad()
        try:
            output = model(inputs)
            value, grad = loss(output.value, targets)
            if not np.isfinite(value):
                return TrainingRun(np.array(losses), step)
            output.backward(grad)
            optimizer.step()
            if after is not None:
                after(step + 1)
        except (LlmFromScratchError, FloatingPointError):  # an overflow on the tape (also under
            return TrainingRun(np.array(losses), step)      # np.errstate(over="raise")), a gradient not finite
        losses.append(value)
    return TrainingRun(np.array(losses), None)
