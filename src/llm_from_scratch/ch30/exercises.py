"""Chapter 30's exercises as tables (statements in the notebook, texts in ``text/<edition>/ch30.py``); the
notebook calls it ``ex30``. The references of 30.9-30.11 are written in NumPy (a test compares them with the
package), so a learner who patches the package does not spoil them.
"""

from __future__ import annotations

import re

import numpy as np

from ..book.exercises import (
    Code,
    Field,
    Questions,
    Unreadable,
    labels,
    option,
    outside,
    read_int,
    read_int_set,
    read_list,
    read_shape,
    remember_package,
    short,
)

SETUP = ("np", "Tensor", "split_heads", "merge_heads", "causal_softmax", "rotate_pairs", "RotaryEmbedding")

# 30.1: which h work at d_model = 6
E1 = Questions("30.1", fields=[Field(h, labels("ok", "indivisible", "odd"), "indivisible" if 6 % h else "odd"
                                     if 6 // h % 2 else "ok") for h in (1, 2, 3, 4, 6)])

# 30.2: shapes at B = 2, T = 5, d_model = 12, h = 3: stage -> (right, {a known wrong shape: its text})
_SHAPES = {
    "qkv": ((2, 5, 12), {(2, 3, 5, 4): "qkv.split", (2, 5, 4): "qkv.narrow"}),
    "split": ((2, 3, 5, 4), {(2, 5, 3, 4): "split.reshape", (2, 3, 5, 12): "split.wide", (3, 2, 5, 4): "split.batch"}),
    "weights_one_head": ((2, 5, 5), {(2, 5, 4): "one.width", (5, 5): "one.batch", (2, 3, 5, 5): "one.all"}),
    "weights": ((2, 3, 5, 5), {(2, 5, 5): "weights.one", (2, 5, 3, 5): "weights.order", (2, 3, 5, 4): "one.width"}),
    "head_outputs": ((2, 3, 5, 4), {(2, 3, 5, 5): "outputs.weights", (2, 5, 3, 4): "outputs.order",
                                    (2, 3, 5, 12): "outputs.wide"}),
    "merged": ((2, 5, 12), {(2, 3, 5, 4): "merged.before", (2, 5, 4): "merged.narrow"}),
    "output": ((2, 5, 12), {(12, 12): "output.matrix", (2, 5, 4): "output.narrow"}),
}
E2 = Questions("30.2", fields=[Field(stage, read_shape, right, known) for stage, (right, known) in _SHAPES.items()])

# 30.3: the visibility triangle of four tokens in both heads
_VISIBLE = tuple(tuple(int(key <= query) for key in range(4)) for query in range(4))

def _read_matrix(value: object) -> tuple[tuple[int, ...], ...]:
    rows = [read_list(row) for row in read_list(value.tolist() if isinstance(value, np.ndarray) else value)]
    if len(rows) != 4 or any(len(row) != 4 for row in rows):
        raise Unreadable("rows" if len(rows) != 4 else "cells", value=short(value))
    matrix = tuple(tuple(int(c) if isinstance(c, (bool, np.bool_)) else read_int(c) for c in row) for row in rows)
    if {cell for row in matrix for cell in row} - {0, 1}:
        raise Unreadable("zero_one", value=short(value))
    return matrix

_TRIANGLE = dict(mistakes={tuple(zip(*_VISIBLE, strict=True)): "transposed", ((1,) * 4,) * 4: "no_mask"},
                 rules=(lambda m, _: any(m[q][q] == 0 for q in range(4)) and "diagonal",
                        lambda m, _: any(m[q][k] for q in range(4) for k in range(q + 1, 4)) and "future"))
E3 = Questions("30.3", fields=[Field(head, _read_matrix, _VISIBLE, **_TRIANGLE) for head in (0, 1)])  # else: "wrong"

# 30.4: one attention over the full width against two heads (options 1-4, as in the statement)
E4 = Questions("30.4", fields=[option(None, 2)])

# 30.5: W_O on symbolic rows
_TERM = re.compile(r"(?:(\d+)\s*\*?\s*)?([abcd])")

def _read_form(value: object) -> str:
    """``"a + c"``, ``"c+a"``, ``"y_2 = 1*a + c"`` -> ``"a+c"``; the letters the edition reads as a, b, c, d
    (its text ``5.lookalikes``: the Russian one, Cyrillic a, ve, es, de) count as those."""
    if not isinstance(value, str):
        raise Unreadable("form_type", value=short(value))
    counts: dict[str, int] = {}
    typed = value.lower().translate(str.maketrans(E5.text["lookalikes"], "abcd"))   # E5: defined below
    for term in re.sub(r"^\s*y_?\d\s*=", "", typed).split("+"):
        match = _TERM.fullmatch(term.strip())
        if match is None:
            raise Unreadable("form_parse", value=short(value))
        counts[match[2]] = counts.get(match[2], 0) + int(match[1] or 1)
    return "+".join(f"{n if n > 1 else ''}{symbol}" for symbol, n in sorted(counts.items()))

def _read_row(value: object) -> tuple[str, ...]:
    items = read_list(value)
    if len(items) != 4:
        raise Unreadable("row_length", value=len(items))
    return tuple(map(_read_form, items))

E5 = Questions("30.5", fields=[
    Field("concat", _read_row, tuple("abcd"), {tuple("cdab"): "concat.after", tuple("acbd"): "concat.interleaved"}),
    Field("swapped", _read_row, tuple("cdab"), {tuple("abcd"): "swapped.before", tuple("badc"): "swapped.inner",
                                                tuple("dcba"): "swapped.reversed"}),
    Field("y2", _read_form, "a+c", {"c": "y2.identity", "a": "y2.added"}),
    Field("heads_y6", read_int_set, frozenset({0, 3}), {frozenset({3}): "y6.identity", frozenset({0}): "y6.added"},
          (outside(4, "y6.outside"), lambda v, _: 1 in v and "y6.row"))])

# 30.6: of five tokens only token 3 changes; 30.7: where the heads meet, why the projection does not cut X
E6 = Questions("30.6", fields=[
    Field("unchanged", read_int_set, frozenset({0, 1, 2}), rules=(
        outside(5, "outside"), lambda v, _: 3 in v and "own", lambda v, _: 4 in v and "right_of")),
    Field("may_change", read_int_set, frozenset({3, 4}), rules=(
        outside(5, "outside"), lambda v, _: bool(v & {0, 1, 2}) and "left_of"))])   # else: fewer rows ("wrong")
E7 = Questions("30.7", fields=[option("ends", 3), option("why", 1)])

# 30.8: parameters at d_model = 128 counted per head (h = 8)
_D, _H, _DH = 128, 8, 16
_COUNT = _H * 3 * _D * _DH + _D**2                       # = 4 * 128 ** 2
E8 = Questions("30.8", fields=[Field(None, read_int, _COUNT, {
    3 * _D * _DH + _D**2: "one_head", _H * 3 * _D * _DH: "no_wo", _H * (3 * _D * _DH + _D**2): "wo_per_head",
    _H * 3 * _D**2 + _D**2: "square", _H * 4 * _D**2: "square", _COUNT + 4 * _D: "biases", _COUNT + 3 * _D: "biases"})])

# 30.9-30.11: NumPy code against a reference, on hidden cases
def _normal(seed: int, shape: tuple[int, ...], scale: float = 1.0) -> np.ndarray:
    return scale * np.random.default_rng(seed).standard_normal(shape)

def _split_heads(x: np.ndarray, heads: int) -> np.ndarray:   # [B, T, d_model] -> [B, h, T, d_h]
    return x.reshape(*x.shape[:2], heads, -1).transpose(0, 2, 1, 3)

E9 = Code("30.9", name="my_split_heads", reference=_split_heads, setup=SETUP, cases=lambda: [
    (_normal(1, (1, 3, 4)), 2), (_normal(2, (2, 5, 12)), 3), (_normal(3, (3, 2, 8)), 4), (_normal(4, (1, 4, 6)), 1)],
    mistakes={"reshape_only": lambda x, h: x.reshape(x.shape[0], h, x.shape[1], -1),
              "no_transpose": lambda x, h: x.reshape(*x.shape[:2], h, -1),
              "strided": lambda x, h: x.reshape(*x.shape[:2], -1, h).transpose(0, 3, 1, 2)})

def _softmax(scores: np.ndarray, visible: np.ndarray | None = None, shift: bool = True) -> np.ndarray:
    # [..., T, T]: softmax over keys; those outside ``visible`` (the causal triangle when None) at -inf
    visible = np.tril(np.ones(scores.shape[-2:], dtype=bool)) if visible is None else visible
    masked = np.where(visible, scores, -np.inf)
    weights = np.exp(masked - masked.max(axis=-1, keepdims=True) if shift else masked)
    return weights / weights.sum(axis=-1, keepdims=True)

def _square(scores: np.ndarray) -> np.ndarray:
    return np.ones(scores.shape[-2:], dtype=bool)

E10 = Code("30.10", name="my_causal_softmax", reference=_softmax, setup=SETUP, cases=lambda: [
    (_normal(5, (3, 3)),), (_normal(6, (2, 2, 4, 4)),), (np.array([[0.7]]),), (800.0 + _normal(7, (1, 4, 4), 10.0),)],
    mistakes={"no_mask": lambda s: _softmax(s, _square(s)),
              "mask_after": lambda s: _softmax(s, _square(s)) * np.tril(_square(s)),
              "no_max": lambda s: _softmax(s, shift=False), "upper": lambda s: _softmax(s, np.triu(_square(s))),
              "diagonal": lambda s: _softmax(s, np.tril(_square(s), -1))},
    rules=(lambda w, _: not np.isfinite(w).all() and "overflow", lambda w, _: bool(np.triu(w, 1).any()) and "future",
           lambda w, _: not np.allclose(w.sum(axis=-1), 1.0) and "rows"))

def _rope(x: np.ndarray, offset: int, base: float, sign: int = 1, step: float = 2.0) -> np.ndarray:
    # [T, d_h] rows at positions offset, offset + 1, …: each pair (2ℓ, 2ℓ + 1) turned by p·θ_ℓ
    tokens, width = x.shape
    angles = sign * (offset + np.arange(tokens))[:, None] * base ** (-step * np.arange(width // 2) / width)
    out = np.empty_like(x)
    out[:, 0::2] = x[:, 0::2] * np.cos(angles) - x[:, 1::2] * np.sin(angles)
    out[:, 1::2] = x[:, 0::2] * np.sin(angles) + x[:, 1::2] * np.cos(angles)
    return out

def _halves(x: np.ndarray, offset: int, base: float) -> np.ndarray:   # pairs (ℓ, ℓ + d_h/2), the other layout
    order = np.arange(x.shape[1]).reshape(2, -1).T.ravel()
    return _rope(x[:, order], offset, base)[:, np.argsort(order)]

def _lengths(x: np.ndarray) -> np.ndarray:
    return x[:, 0::2] ** 2 + x[:, 1::2] ** 2

E11 = Code("30.11", name="my_rope_rotate", reference=_rope, setup=SETUP, cases=lambda: [
    (_normal(8, (3, 2)), 0, 100.0), (_normal(9, (4, 4)), 2, 100.0), (_normal(10, (3, 6)), 1, 10_000.0),
    (_normal(11, (1, 8)), 7, 10_000.0)],
    mistakes={"backwards": lambda x, p, b: _rope(x, p, b, sign=-1), "halves": _halves,
              "no_offset": lambda x, p, b: _rope(x, 0, b), "one_based": lambda x, p, b: _rope(x, p + 1, b),
              "wrong_step": lambda x, p, b: _rope(x, p, b, step=1.0)},
    rules=(lambda out, args: not np.allclose(_lengths(out), _lengths(args[0])) and "length",))

EXERCISES = {1: E1, 2: E2, 3: E3, 4: E4, 5: E5, 6: E6, 7: E7, 8: E8, 9: E9, 10: E10, 11: E11}
globals().update({f"check_{number}": exercise.check for number, exercise in EXERCISES.items()})
remember_package()
