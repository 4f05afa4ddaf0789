"""The chapter's historical contrasts (not parts of the model).

* ``weighted_source_context``: one alignment distribution over encoder annotations
  gives one context vector (Bahdanau et al., 2014).
* ``single_head_table``: one full-width causal table ``[B, T, T]`` for the whole row.
"""

from __future__ import annotations

import numpy as np

from ..causal import causal_scaled_dot_product_self_attention
from ..checks import finite_number, values
from ..errors import HistoryError
from ..tensor import Tensor, as_float64_array


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
    weights = values(weights, "history rows_normalized weights", HistoryError, rank=(2, 32))
    tolerance = finite_number(tolerance, "history rows_normalized tolerance", HistoryError, zero_allowed=True)
    return bool(np.all(np.abs(weights.sum(axis=-1) - 1.0) <= tolerance))
