"""Experiments of the chapter 31 lesson that are not the seed's evidence.

* ``scaled_input``: the worked example with rows of RMS 2, 0.5 and 1.5, so
  that RMSNorm visibly acts;
* ``first_stage``: the first residual stage in the pre order
  ``x + MHA(N(x))`` or the post order ``N(x + MHA(x))``, with RMSNorm or
  LayerNorm as ``N`` — placement and norm are two separate switches;
* ``head0_derivation``: the probability ``0.005440`` of the worked example
  worked out by hand in NumPy (RoPE, dot products, scaling, softmax);
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..block import DecoderBlock
from ..book.settings import choice, integer, number
from ..checks import instance, values
from ..errors import DecoderBlockError, chained
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


