"""Training on the package's tape: the cross-entropy of next-token logits and the loop.

A model is a function that runs forward on the tape and returns the logits ``[B, T, V]``
as a ``Tensor``; ``train`` takes the cross-entropy against the targets, sends its
gradient back with ``logits.backward(grad)``, and lets ``Adam`` move the parameters.
``fit`` is the same loop with another loss (chapter 30's heads learn a regression).

A run diverges when, after at least one update, the loss is not finite or a float64
value overflows (a ``FloatingPointError``, or a typed error raised from one): it stops
and says at which step and why. Any other error is raised, and so is an overflow
before the first update: it comes from the model or the data as given, not from
training.

A step checks its batch, the model's output and the loss before the backward pass
and the update, so the step that raises moves no parameter: after an error the
model holds exactly the updates of the steps before it, and the error carries their
losses as ``error.losses`` (``[steps done]``) and says how many there were in a note.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..checks import is_int, shown
from ..errors import LlmFromScratchError, TrainingError
from ..tensor import MAX_SIZE, Tensor
from .optim import Adam

MAX_STEPS = 100_000        # hours of the book's models; more is a mistake


def cross_entropy(logits: np.ndarray, targets: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean cross-entropy of ``logits [B, T, V]`` against the token ids ``targets [B, T]``
    (integers in ``[0, V)``) and its gradient w.r.t. the logits ``[B, T, V]``."""
    logits, targets = _checked(logits, targets)
    try:
        with np.errstate(over="raise", invalid="raise"):
            shifted = logits - logits.max(axis=-1, keepdims=True)
            log_p = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    except FloatingPointError as error:         # logits more than 1.8e308 apart
        raise TrainingError(f"cross-entropy of logits up to {np.abs(logits).max():.3g} "
                            f"overflows: {error}") from error
    picked = targets[..., None]
    loss = -float(np.take_along_axis(log_p, picked, axis=-1).mean())
    grad = np.exp(log_p)
    np.put_along_axis(grad, picked, np.take_along_axis(grad, picked, -1) - 1.0, -1)
    return loss, grad / targets.size


def _checked(logits: object, targets: object) -> tuple[np.ndarray, np.ndarray]:
    """Finite real logits ``[..., V]`` and integer targets of their shape without ``V``,
    each in ``[0, V)``."""
    try:
        logits, targets = np.asarray(logits), np.asarray(targets)
    except Exception as error:                  # ragged lists, a failing __array__
        raise TrainingError(f"cross-entropy needs arrays: {type(error).__name__}: {error}") from error
    if logits.size > MAX_SIZE:                  # before any arithmetic makes copies
        raise TrainingError(f"cross-entropy logits would hold {logits.size} values, more than the limit {MAX_SIZE}")
    if logits.dtype.kind not in "fiu" or logits.ndim < 1 or logits.shape[-1] < 1:
        raise TrainingError(f"cross-entropy logits must be real numbers [..., V] with V >= 1, "
                            f"got dtype {logits.dtype} {list(logits.shape)}")
    bad = logits.size - np.count_nonzero(np.isfinite(logits))
    if bad:
        raise TrainingError(f"cross-entropy logits must be finite, got {bad} NaN or infinite of {logits.size}")
    if targets.dtype.kind not in "iu":
        raise TrainingError(f"cross-entropy targets must be integer token ids, got dtype {targets.dtype}")
    if targets.shape != logits.shape[:-1] or targets.size == 0:
        raise TrainingError(f"cross-entropy targets must have the logits' shape {list(logits.shape[:-1])} "
                            f"(at least one target), got {list(targets.shape)}")
    vocabulary = logits.shape[-1]
    outside = targets[(targets < 0) | (targets >= vocabulary)]
    if outside.size:
        raise TrainingError(f"cross-entropy targets must be token ids in [0, {vocabulary}), "
                            f"got {int(outside[0])}")
    return logits.astype(np.float64, copy=False), targets


@dataclass(frozen=True)
class TrainingRun:
    """The loss before each update; a diverged run stops early and says why."""

    losses: np.ndarray          # [steps] or fewer when it diverged
    diverged_at: int | None = None   # the step (from 0) that overflowed or lost a finite loss
    message: str = ""           # "training diverged at step 46: ..."

    def __post_init__(self) -> None:
        """A learner may build one (to read a run's losses): checked like a run's."""
        try:
            losses = np.asarray(self.losses)
        except Exception:                       # ragged lists, a failing __array__
            losses = np.asarray(None)
        if losses.dtype.kind not in "fiu" or losses.ndim != 1 or losses.size > MAX_STEPS \
                or not np.isfinite(losses).all():
            raise TrainingError(f"training run losses must be [steps] finite real numbers, at most {MAX_STEPS}, "
                                f"got {shown(self.losses)}")
        object.__setattr__(self, "losses", losses.astype(np.float64))   # frozen: stored once, checked
        if self.diverged_at is not None and (not is_int(self.diverged_at) or self.diverged_at != losses.size):
            raise TrainingError(f"training run diverged_at must be None or the step that diverged, the number "
                                f"of losses before it ({losses.size}), got {shown(self.diverged_at)}")
        if not isinstance(self.message, str):
            raise TrainingError(f"training run message must be a string, got {shown(self.message)}")

    @property
    def diverged(self) -> bool:
        return self.diverged_at is not None


Batches = Callable[[int], tuple[np.ndarray, np.ndarray]]
Loss = Callable[[np.ndarray, np.ndarray], tuple[float, np.ndarray]]


