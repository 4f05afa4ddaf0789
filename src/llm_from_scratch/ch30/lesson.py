"""Experiments of chapter 30's lesson that are not the seed's evidence.

* Two heads with two jobs in one layer: head 0 reads the previous token,
  head 1 the first token (``two_job_layer``, ``two_job_input``); the same
  weights with ``heads=1`` give one full-width table for comparison, also
  with the two-head layer's score scale and pair frequencies
  (``matched=True``).
* Why scores are divided by ``sqrt(d_h)``: the spread of raw dot products of
  random rows grows like ``sqrt(d_h)`` and the softmax saturates
  (``score_spread``), and the gradient that reaches the scores through the
  softmax shrinks (``softmax_jacobian_norm``), by how much from sample to
  sample (``jacobian_spread``).
* RoPE as a rotation: every pair of a head is an arrow that rotates by
  ``position * rope_base ** (-2i / d_h)`` (``pair_arrows``); the score of a
  rotated query and key depends only on the offset ``m - n``
  (``relative_scores``).
* The chapter's example with other weights (``example_layer``), and where
  the two heads first reach the same output coordinate
  (``changed_output_columns``).
* ``W_O`` as a mixing matrix: the symbolic output of a 0/1 matrix applied to
  the concatenated row ``[a, b, c, d]`` (``symbolic_output``).
* ``stage_values``: every stage of a forward pass for one sequence (the
  whole-layer figure draws them).

Everything the layer computes goes through the package's public API, so the
lesson's numbers come from the same code as the chapter's example.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..attention import MultiHeadAttention, MultiHeadAttentionForward
from ..book.settings import flag, integer, number
from ..checks import check_size, instance, shown, values
from ..errors import CausalAttentionError
from ..parameter import Parameter
from ..rope import RotaryEmbedding
from ..tensor import Tensor, causal_softmax
from . import example as ch30

ROLES = ("query", "key", "value", "output")
ERROR = CausalAttentionError     # every bad argument of the lesson's helpers

# -- two heads, two jobs --------------------------------------------------------

JOB_TOKENS = 6
JOB_WIDTH = 8          # d_model; with two heads d_h = 4: a fast and a slow pair
JOB_BASE = 10_000.0    # pair 1 of a head rotates by 0.01 rad per position
JOB_SHARPNESS = 5.0    # length of the constant query and key rows
CONSTANT, FIRST, CONTENT = 0, 1, 2   # the input features the weights read


def two_job_input() -> np.ndarray:
    """``[1, 6, 8]``: a constant 1, a first-token marker, a content value ``10 (t + 1)``."""
    x = np.zeros((1, JOB_TOKENS, JOB_WIDTH))
    x[0, :, CONSTANT] = 1.0
    x[0, 0, FIRST] = 1.0
    x[0, :, CONTENT] = 10.0 * np.arange(1, JOB_TOKENS + 1)
    return x


def two_job_weights(sharpness: float = JOB_SHARPNESS) -> dict[str, np.ndarray]:
    """``W_Q, W_K, W_V, W_O`` (``[8, 8]``, ``y = x @ W``) for the two jobs.

    Head 0 (columns 0-3) uses its fast pair (0, 1): every query is
    ``[a, 0]``, every key ``R(1) [a, 0]``; after RoPE the score
    ``a^2 cos(n - m + 1)`` peaks at ``n = m - 1``. Head 1 (columns 4-7) uses
    its slow pair (6, 7): the query is ``[a, 0]``, the key is ``[a, 0]`` on
    the first token only. Both heads copy the content value.
    """
    sharpness = number(sharpness, "two_job_weights sharpness", 0, 1e6, ERROR)
    d = JOB_WIDTH
    query, key, value = np.zeros((d, d)), np.zeros((d, d)), np.zeros((d, d))
    query[CONSTANT, 0] = sharpness
    key[CONSTANT, 0:2] = sharpness * np.array([np.cos(1.0), np.sin(1.0)])
    query[CONSTANT, 6] = sharpness
    key[FIRST, 6] = sharpness
    value[CONTENT, 0] = value[CONTENT, 4] = 1.0
    return {"query": query, "key": key, "value": value, "output": np.eye(d)}


# With h = 1 the head is twice as wide: scores are divided by sqrt(8), not
# sqrt(4), and columns 6-7 become pair 3 of the head, turning by
# base ** (-6 / 8) instead of base ** (-2 / 4). A longer query and key
# (sharpness * 2 ** (1/4)) and base ** (2/3) undo both.
MATCHED_SHARPNESS = JOB_SHARPNESS * 2.0 ** 0.25
MATCHED_BASE = JOB_BASE ** (2.0 / 3.0)


def two_job_layer(heads: int = 2, *, matched: bool = False) -> MultiHeadAttention:
    """The two-job weights as a layer with ``heads`` heads (1 or 2).

    ``matched=True`` (for ``heads=1``) gives the full-width head the
    two-head layer's score scale and pair frequencies: its scores are then
    exactly the sum of the two heads' scores.
    """
    integer(heads, "two_job_layer heads", 1, 2, ERROR)
    flag(matched, "two_job_layer matched", ERROR)
    sharpness, base = ((MATCHED_SHARPNESS, MATCHED_BASE) if matched
                       else (JOB_SHARPNESS, JOB_BASE))
    weights = two_job_weights(sharpness)
    parameters = [Parameter(f"jobs.{role}.weight", weights[role])
                  for role in ROLES]
    return MultiHeadAttention(
        *parameters, heads=heads, max_positions=JOB_TOKENS,
        rope_base=base)


# -- why sqrt(d_h) ----------------------------------------------------------------

@dataclass(frozen=True)
class ScoreSpread:
    """Per head width: the spread of scores and how peaked the softmax is."""

    widths: np.ndarray        # d_h
    raw_std: np.ndarray       # std of q . k
    scaled_std: np.ndarray    # std of q . k / sqrt(d_h)
    raw_top: np.ndarray       # mean largest softmax weight, raw scores
    scaled_top: np.ndarray    # the same for scaled scores
    raw_jacobian: np.ndarray  # median ||d softmax / d scores||_F, raw
    scaled_jacobian: np.ndarray  # the same for scaled scores
    tokens: int
    samples: int


def last_query_weights(scores: np.ndarray) -> np.ndarray:
    """``[samples, T] -> [samples, T]``: each row's softmax, by the layer's own
    causal softmax, where a query at the last position sees every key."""
    scores = values(scores, "last_query_weights scores", ERROR, rank=2)
    samples, tokens = scores.shape
    check_size(samples * tokens * tokens, "last_query_weights' tables [samples, T, T]", ERROR)
    table = np.broadcast_to(scores[:, None, :], (samples, tokens, tokens))
    return causal_softmax(Tensor(table)).value[:, -1]


def softmax_jacobian_norm(weights: np.ndarray) -> np.ndarray:
    """``[..., T] -> [...]``: the Frobenius norm of the softmax Jacobian
    ``J = diag(p) - p p^T`` at each row ``p`` of weights: how much of a
    gradient on the weights reaches the scores. With ``J_ij = p_i (d_ij -
    p_j)``, ``||J||^2 = sum p^2 - 2 sum p^3 + (sum p^2)^2``; it is 0 for a
    one-hot row. It is not largest for an even row: with 8 keys an even row
    gives ``sqrt(7) / 8 = 0.331``, half the weight on each of two keys 0.5."""
    try:
        p = np.asarray(weights, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise CausalAttentionError(f"softmax_jacobian_norm weights must be numbers, "
                                   f"got {type(weights).__name__}") from error
    if p.ndim < 1 or p.shape[-1] < 1 or p.size > 2**24:
        raise CausalAttentionError(f"softmax_jacobian_norm weights must be rows [..., T] "
                                   f"of at most 2**24 values, got shape {list(p.shape)}")
    if not np.all(np.isfinite(p)) or np.any(p < 0) or np.any(p > 1):
        raise CausalAttentionError("softmax_jacobian_norm weights must be finite and "
                                   "in [0, 1]")
    square = np.sum(p * p, axis=-1)
    cube = np.sum(p * p * p, axis=-1)
    return np.sqrt(np.maximum(square - 2.0 * cube + square * square, 0.0))


def score_spread(widths: tuple[int, ...] = (2, 4, 8, 16, 32, 64, 128, 256),
                 tokens: int = 8, samples: int = 2000,
                 seed: int = 30) -> ScoreSpread:
    """Random rows with independent ``N(0, 1)`` coordinates, one query
    against ``tokens`` keys, ``samples`` times for every head width."""
    widths = _widths("score_spread", widths)
    tokens = integer(tokens, "score_spread tokens", 1, 1024, ERROR)
    samples = integer(samples, "score_spread samples", 1, 100_000, ERROR)
    seed = integer(seed, "score_spread seed", 0, 2**63 - 1, ERROR)
    check_size(samples * tokens * max(max(widths), tokens), "score_spread's keys [samples, tokens, d_h] "
               "or tables [samples, T, T]", ERROR)
    rng = np.random.default_rng(seed)
    raw_std, scaled_std, raw_top, scaled_top = [], [], [], []
    raw_jac, scaled_jac = [], []
    for width in widths:
        q = rng.standard_normal((samples, 1, width))
        k = rng.standard_normal((samples, tokens, width))
        raw = np.sum(q * k, axis=-1)                    # [samples, tokens]
        scaled = raw / np.sqrt(width)
        raw_std.append(raw.std())
        scaled_std.append(scaled.std())
        raw_p, scaled_p = (last_query_weights(s) for s in (raw, scaled))
        raw_top.append(raw_p.max(axis=-1).mean())
        scaled_top.append(scaled_p.max(axis=-1).mean())
        raw_jac.append(np.median(softmax_jacobian_norm(raw_p)))
        scaled_jac.append(np.median(softmax_jacobian_norm(scaled_p)))
    return ScoreSpread(np.array(widths), np.array(raw_std),
                       np.array(scaled_std), np.array(raw_top),
                       np.array(scaled_top), np.array(raw_jac),
                       np.array(scaled_jac), tokens, samples)


@dataclass(frozen=True)
class JacobianSpread:
    """Per sample and head width: the median Jacobian norm of ``score_spread``
    (``jacobian_spread``) or the share of saturated rows (``saturated_rows``)."""

    widths: np.ndarray        # d_h
    raw: np.ndarray           # [samples, widths]: median ||d softmax / d scores||_F (or share), raw
    scaled: np.ndarray        # the same for scaled scores
    rows: int                 # rows in every sample
    tokens: int


def _widths(name: str, widths: object) -> tuple[int, ...]:
    """1 to 16 head widths, each an integer in ``[1, 65536]``."""
    if (not isinstance(widths, (tuple, list)) or not 1 <= len(widths) <= 16
            or not all(isinstance(w, (int, np.integer)) and not isinstance(w, bool) and 1 <= w <= 2**16
                       for w in widths)):
        raise ERROR(f"{name} widths must be 1 to 16 integers in [1, 65536], got {shown(widths)}")
    return tuple(int(w) for w in widths)


def _spread_norms(name: str, widths, tokens: int, rows: int, samples: int, seed: int):
    """The rows of ``jacobian_spread`` (see there), checked and drawn width by
    width: ``[(d_h, raw norms [samples, rows], scaled norms [samples, rows])]``."""
    widths = _widths(name, widths)
    tokens = integer(tokens, f"{name} tokens", 1, 1024, CausalAttentionError)
    rows = integer(rows, f"{name} rows", 1, 100_000, CausalAttentionError)
    samples = integer(samples, f"{name} samples", 1, 1000, CausalAttentionError)
    seed = integer(seed, f"{name} seed", 0, 2**63 - 1, CausalAttentionError)
    if samples * rows * tokens > 2**24:
        raise CausalAttentionError(f"{name} would draw {samples * rows * tokens} scores a width, "
                                   f"more than 2**24 (samples {samples}, rows {rows}, tokens {tokens})")
    rng = np.random.default_rng(seed)
    drawn = []
    for width in widths:                    # all samples of one width at once
        length = np.sqrt(rng.chisquare(width, (samples, rows)))             # |q|
        scores = (length[..., None] * rng.standard_normal((samples, rows, tokens))).reshape(-1, tokens)
        drawn.append((int(width), *(softmax_jacobian_norm(last_query_weights(table)).reshape(samples, rows)
                                    for table in (scores, scores / np.sqrt(width)))))
    return drawn


def jacobian_spread(widths: tuple[int, ...] = (4, 64, 256), tokens: int = 8, rows: int = 2000,
                    samples: int = 20, seed: int = 30) -> JacobianSpread:
    """``samples`` independent repeats of the Jacobian medians of ``score_spread``
    (``rows`` rows each): how much a median depends on the sample it comes from.

    The rows are drawn in one step instead of ``d_h + 1`` rows of coordinates:
    for a given query ``q`` with independent ``N(0, 1)`` coordinates, the scores
    ``q . k_j`` against independent keys of that kind are independent
    ``N(0, |q|^2)``, so a row of scores is ``|q| z`` with ``|q|^2 ~ chi^2(d_h)``
    and ``z ~ N(0, I)`` of ``tokens`` values: the same distribution as in
    ``score_spread``, at ``tokens + 1`` random numbers a row."""
    drawn = _spread_norms("jacobian_spread", widths, tokens, rows, samples, seed)
    raw = np.stack([np.median(r, axis=1) for _, r, _ in drawn], axis=1)
    scaled = np.stack([np.median(s, axis=1) for _, _, s in drawn], axis=1)
    return JacobianSpread(np.array(widths), raw, scaled, rows, tokens)


def saturated_rows(widths: tuple[int, ...] = (4, 64, 256), tokens: int = 8, rows: int = 2000,
                   samples: int = 20, seed: int = 30, below: float = 0.01) -> JacobianSpread:
    """The rows of ``jacobian_spread`` (same arguments, same draws), counted
    instead of summarized by a median: ``raw`` and ``scaled`` hold, per sample
    and head width, the share of rows whose Jacobian norm is below ``below``,
    rows where softmax is saturated and passes almost no gradient to the scores.
    A median hides them: it says nothing of the rows below it."""
    below = number(below, "saturated_rows below", 0, 1, ERROR)
    drawn = _spread_norms("saturated_rows", widths, tokens, rows, samples, seed)
    raw = np.stack([np.mean(r < below, axis=1) for _, r, _ in drawn], axis=1)
    scaled = np.stack([np.mean(s < below, axis=1) for _, _, s in drawn], axis=1)
    return JacobianSpread(np.array(widths), raw, scaled, rows, tokens)


# -- RoPE as a rotation -------------------------------------------------------------

def pair_angles(head_width: int, rope_base: float) -> np.ndarray:
    """``[d_h / 2]``: the angle per position of every pair, ``base ** (-2i / d_h)``."""
    rope = RotaryEmbedding(head_width, 2, rope_base)
    return np.arctan2(rope.sin[1], rope.cos[1])   # position 1: the step itself


def pair_arrows(head_width: int, rope_base: float,
                positions: int) -> np.ndarray:
    """``[positions, d_h / 2, 2]``: the unit row ``[1, 0, 1, 0, ...]`` rotated
    by RoPE at every position, read pair by pair."""
    rope = RotaryEmbedding(head_width, positions, rope_base)
    ones = np.tile([1.0, 0.0], head_width // 2)                # [d_h]
    rows = np.broadcast_to(ones, (positions, head_width))      # [P, d_h]
    turned = rope.rotate(Tensor(rows), 0).value                # [P, d_h]
    return turned.reshape(positions, head_width // 2, 2)


def relative_scores(query: np.ndarray, key: np.ndarray, rope_base: float,
                    positions: int) -> np.ndarray:
    """``[positions, positions]``: ``RoPE_m(q) . RoPE_n(k)`` for every query
    position ``m`` (rows) and key position ``n`` (columns), same ``q``, ``k``."""
    query = values(query, "relative_scores query", ERROR, rank=1)
    key = values(key, "relative_scores key", ERROR, shape=query.shape)
    rope = RotaryEmbedding(query.shape[-1], positions, rope_base)
    q = rope.rotate(Tensor(np.broadcast_to(query, (positions, query.size))), 0)
    k = rope.rotate(Tensor(np.broadcast_to(key, (positions, key.size))), 0)
    return q.value @ k.value.T


# -- the example with other weights ----------------------------------------------------

def example_layer(rope_base: float = ch30.ROPE_BASE, **weights: np.ndarray) -> MultiHeadAttention:
    """The chapter's layer (``h = 2``, capacity 6); ``query=``, ``key=``,
    ``value=``, ``output=`` replace its ``[4, 4]`` matrices."""
    unknown = sorted(set(weights) - set(ROLES))
    if unknown:
        raise ERROR(f"example_layer weight {shown(unknown[0])} is unknown; known: {', '.join(ROLES)}")
    chosen = {**ch30.example_weights(), **weights}
    parameters = [Parameter(f"attention.{role}.weight", chosen[role]) for role in ROLES]
    return MultiHeadAttention(
        *parameters, heads=ch30.HEADS, max_positions=ch30.MAX_POSITIONS,
        rope_base=rope_base)


def changed_output_columns(output_weight: np.ndarray, head: int) -> list[int]:
    """Output columns that change when only ``head``'s value columns of
    ``W_V`` are doubled, in the example with this ``W_O``.

    Doubling values touches no softmax: only the head's own output changes,
    and ``W_O`` decides which output columns see it."""
    head = integer(head, "changed_output_columns head", 0, ch30.HEADS - 1, ERROR)
    x = Tensor(ch30.example_input())
    value = np.eye(ch30.MODEL_WIDTH)
    columns = slice(head * ch30.HEAD_WIDTH, (head + 1) * ch30.HEAD_WIDTH)
    value[:, columns] *= 2.0
    before = example_layer(output=output_weight).forward(x).output.value
    after = example_layer(output=output_weight, value=value).forward(x).output.value
    return [j for j in range(ch30.MODEL_WIDTH)
            if not np.array_equal(before[..., j], after[..., j])]


# -- W_O as a mixing matrix -----------------------------------------------------------

def mixing_output_weight() -> np.ndarray:
    """The identity ``[4, 4]`` with ``(W_O)_{0,2} = 1`` added: ``y_2 = a + c``."""
    weight = np.eye(4)
    weight[0, 2] = 1.0
    return weight


def symbolic_output(weight: np.ndarray, symbols: str = "abcd") -> list[str]:
    """``[a, b, c, d] @ W`` written out: output ``j`` sums ``W[i, j] * symbol_i``
    (at most 26 symbols and 26 outputs)."""
    if not isinstance(symbols, str) or not 1 <= len(symbols) <= 26:
        raise ERROR(f"symbolic_output symbols must be a string of 1 to 26 letters, got {shown(symbols)}")
    weight = values(weight, "symbolic_output weight", ERROR, shape=(len(symbols), None))
    if weight.shape[1] > 26:
        raise ERROR(f"symbolic_output weight must have at most 26 columns, got {weight.shape[1]}")
    out = []
    for column in weight.T:
        terms = []
        for symbol, factor in zip(symbols, column, strict=True):
            if factor == 0:
                continue
            number = "" if factor == 1 else f"{factor:g}·"
            terms.append(f"{number}{symbol}")
        out.append(" + ".join(terms) if terms else "0")
    return out


# -- every stage of one sequence ---------------------------------------------------------------

def stage_values(forward: MultiHeadAttentionForward, sequence: int = 0) -> dict[str, np.ndarray]:
    """``{stage name: value}`` of one sequence of the batch, ``[h, T, d_h]``, ``[T, d_model]``, ..."""
    instance(forward, MultiHeadAttentionForward, "stage_values forward", ERROR)
    sequence = integer(sequence, "stage_values sequence", 0, forward.output.shape[0] - 1, ERROR)
    return {field.name: getattr(forward, field.name).value[sequence] for field in dataclasses.fields(forward)}

