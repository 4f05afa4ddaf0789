"""Experiments of the chapter 31 lesson that are not the seed's evidence.

* ``scaled_input``: the worked example with rows of RMS 2, 0.5 and 1.5, so
  that RMSNorm visibly acts;
* ``first_stage``: the first residual stage in the pre order
  ``x + MHA(N(x))`` or the post order ``N(x + MHA(x))``, with RMSNorm or
  LayerNorm as ``N`` — placement and norm are two separate switches;
* ``head0_derivation``: the probability ``0.005440`` of the worked example
  worked out by hand in NumPy (RoPE, dot products, scaling, softmax);
* ``adam_step``: one Adam update with linear warm-up, written out as the
  formula (``book.optim.Adam`` computes the same, vectorized).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..block import DecoderBlock
from ..book.settings import choice, integer, number
from ..checks import instance, values
from ..errors import DecoderBlockError, OptimizerError, chained
from ..tensor import Tensor
from . import example as ch31
from .depth_lab import parts_of

ROW_SCALES = (2.0, 0.5, 1.5)     # RMS of the rows of scaled_input()
ERROR = DecoderBlockError        # every bad argument of the lesson's helpers


def rms(values: np.ndarray) -> np.ndarray:
    """Root mean square of every row: ``[..., d] -> [...]``."""
    rows = _rows(values, "rms values")
    try:
        with np.errstate(over="raise"):
            return np.sqrt(np.mean(rows ** 2, axis=-1))
    except FloatingPointError as error:
        raise ERROR(f"rms values up to {np.abs(rows).max():.3g} overflow when squared") from error


def _rows(value: object, role: str) -> np.ndarray:
    """Finite rows ``[..., d]`` (at least one axis, none empty)."""
    return values(value, role, ERROR, rank=(1, 32))


def rms_text(values: np.ndarray) -> str:
    """The RMS of every row, three decimals even when whole: ``[2.000, 0.500, 1.500]``."""
    values = _rows(values, "rms_text values")
    if values.ndim > 2 or values.size > 10_000:
        raise ERROR(f"rms_text values must be at most 10000 numbers in rows [d] or [n, d], "
                    f"got shape {list(values.shape)}")
    return "[" + ", ".join(f"{value:.3f}" for value in np.atleast_1d(rms(values))) + "]"


def scaled_input() -> np.ndarray:
    """``[1, 3, 4]``: row ``t`` is ``ROW_SCALES[t]`` times the example's row."""
    return ch31.example_input() * np.array(ROW_SCALES)[None, :, None]


@dataclass(frozen=True)
class FirstStage:
    """``x' `` of one order and what its attention saw."""

    order: str                  # "pre" or "post"
    norm: str                   # "rms" or "layer"
    attention_input: np.ndarray  # [B, T, d]: N(x) for pre, x for post
    weights: np.ndarray          # [B, h, T, T]
    branch: np.ndarray           # [B, T, d]: MHA(attention_input)
    output: np.ndarray           # [B, T, d]: x'


def first_stage(block: DecoderBlock, x: np.ndarray, order: str = "pre",
                norm: str = "rms") -> FirstStage:
    """``pre``: ``x' = x + MHA(N(x))``; ``post``: ``x' = N(x + MHA(x))``.

    ``norm="layer"`` is LayerNorm with unit gain, zero bias and eps 1e-5
    (the seed's Post-LN contrast); ``"rms"`` is the block's own RMSNorm.
    """
    instance(block, DecoderBlock, "first_stage block", ERROR)
    x = values(x, "first_stage x", ERROR, rank=3)
    choice(order, "first_stage order", ("pre", "post"), ERROR)
    choice(norm, "first_stage norm", ("rms", "layer"), ERROR)
    with chained(ERROR, "first_stage"):          # the width, the positions
        normalise = parts_of(block, norm).attention_norm
        stream = Tensor(x)
        seen = normalise(stream) if order == "pre" else stream
        attention = block.attention.forward(seen)
        total = stream + attention.output
        output = total if order == "pre" else normalise(total)
    return FirstStage(order=order, norm=norm, attention_input=seen.value,
                      weights=attention.attention_weights.value,
                      branch=attention.output.value, output=output.value)


