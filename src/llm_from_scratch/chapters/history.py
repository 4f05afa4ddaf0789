"""Helpers for the chapters' historical contrasts (not parts of the model).

* ``weighted_source_context``: one alignment distribution over encoder annotations
  gives one context vector (Bahdanau et al., 2014).
* ``single_head_table``: one full-width causal table ``[B, T, T]`` for the whole row.
* ``layer_norm_rows``: unit-gain, zero-bias LayerNorm for the Post-LN contrast.
* ``rnn_style_states``: a bounded serial recurrence ``s_t = tanh(0.5 x_t + 0.75 s_{t-1})``.
"""

from __future__ import annotations

import numpy as np

from ..causal import causal_scaled_dot_product_self_attention
from ..errors import LlmFromScratchError
from ..tensor import Tensor, as_float64_array


class HistoryError(LlmFromScratchError):
    """Bad input to a helper of the historical contrasts."""


def weighted_source_context(weights: object, annotations: object) -> np.ndarray:
    """``weights: [S]`` over ``annotations: [S, d]`` -> one context ``[d]``."""
    w = as_float64_array(weights, "history context weights")
    a = as_float64_array(annotations, "history annotations")
    if w.ndim != 1 or a.ndim != 2 or a.shape[0] != w.shape[0]:
        raise HistoryError(f"history context needs weights [S] and annotations [S, d], got {list(w.shape)} "
                           f"and {list(a.shape)}")
    return w @ a


def single_head_table(x: Tensor) -> Tensor:
    """One causal probability table per batch row: ``x: [B, T, d] -> [B, T, T]`` (``Q = K = V = x``)."""
    return causal_scaled_dot_product_self_attention(x, x, x).weights


def rows_normalized(weights: np.ndarray, tolerance: float) -> bool:
    """Every row of ``[..., T, T]`` sums to 1 within ``tolerance``."""
    return bool(np.all(np.abs(weights.sum(axis=-1) - 1.0) <= tolerance))


def layer_norm_rows(x: object, epsilon: float) -> np.ndarray:
    """``(x - mean) / sqrt(var + eps)`` over the last axis; unit gain, zero bias."""
    values = as_float64_array(x, "history layer norm")
    if values.ndim < 1 or values.shape[-1] == 0:
        raise HistoryError(f"history layer norm needs a non-empty feature axis, got shape {list(values.shape)}")
    centered = values - values.mean(axis=-1, keepdims=True)
    variance = np.mean(centered * centered, axis=-1, keepdims=True)
    return centered / np.sqrt(variance + epsilon)


def rnn_style_states(inputs: object) -> np.ndarray:
    """``s_t = tanh(0.5 x_t + 0.75 s_{t-1})``, ``s_{-1} = 0``: every state waits for the previous one.

    The loop over steps is the point of this contrast: a recurrence cannot be
    computed for all positions at once, unlike causal attention.
    """
    values = as_float64_array(inputs, "history rnn inputs")
    if values.ndim != 1:
        raise HistoryError(f"history rnn inputs must be a vector, got shape {list(values.shape)}")
    states = np.empty_like(values)
    state = 0.0
    for step, value in enumerate(values):
        state = np.tanh(0.5 * value + 0.75 * state)
        states[step] = state
    return states
