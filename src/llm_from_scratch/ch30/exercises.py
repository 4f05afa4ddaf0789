"""Chapter 30's exercises as tables (statements in the notebook, texts in ``text/<edition>/ch30.py``); the
notebook calls it ``ex30``. The references of 30.9, 30.10 and 30.12-30.14 are written in NumPy (a test
compares 30.9 and 30.12-30.14 with the package), so a learner who patches the package does not spoil them; 30.10's
measured values are computed here, by the recipe of its statement, and never printed.

30.1 is a blind table (``Questions``): three labels a field, so a mark on each field would give the answer
away by elimination; a wrong answer gets each label restated as the claim it makes about that h
("6 divides by 4, and d_h = 6 / 4 is odd"), true and false claims alike, and the learner finds the false one.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

import numpy as np

from ..book.exercises import (
    Code,
    Field,
    Questions,
    Unreadable,
    coarse,
    known_slip,
    labels,
    near,
    option,
    outside,
    read_int,
    read_int_set,
    read_list,
    read_number,
    read_shape,
    remember_package,
    rounded,
    short,
)
from .example import HEADS, ROPE_BASE, example_input, example_weights

SETUP = ("np", "Tensor", "split_heads", "merge_heads", "causal_softmax", "rotate_pairs", "RotaryEmbedding")

# 30.1: which h work at d_model = 6; blind: a wrong answer is restated claim by claim, nothing marked
E1 = Questions("30.1", blind=True, fields=[Field(h, labels("ok", "indivisible", "odd"), "indivisible" if 6 % h
                                                 else "odd" if 6 // h % 2 else "ok") for h in (1, 2, 3, 4, 6)])

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

# 30.3: what attention costs at d_model = 64, T = 100: one head against eight (every cell, masked ones too)
_T3, _D3, _H3 = 100, 64, 8
_CELLS, _OPEN = _T3**2, _T3 * (_T3 + 1) // 2          # a [T, T] table; its cells the mask leaves open
E3 = Questions("30.3", fields=[
    Field("weights_1", read_int, _CELLS, {_OPEN: "masked", _CELLS * _D3: "products"}),
    Field("weights_8", read_int, _H3 * _CELLS, {_CELLS: "weights_8.shared", _CELLS // _H3: "weights_8.split",
                                                _H3 * _OPEN: "masked", _CELLS * _D3: "products"}),
    Field("products_1", read_int, _CELLS * _D3, {_CELLS: "scores", _OPEN * _D3: "masked"}),
    Field("products_8", read_int, _CELLS * _D3, {_H3 * _CELLS * _D3: "products_8.full", _H3 * _CELLS: "products_8.one",
                                                 _CELLS: "scores", _OPEN * _D3: "masked"}),
])

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

# 30.10: sqrt(d_h) against sqrt(d_model) at d_model = 512, h = 8: the spread predicted, the top weight measured
_MODEL, _HEADS = 512, 8
_WIDTH = _MODEL // _HEADS                                   # d_h = 64

@functools.cache
def _top_weights() -> dict[str, float]:
    """The statement's recipe: 2000 queries of one head, 8 keys each, N(0, 1) coordinates; the mean largest
    softmax weight of a row, the scores divided by sqrt(d_h), by sqrt(d_model) and by nothing."""
    rng = np.random.default_rng(_MODEL)
    q = rng.standard_normal((2000, 1, _WIDTH))
    k = rng.standard_normal((2000, 8, _WIDTH))
    raw = np.sum(q * k, axis=-1)                            # [2000, 8]
    tops = {}
    for name, divisor in (("dh", _WIDTH), ("dmodel", _MODEL), ("raw", 1)):
        scores = raw / np.sqrt(divisor)
        weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
        tops[name] = float((weights / weights.sum(axis=-1, keepdims=True)).max(axis=-1).mean())
    tops["measured_dh"], tops["measured_dmodel"] = float((raw / 8).std()), float((raw / np.sqrt(_MODEL)).std())
    return tops

def _near(values: dict[str, object], extra: tuple[str, ...] = ()) -> object:
    """The rule: a value near one of ``values`` (at the precision it was typed in) gets that value's text."""
    def rule(value: float, right: float) -> object:
        for key, known in values.items():
            known = known() if callable(known) else known
            if known_slip(value, known) and not near(value, right, 3):
                return key
        return False
    return rule

def _measured(field: str) -> float:
    return _top_weights()[field]

def _exact_or_rounded(value: float, right: float) -> bool:   # 1 for 1.0, and 0.35 or 0.354 for 0.35355…
    return value == right or rounded(2)(value, right)

_SPREAD = dict(read=read_number, accept=_exact_or_rounded)

