"""The chapter's historical contrasts (not parts of the model).

* ``layer_norm_rows``: unit-gain, zero-bias LayerNorm for the Post-LN contrast.
* ``rnn_style_states``: a bounded serial recurrence ``s_t = tanh(0.5 x_t + 0.75 s_{t-1})``.
"""

from __future__ import annotations

import numpy as np

from ..checks import finite_number
from ..errors import HistoryError
from ..tensor import as_float64_array


def layer_norm_rows(x: object, epsilon: float) -> np.ndarray:
    """``(x - mean) / sqrt(var + eps)`` over the last axis; unit gain, zero bias."""
    values = as_float64_array(x, "history layer norm")
    if values.ndim < 1 or values.shape[-1] == 0:
        raise HistoryError(f"history layer norm needs a non-empty feature axis, got shape {list(values.shape)}")
    epsilon = finite_number(epsilon, "history layer norm epsilon", HistoryError, zero_allowed=True)
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
