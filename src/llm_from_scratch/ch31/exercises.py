"""Chapter 31's exercises as tables (statements in the notebook, texts in ``text/<edition>/ch31.py``); the
notebook calls it ``ex31``. Options are numbered 1-4, as in chapter 30 (letters A, B, ... name tensors and axes here);
31.13 and 31.14 number the five verdicts of ``training_lab.verdict`` 1-5, alike.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .. import DecoderBlock, DecoderBlockConfig, Parameter, RmsNorm, SplitMix64, Tensor
from ..book.exercises import (
    Code,
    Field,
    Questions,
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
)
from . import depth_lab
from . import example as chapter
from . import lesson as lesson31
from .depth_lab import top_block_gradient  # bound now: a learner's patch of depth_lab does not reach it

SETUP = ("np", "Tensor", "DecoderBlock", "DecoderBlockConfig", "SplitMix64", "RmsNorm", "block", "X", "depth_lab")
STEPS = ("residual_1", "ffn_norm", "attention_norm", "ffn", "attention", "residual_2")  # shuffled, as stated
STAGES = ("x", "n_a", "a", "x_prime", "n_f", "f", "y")

# 31.1: the order of the steps --------------------------------------------------------------------
def _read_order(value: object) -> tuple[str, ...]:
    return tuple(labels(*STEPS)(item) for item in read_list(value))

def _order_rule(steps: tuple[str, ...], right: tuple[str, ...]) -> tuple[str, dict]:
    repeated = [step for step in dict.fromkeys(steps) if steps.count(step) > 1]
    if repeated:
        return "repeated", {"step": repeated[0]}
    if len(steps) != len(right):
        return "missing", {"count": len(steps)}
    if steps.index("residual_1") < steps.index("attention_norm"):
        return "post", {}
    place = next(i for i, (given, want) in enumerate(zip(steps, right, strict=True)) if given != want)
    return f"early.{steps[place]}", {"place": place + 1}

E1 = Questions("31.1", fields=[Field(None, _read_order, ("attention_norm", "attention", "residual_1", "ffn_norm",
                                                          "ffn", "residual_2"), rules=(_order_rule,))])

# 31.2: shapes, and the axis a residual addition may change ----------------------------------------
def _stream(stage: str) -> Field:
    return Field(stage, read_shape, (2, 5, 12), rules=(
        lambda v, _: len(v) != 3 and ("rank", {"count": len(v)}),
        lambda v, _: stage == "f" and v[2] == 32 and "hidden",
        lambda v, _: v[2] != 12 and ("width", {"width": v[2]}),
    ))   # else: the axes in another order ("wrong")

E2 = Questions("31.2", fields=[*map(_stream, STAGES), option("axis", 4)])

# 31.3-31.6 -------------------------------------------------------------------------------------
E3 = Questions("31.3", fields=[option("x_prime", 2), option("identity", 2)])
E4 = Questions("31.4", fields=[Field("rows", read_int_set, frozenset(range(4)), rules=(
    outside(5, "outside"), lambda v, _: 4 in v and "changed")), option("part", 1)])

_D, _D_FF = 12, 32
_GAINS, _ATTENTION, _FFN = 2 * _D, 4 * _D * _D, 3 * _D * _D_FF
_COUNT = _GAINS + _ATTENTION + _FFN
E5 = Questions("31.5", fields=[Field(None, read_int, _COUNT, {
    _COUNT - _GAINS: "no_gains", _COUNT - _GAINS // 2: "one_gain", _COUNT - _D * _D_FF: "two_ffn",
    _COUNT - _D * _D: "three_attention", _COUNT - _FFN: "no_ffn", _COUNT - _ATTENTION: "no_attention"})])
E6 = Questions("31.6", fields=[option("post", 1), option("first", 1), option("example", 2, {3: "first.3"})])

# 31.7-31.9: code against the library on hidden blocks -------------------------------------------
def _random_block(seed: int, gains: bool = False) -> DecoderBlock:   # with gains: gamma_a and gamma_f differ, not 1
    config = DecoderBlockConfig(model_width=8, heads=2, feed_forward_width=12, max_positions=4)
    block, draws = DecoderBlock.new("hidden", config, SplitMix64(seed)), np.linspace(0.5, 1.5, 8)
    norms = [RmsNorm(Parameter(f"hidden.{n}.gain", g), epsilon=1e-5) for n, g in (
        ("attention_norm", draws), ("ffn_norm", draws[::-1].copy()))]
    return DecoderBlock(norms[0], block.attention, norms[1], block.feed_forward) if gains else block

def _block_cases(first: tuple) -> list[tuple]:
    return [first, (_random_block(3), depth_lab.lab_data(width=8, batch=2, tokens=4, seed=3)[0]),
            (_random_block(4, gains=True), 2.5 * depth_lab.lab_data(width=8, batch=1, tokens=4, seed=4)[0])]

def _wired(wiring):   # a function of (block, x) as arrays, from a stage wiring of depth_lab
    return lambda block, x: wiring(depth_lab.parts_of(block), Tensor(x)).value

def _swapped_norms(p: depth_lab.Parts, x: Tensor) -> Tensor:
    return depth_lab.post_norm(dataclasses.replace(p, attention_norm=p.feed_forward_norm,
                                                   feed_forward_norm=p.attention_norm), x)

E7 = Code("31.7", name="post_norm_block", reference=_wired(depth_lab.post_norm), setup=SETUP,
          cases=lambda: _block_cases((chapter.build_block(), lesson31.scaled_input())), mistakes={
              "pre": _wired(depth_lab.pre_norm), "swapped": _wired(_swapped_norms), "identity": lambda b, x: x})
E8 = Code("31.8", name="block_without_attention", setup=SETUP,
          reference=_wired(lambda p, x: x + p.feed_forward(p.feed_forward_norm(x))),
          cases=lambda: _block_cases((chapter.build_block(), chapter.example_input())), mistakes={
              "identity": lambda b, x: x, "raw_ffn": _wired(lambda p, x: x + p.feed_forward(x)),
              "full": _wired(depth_lab.pre_norm)},
          right=lambda outputs, cases: {"gap": f"{np.abs(np.asarray(outputs[0]) - cases[0][1]).max():.3f}"})

def _count(d_model: int, heads: int, d_ff: int) -> int:
    return 2 * d_model + 4 * d_model * d_model + 3 * d_model * d_ff

E9 = Code("31.9", name="count_parameters", reference=_count, setup=SETUP,
          cases=lambda: [(4, 2, 4), (8, 2, 20), (6, 3, 10), (16, 4, 40)], mistakes={
              "no_gains": lambda d, h, f: 4 * d * d + 3 * d * f, "two_ffn": lambda d, h, f: _count(d, h, f) - d * f,
              "tensors": lambda d, h, f: 9})

# 31.10: why Pre trains: Adam's first step does not follow the gradient's scale, and with a zero branch a Pre
# sublayer passes the gradient on unchanged (the path of identities) while Post's still goes through the norm
E10 = Questions("31.10", fields=[option("adam", 2), option("pre", 1), option("post", 3)])

# 31.15: the chapter's claim: with every branch at zero a Pre stack passes the gradient down unchanged (the
# clean identity path), and Post stalls without warm-up because, its stream held at RMS 1, each Adam step keeps
# moving its output far before the model uses the context (not because of the gradients' size)
E15 = Questions("31.15", fields=[option("stack", 1), option("warmup", 2)])
# 31.11: the depth lab, the top block's gradient against the 1/sqrt(L) law --------------------------
def _ratio(variant: str = "pre", tensor: str | None = "ffn.down.weight", scale: float = 3**0.5) -> float:
    # g(16)/g(4) as the lab measures it, afresh at every check: no cache a learner's patch could poison
    top = top_block_gradient((4, 16), tensor=tensor, variants=(variant,), weight_scale=scale)[variant]
    return float(top[1] / top[0])

_SLIPS = {"block": {"tensor": None}, "post": {"variant": "post"}, "scale_1": {"scale": 1.0}}  # slip: its options
E11 = Questions("31.11", fields=[
    Field("predicted", read_number, 0.5, accept=rounded(1), rules=(
        lambda v, _: v > 1 and "grows", lambda v, _: near(v, 0.25, 2) and "one_over_l")),
    Field("measured", read_number, _ratio, accept=rounded(2), rules=(
        *(lambda v, _, k=k, o=o: known_slip(v, _ratio(**o)) and k for k, o in _SLIPS.items()),
        lambda v, right: known_slip(v, 1 / right) and "inverse", coarse(2)))])

# 31.13 and 31.14 share one list of the five verdicts of training_lab.verdict, numbered alike in both
# statements, checkers and solutions: 1 "learns", 2 "barely learns", 3 "does not learn", 4 "learns, then
# regresses", 5 "blows up"

# 31.13: eight blocks at η = 0.02; the verdicts of training_lab.train_stack (seed 31), pinned by
# tests/test_training_lab.py so the checker does not train: Pre option 1 "learns", Post option 3 "does not learn"
E13 = Questions("31.13", fields=[option("pre", 1, {2: "barely", 3: "stall", 4: "breaks"}, count=5),
                                 option("post", 3, {1: "learns", 2: "barely", 4: "breaks"}, count=5)])

# 31.14: Post of eight blocks at η = 0.03 with 100 steps of warm-up (seed 31, 120 steps); the right verdict
# (option 2, "barely learns") is pinned by tests/test_lesson31.py (the lab's verdict, and none of seeds 31-40
# learns), so the checker does not train (0.7 s a run)
E14 = Questions("31.14", fields=[option(None, 2, count=5)])

# 31.12: the Jacobian of RMSNorm for one row, against central differences the checker takes itself --------
def _rmsnorm_row(u: np.ndarray, gamma: np.ndarray, eps: float) -> np.ndarray:
    return gamma * u / np.sqrt(np.mean(u * u) + eps)

def _differences(u: np.ndarray, gamma: np.ndarray, eps: float) -> np.ndarray:
    """[d, d]: column j is (y(u + h e_j) - y(u - h e_j)) / 2h, Richardson-extrapolated over h and h/2 so that
    its error (about 1e-12 / RMS) stays far below the tolerance ATOL; h is 1e-3 of the row's RMS."""
    u, gamma = np.asarray(u, dtype=np.float64), np.asarray(gamma, dtype=np.float64)
    step, eye = 1e-3 * np.sqrt(np.mean(u * u) + eps), np.eye(u.size)

    def central(h: float) -> np.ndarray:
        return np.stack([(_rmsnorm_row(u + h * e, gamma, eps) - _rmsnorm_row(u - h * e, gamma, eps)) / (2 * h)
                         for e in eye], axis=1)
    return (4 * central(step / 2) - central(step)) / 3