def _two_places(value: float, right: float) -> bool:   # 0.20, "0.20" and 0.198 for 0.1976: a float keeps no zeros
    return abs(value - right) <= 0.005 + 1e-12

_TOP = dict(read=read_number, accept=_two_places)
E10 = Questions("30.10", fields=[
    Field("std_dh", right=1.0, rules=(_near({
        "std.raw": np.sqrt(_WIDTH), "std.measured": lambda: _measured("measured_dh")}), coarse(2)), **_SPREAD),
    Field("std_dmodel", right=float(np.sqrt(_WIDTH / _MODEL)), rules=(_near({
        "std.raw": np.sqrt(_WIDTH), "std_dmodel.own": 1.0, "std_dmodel.ratio": _WIDTH / _MODEL,
        "std_dmodel.inverse": np.sqrt(_MODEL / _WIDTH), "std_dmodel.unit": 1 / np.sqrt(_MODEL),
        "std.measured": lambda: _measured("measured_dmodel")}), coarse(2)), **_SPREAD),
    Field("top_dh", right=lambda: _measured("dh"), rules=(_near({
        "top.raw": lambda: _measured("raw"), "top.swapped": lambda: _measured("dmodel"), "top.uniform": 1 / 8}),
        coarse(2)),
        **_TOP),
    Field("top_dmodel", right=lambda: _measured("dmodel"), rules=(_near({
        "top.raw": lambda: _measured("raw"), "top.swapped": lambda: _measured("dh"), "top.uniform": 1 / 8}),
        coarse(2)),
        **_TOP)])

# 30.11: three jobs and the one-head bound of the learned-heads page: g mixes put the output on a g-plane,
# three independent unit-variance targets leave 3 - g of their variance off it, (3 - g) / 3 a column
_JOBS = 3
E11 = Questions("30.11", fields=[
    Field("one_head", read_number, (_JOBS - 1) / _JOBS, accept=_exact_or_rounded, rules=(_near({
        "one_head.half": 0.5, "one_head.swapped": 1 / _JOBS, "one_head.all": 1.0, "one_head.zero": 0.0}), coarse(2))),
    Field("two_heads", read_number, (_JOBS - 2) / _JOBS, accept=_exact_or_rounded, rules=(_near({
        "two_heads.half": 0.5, "two_heads.one": (_JOBS - 1) / _JOBS, "two_heads.zero": 0.0}), coarse(2))),
    Field("heads", read_int, _JOBS, {1: "heads.one", 2: "heads.two"}, rules=(
        lambda v, _: v > _JOBS and "heads.more", lambda v, _: v < 1 and "heads.none"))])

# 30.9, 30.13, 30.14: NumPy code against a reference, on hidden cases
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

E13 = Code("30.13", name="my_causal_softmax", reference=_softmax, setup=SETUP, cases=lambda: [
    (_normal(5, (3, 3)),), (_normal(6, (2, 2, 4, 4)),), (np.array([[0.7]]),), (800.0 + _normal(7, (1, 4, 4), 10.0),)],
    mistakes={"no_mask": lambda s: _softmax(s, _square(s)),
              "mask_after": lambda s: _softmax(s, _square(s)) * np.tril(_square(s)),
              "no_max": lambda s: _softmax(s, shift=False), "upper": lambda s: _softmax(s, np.triu(_square(s))),
              "diagonal": lambda s: _softmax(s, np.tril(_square(s), -1))},
    rules=(lambda w, _: not np.isfinite(w).all() and "overflow", lambda w, _: bool(np.triu(w, 1).any()) and "future",
           lambda w, _: not np.allclose(w.sum(axis=-1), 1.0) and "rows"))