def token_summary(stage: FirstStage, token: int = 1) -> dict[str, object]:
    """What the Pre/Post figure writes for one token: the RMS of the row
    attention reads, the token's weight on key 0 in head 0, its row of x'."""
    instance(stage, FirstStage, "token_summary stage", ERROR)
    token = integer(token, "token_summary token", 0, stage.output.shape[1] - 1, ERROR)
    return {"input_rms": float(rms(stage.attention_input[0, token])),
            "weight": float(stage.weights[0, 0, token, 0]),
            "output": stage.output[0, token]}


@dataclass(frozen=True)
class Head0Derivation:
    """Query 1 of head 0 in the worked example, step by step."""

    query: np.ndarray          # [2]: q_1 after RoPE (position 1, angle 1 rad)
    keys: np.ndarray           # [2, 2]: k_0 (position 0) and k_1 after RoPE
    dot_products: np.ndarray   # [2]: q_1 · k_0, q_1 · k_1
    scaled: np.ndarray         # [2]: divided by sqrt(d_h)
    probabilities: np.ndarray  # [2]: softmax over the two visible keys


def rotate(pair: np.ndarray, angle: float) -> np.ndarray:
    """RoPE on one pair: ``[a, b] -> [a cos - b sin, a sin + b cos]``."""
    pair = values(pair, "rotate pair", ERROR, shape=(2,))
    angle = number(angle, "rotate angle", -1e12, 1e12, ERROR)
    c, s = np.cos(angle), np.sin(angle)
    return np.array([pair[0] * c - pair[1] * s, pair[0] * s + pair[1] * c])


def head0_derivation() -> Head0Derivation:
    """By hand: ``N_a = X`` (RMS 1), ``W_Q = W_K = I``, head 0 = columns 0, 1,
    ``d_h = 2`` so the angle of position ``p`` is ``p`` radians."""
    rows = ch31.example_input()[0, :2, :2]            # tokens 0, 1 in head 0
    keys = np.stack([rotate(rows[p], float(p)) for p in (0, 1)])
    query = keys[1]                                   # W_Q = W_K: q_1 = k_1
    dots = keys @ query
    scaled = dots / np.sqrt(ch31.HEAD_WIDTH)
    exp = np.exp(scaled - scaled.max())
    return Head0Derivation(query=query, keys=keys, dot_products=dots,
                           scaled=scaled, probabilities=exp / exp.sum())




MAX_WARMUP = 1_000_000


def _adam_inputs(theta: object, g: object, m: object, v: object, t: object,
                 lr: object, warmup: object) -> tuple[np.ndarray, ...]:
    """The arrays of ``adam_step`` (finite, one shape, ``v >= 0``), checked with its numbers."""
    error = OptimizerError
    arrays = tuple(values(a, f"adam_step {name}", error) for name, a in (
        ("theta", theta), ("g", g), ("m", m), ("v", v)))
    shapes = {a.shape for a in arrays}
    if len(shapes) > 1:
        raise error(f"adam_step theta, g, m, v must share one shape, got {sorted(shapes)}")
    if np.any(arrays[3] < 0):
        raise error("adam_step v is a mean of squares and must be >= 0, "
                    f"got {arrays[3].min():.3g}")
    integer(t, "adam_step t", 1, MAX_WARMUP, error)
    number(lr, "adam_step lr", 0.0, 1e3, error)
    integer(warmup, "adam_step warmup", 0, MAX_WARMUP, error)
    if np.abs(arrays[1]).max() > 1e150:         # g**2 would overflow
        raise error(f"adam_step g up to {np.abs(arrays[1]).max():.3g} overflows when squared")
    return arrays


def adam_step(theta, g, m, v, t, lr=0.03, warmup=0,
              beta1=0.9, beta2=0.999, eps=1e-8):
    """One Adam update at step ``t`` (from 1): new ``theta, m, v``."""
    theta, g, m, v = _adam_inputs(theta, g, m, v, t, lr, warmup)
    rate = lr * min(1.0, t / warmup) if warmup else lr   # warm-up
    m = beta1 * m + (1 - beta1) * g          # running mean of g
    v = beta2 * v + (1 - beta2) * g**2       # running mean of g²
    m_hat, v_hat = m / (1 - beta1**t), v / (1 - beta2**t)
    return theta - rate * m_hat / (np.sqrt(v_hat) + eps), m, v