def _formula(u, gamma, eps, gains=True, mean=True, projection=True):   # the right formula, and slips of it
    rms = np.sqrt(np.mean(u * u) + eps)
    n = u / rms
    inner = np.eye(u.size) - projection * np.outer(n, n) / (u.size if mean else 1)
    return (np.diag(gamma) if gains else np.eye(u.size)) @ inner / rms

def _row(size: int, rms: float, seed: int) -> np.ndarray:
    u = 2 * SplitMix64(seed).next_f64(size) - 1
    return rms * u / np.sqrt(np.mean(u * u))

def _jacobian_cases() -> list[tuple]:
    first = np.asarray(chapter.example_input()[0, 1], dtype=np.float64)   # a row of the chapter's X, RMS 1
    return [(first, np.ones(first.size), 0.0),
            (_row(6, 1.0, 13), np.linspace(0.5, 1.5, 6), 1e-5),
            (_row(5, 0.01, 14), np.linspace(2.0, 0.5, 5), 1e-5),
            (_row(8, 100.0, 15), np.linspace(-1.0, 1.0, 8), 1e-5)]

def _jacobian_right(outputs: list, cases: list) -> dict:
    gap = max(float(np.abs(np.asarray(j, dtype=np.float64) - _differences(*c)).max())
              for j, c in zip(outputs, cases, strict=True))
    along = float(np.abs(np.asarray(outputs[0], dtype=np.float64) @ cases[0][0]).max())
    return {key: f"{value:.0e}" if value else "0" for key, value in (("gap", gap), ("along", along))}

# its own "element" text names no value of the reference, nor the gap to it: probing stays blind
E12 = Code("31.12", name="rmsnorm_jacobian", reference=_differences, setup=SETUP, cases=_jacobian_cases,
           mistakes={"diagonal": lambda u, g, e: _formula(u, g, e, projection=False),
                     "no_mean": lambda u, g, e: _formula(u, g, e, mean=False),
                     "no_gain": lambda u, g, e: _formula(u, g, e, gains=False),
                     "transposed": lambda u, g, e: _formula(u, g, e).T,
                     "no_eps": lambda u, g, e: _formula(u, g, 0.0)},
           right=_jacobian_right)
OWN_TEXTS = ("scalar", "element")   # chapter 31's versions of the common texts: 31.9, 31.12 show no reference

EXERCISES = {1: E1, 2: E2, 3: E3, 4: E4, 5: E5, 6: E6, 7: E7, 8: E8, 9: E9, 10: E10, 11: E11, 12: E12, 13: E13,
             14: E14, 15: E15}
globals().update({f"check_{number}": exercise.check for number, exercise in EXERCISES.items()})
remember_package()