def _rope(x: np.ndarray, offset: int, base: float, sign: int = 1, step: float = 2.0) -> np.ndarray:
    # [..., T, d_h] rows at positions offset, offset + 1, …: each pair (2ℓ, 2ℓ + 1) turned by p·θ_ℓ
    tokens, width = x.shape[-2:]
    angles = sign * (offset + np.arange(tokens))[:, None] * base ** (-step * np.arange(width // 2) / width)
    out = np.empty_like(x)
    out[..., 0::2] = x[..., 0::2] * np.cos(angles) - x[..., 1::2] * np.sin(angles)
    out[..., 1::2] = x[..., 0::2] * np.sin(angles) + x[..., 1::2] * np.cos(angles)
    return out

def _halves(x: np.ndarray, offset: int, base: float) -> np.ndarray:   # pairs (ℓ, ℓ + d_h/2), the other layout
    order = np.arange(x.shape[1]).reshape(2, -1).T.ravel()
    return _rope(x[:, order], offset, base)[:, np.argsort(order)]

def _lengths(x: np.ndarray) -> np.ndarray:
    return x[:, 0::2] ** 2 + x[:, 1::2] ** 2

E14 = Code("30.14", name="my_rope_rotate", reference=_rope, setup=SETUP, cases=lambda: [
    (_normal(8, (3, 2)), 0, 100.0), (_normal(9, (4, 4)), 2, 100.0), (_normal(10, (3, 6)), 1, 10_000.0),
    (_normal(11, (1, 8)), 7, 10_000.0)],
    mistakes={"backwards": lambda x, p, b: _rope(x, p, b, sign=-1), "halves": _halves,
              "no_offset": lambda x, p, b: _rope(x, 0, b), "one_based": lambda x, p, b: _rope(x, p + 1, b),
              "wrong_step": lambda x, p, b: _rope(x, p, b, step=1.0)},
    rules=(lambda out, args: not np.allclose(_lengths(out), _lengths(args[0])) and "length",))

# 30.12: the whole layer, x [B, T, d_model] -> [B, T, d_model], against MultiHeadAttention (a test compares)
def _mha(x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, w_o: np.ndarray, heads: int,
         base: float, divisor: str = "head", transpose: bool = True, rope_values: bool = False,
         mask: bool = True, axis: int = -1, output: bool = True, rope_width: str = "head") -> np.ndarray:
    """The layer's forward pass, or with one slip: ``divisor`` "head" (√d_h), "model" (√d_model) or "none";
    ``transpose`` False splits and merges by reshape alone; ``axis`` -2 normalises over the queries;
    ``rope_width`` "model" takes RoPE's steps base^(-2ℓ/d_model) instead of base^(-2ℓ/d_h)."""
    batch, tokens, width = x.shape
    d_h = width // heads

    def split(y: np.ndarray) -> np.ndarray:   # [B, T, d_model] -> [B, h, T, d_h]
        if transpose:
            return y.reshape(batch, tokens, heads, d_h).transpose(0, 2, 1, 3)
        return y.reshape(batch, heads, tokens, d_h)

    q, k, v = split(x @ w_q), split(x @ w_k), split(x @ w_v)
    step = 2.0 * d_h / width if rope_width == "model" else 2.0      # the exponent -step·ℓ/d_h
    q, k = _rope(q, 0, base, step=step), _rope(k, 0, base, step=step)
    v = _rope(v, 0, base, step=step) if rope_values else v
    scores = q @ k.swapaxes(-1, -2) / np.sqrt({"head": d_h, "model": width, "none": 1}[divisor])
    visible = np.tril(np.ones((tokens, tokens), dtype=bool)) if mask else _square(scores)
    masked = np.where(visible, scores, -np.inf)
    weights = np.exp(masked - masked.max(axis=axis, keepdims=True))
    weights = weights / weights.sum(axis=axis, keepdims=True)
    out = weights @ v                                                  # [B, h, T, d_h]
    merged = (out.transpose(0, 2, 1, 3) if transpose else out).reshape(batch, tokens, width)
    return merged @ w_o if output else merged

def _mha_cases() -> list[tuple]:
    example = example_weights()
    cases = [(example_input(), *(example[role] for role in ("query", "key", "value", "output")), HEADS, ROPE_BASE)]
    for seed, (batch, tokens, width, heads, base) in enumerate(
            [(2, 5, 8, 4, 100.0), (1, 4, 6, 1, 10_000.0), (3, 3, 12, 6, 10_000.0), (2, 5, 8, 2, 100.0)]):
        weights = [_normal(20 + 5 * seed + i, (width, width), width ** -0.5) for i in range(4)]
        cases.append((_normal(40 + seed, (batch, tokens, width)), *weights, heads, base))
    return cases

def _slip(**changes: object) -> Callable:
    return lambda *args: _mha(*args, **changes)

E12 = Code("30.12", name="my_mha", reference=_mha, setup=SETUP, cases=_mha_cases, mistakes={
    "no_scale": _slip(divisor="none"), "model_width": _slip(divisor="model"), "no_transpose": _slip(transpose=False),
    "rope_values": _slip(rope_values=True), "no_mask": _slip(mask=False), "softmax_axis": _slip(axis=-2),
    "no_output": _slip(output=False), "rope_model": _slip(rope_width="model")},
    rules=(lambda out, _: not np.isfinite(out).all() and "not_finite",))

EXERCISES = {1: E1, 2: E2, 3: E3, 4: E4, 5: E5, 6: E6, 7: E7, 8: E8, 9: E9, 10: E10, 11: E11, 12: E12, 13: E13,
             14: E14}
OWN_TEXTS = ("element",)   # 30.12's own "element": it shows no value of the reference
globals().update({f"check_{number}": exercise.check for number, exercise in EXERCISES.items()})
remember_package()