def train(model: Callable[[np.ndarray], Tensor], batches: Batches, optimizer: Adam, steps: int,
          after: Callable[[int], None] | None = None) -> TrainingRun:
    """``steps`` updates; ``batches(step)`` gives ``(inputs, targets [B, T])``, ``model(inputs)`` the logits.

    Each batch's targets are checked (integer token ids, not negative) before the
    model runs on it; the vocabulary bound is checked against the logits before the
    update. After an error the model keeps the updates of the earlier steps only
    (``error.losses``: their losses)."""
    if not callable(batches):
        return fit(model, batches, optimizer, steps, cross_entropy, after)   # fit says why

    def checked_batches(step: int) -> tuple[object, object]:
        inputs, targets = _batch(batches, step)
        return inputs, _token_ids(targets, step)

    return fit(model, checked_batches, optimizer, steps, cross_entropy, after)


def _token_ids(targets: object, step: int) -> np.ndarray:
    """Integer, non-negative targets of at most ``MAX_SIZE`` ids, before the model runs."""
    try:
        targets = np.asarray(targets)
    except Exception as error:                  # ragged lists, a failing __array__
        raise TrainingError(f"training batches({step}) targets must be an array of token ids: "
                            f"{type(error).__name__}") from error
    if targets.dtype.kind not in "iu" or targets.size > MAX_SIZE:
        raise TrainingError(f"training batches({step}) targets must be integer token ids, at most "
                            f"{MAX_SIZE}, got dtype {targets.dtype} {list(targets.shape)}")
    if targets.size and targets.min() < 0:
        raise TrainingError(f"training batches({step}) targets must be token ids >= 0, got {int(targets.min())}")
    return targets


def fit(model: Callable[[np.ndarray], Tensor], batches: Batches, optimizer: Adam, steps: int, loss: Loss,
        after: Callable[[int], None] | None = None) -> TrainingRun:
    """``train`` with any loss: ``loss(output, targets)`` gives the loss and its gradient w.r.t. the output.

    ``after(n)`` runs after the ``n``-th update (to read the model; it changes no update); an
    overflow in it stops the run at that step, as one in the update does.

    A step's batch, output and loss are checked before its backward pass and update:
    an error leaves the model with the updates of the earlier steps, whose losses the
    error carries as ``error.losses``."""
    _check_loop(model, batches, optimizer, steps, loss, after)
    losses, updates = [], 0
    for step in range(steps):
        try:
            inputs, targets = _batch(batches, step)
            optimizer.zero_grad()
            output = model(inputs)
            if not isinstance(output, Tensor):
                raise TrainingError(f"training model must return a Tensor, got {type(output).__name__}")
            value, grad = _loss(loss, output, targets)
            if not np.isfinite(value):
                raise FloatingPointError(f"the loss is {value}")
            output.backward(grad)
            optimizer.step()
            updates += 1
            if after is not None:
                after(updates)
        except (LlmFromScratchError, FloatingPointError) as error:
            if not updates or not _overflow(error):
                raised = error
                if not isinstance(error, LlmFromScratchError):
                    raised = TrainingError(f"training step {step}, before any update: {error}")
                    raised.__cause__ = error
                raised.losses = np.array(losses)
                raised.add_note(f"training stopped at step {step}: the model keeps the {updates} "
                                "update(s) before it; error.losses holds their losses")
                raise raised from raised.__cause__
            message = f"training diverged at step {step}: {error}"
            return TrainingRun(np.array(losses), step, message)
        losses.append(value)
    return TrainingRun(np.array(losses), None)


def _overflow(error: BaseException | None) -> bool:
    """A ``FloatingPointError``, or a typed error raised from one."""
    while error is not None:
        if isinstance(error, FloatingPointError):
            return True
        error = error.__cause__
    return False


def _check_loop(model: object, batches: object, optimizer: object, steps: object, loss: object,
                after: object) -> None:
    for name, value in (("model", model), ("batches", batches), ("loss", loss)):
        if not callable(value):
            raise TrainingError(f"training {name} must be callable, got {type(value).__name__}")
    if after is not None and not callable(after):
        raise TrainingError(f"training after must be None or callable, got {type(after).__name__}")
    if not isinstance(optimizer, Adam):
        raise TrainingError(f"training optimizer must be an Adam, got {type(optimizer).__name__}")
    if not is_int(steps) or not 1 <= steps <= MAX_STEPS:
        raise TrainingError(f"training steps must be an integer in [1, {MAX_STEPS}], got {shown(steps)}")


def _batch(batches: Batches, step: int) -> tuple[object, object]:
    batch = batches(step)
    if not isinstance(batch, tuple) or len(batch) != 2:
        raise TrainingError(f"training batches({step}) must return a pair (inputs, targets), got {shown(batch)}")
    return batch


def _loss(loss: Loss, output: Tensor, targets: object) -> tuple[float, np.ndarray]:
    """The loss and its gradient, a real number and an array of the output's shape."""
    result = loss(output.value, targets)
    if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], numbers.Real)
            and isinstance(result[1], np.ndarray) and result[1].shape == output.shape):
        raise TrainingError(f"training loss must return (a number, its gradient of shape "
                            f"{list(output.shape)}), got {shown(result)}")
    try:
        return float(result[0]), result[1]
    except OverflowError:                       # an integer past the float range
        return math.inf, result[1]
