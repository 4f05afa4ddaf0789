"""Test-only data for the exercise contract (``test_exercises.py``), kept out of the package.

* ``SPELLED``: right answers written another way (a number as a string or a float, a label in Cyrillic
  look-alike letters, a numbered key as a string) that the one reading rule accepts;
* ``WRONG``: typical wrong answers that the tables' rules, readers and fallbacks answer (the tables'
  own ``mistakes`` are tested from the tables), each with the text key its feedback must carry;
* ``SECRETS``: what no wrong answer's feedback may say (each leaked the answer in an earlier checker);
* ``PROBES``: answers a learner tries one after another to corner the right one;
* ``BLIND``: functions that probe a code exercise whose feedback must not show the reference's values;
* ``broken`` and ``slips``: learner functions that fail in every way a function can.
"""

from __future__ import annotations

import sys
import time
from fractions import Fraction

import numpy as np

from llm_from_scratch.ch30 import exercises as ch30
from llm_from_scratch.ch31 import exercises as ch31

MODULES = {"30": ch30, "31": ch31}


def right(chapter: str, number: int, **changes: object) -> object:
    """The reference answer of an exercise, with some of its keys changed."""
    answer = MODULES[chapter].EXERCISES[number].solution()
    return {**answer, **changes} if changes else answer


RIGHT_1 = {1: "ok", 2: "odd", 3: "ok", 4: "indivisible", 6: "odd"}

SPELLED = {   # one rule for numbers and labels in every checker (issue 27)
    ("30", 1): [{**RIGHT_1, 1: "\u043e\u043a"}, {**RIGHT_1, 2: "\u043edd"}, {**RIGHT_1, 3: "OK"},   # Cyrillic о, к
                {"1": "ok", 2.0: "odd", np.int64(3): "ok", 4: "indivisible", " 6 ": "odd"}],
    ("30", 2): [right("30", 2, qkv=["2", 5.0, np.int64(12)], split=np.array([2, 3, 5, 4]))],
    ("30", 4): [2, 2.0, "2", " 2) ", "2.", np.int64(2), np.float32(2.0), np.array(2), Fraction(2)],
    ("30", 6): [{"unchanged": [0, 1, 2.0], "may_change": ("3", np.int64(4))}],
    ("30", 8): [65536, 65536.0, "65536", "65 536", "65_536", np.float64(65536), "6.5536e4"],
    ("30", 10): [right("30", 10, std_dh=1, std_dmodel="0.354"), right("30", 10, std_dmodel=1 / 8 ** 0.5)],
    ("30", 11): [{"one_head": "2/3", "two_heads": 1 / 3, "heads": 3.0}, {"one_head": 0.67, "two_heads": "0.33",
                                                                           "heads": "3"}],
    ("31", 5): [str(right("31", 5)), float(right("31", 5))],
    ("31", 11): [{"predicted": "0.5", "measured": "0.54"}, {"predicted": np.float32(0.5), "measured": 0.538}],
}

WRONG = {
    ("30", 1): [({1: "ok", 2: "ok", 3: "ok", 4: "indivisible", 6: "ok"}, "claims"),
                ({**RIGHT_1, 4: "odd"}, "claim.odd"), ({**RIGHT_1, 1: "\u0449\u043b"}, "typed_in_layout"),
                ({**RIGHT_1, 6: "\u043ed\u0434"}, "foreign_letters"), ({**RIGHT_1, 6: "odd", 4: ...}, "fill_key"),
                ({1: "ok", 2: "odd", 3: "ok", 4: "indivisible", 6: "odd", 5: "ok"}, "unknown_key"),
                ({1: "OK", 2: "Odd", 3: "ok", 4: "indivisible", 6: "odd", 7: 1}, "unknown_key"),
                ({1: "okay", 2: "odd", 3: "ok", 4: "indivisible", 6: "odd"}, "not_label"), ("ok", "not_mapping")],
    ("30", 2): [(right("30", 2, split=[2, 3, 5]), "wrong"), (right("30", 2, qkv=["2,5", 5, 12]), "comma"),
                (right("30", 2, qkv=(2.5, 5, 12)), "not_int"), (right("30", 2, qkv={2, 5, 12}), "unordered")],
    ("30", 3): [({"weights_1": 10000, "weights_8": 80000, "products_1": 640000, "products_8": 320000}, "wrong_value"),
                ({"weights_1": 10000, "weights_8": 80000, "products_1": "640,000", "products_8": 640000}, "comma"),
                ({"weights_1": 10000.5, "weights_8": 80000, "products_1": 640000, "products_8": 640000}, "not_int"),
                ({"weights_1": 10000, "weights_8": 80000, "products_1": 640000}, "fill_key")],
    ("30", 4): [("B", "not_option"), (5, "not_option"), (" 3) ", "3"), (2.5, "not_option"), (True, "not_option"),
                ("3.0", "3")],
    ("30", 5): [(right("30", 5, concat=list("abdc")), "wrong"), (right("30", 5, y2="b + d"), "y2.wrong"),
                (right("30", 5, y2="a +"), "form_parse"), (right("30", 5, concat=list("abc")), "row_length"),
                (right("30", 5, heads_y6={0, 7}), "y6.outside"), (right("30", 5, heads_y6={1, 3}), "y6.row"),
                (right("30", 5, heads_y6={2}), "heads_y6.wrong"), (right("30", 5, y2=3), "form_type")],
    ("30", 6): [({"unchanged": {0, 1, 2, 3}, "may_change": {4}}, "own"), ({"unchanged": {0, 1, 2, 4},
                "may_change": {3}}, "right_of"), ({"unchanged": {0, 1}, "may_change": {2, 3, 4}}, "left_of"),
                ({"unchanged": {0, 1, 9}, "may_change": {3, 4}}, "outside"),
                ({"unchanged": {}, "may_change": {3, 4}}, "empty_dict"),
                ({"unchanged": 0, "may_change": {3, 4}}, "one_number")],
    ("30", 7): [({"ends": "C", "why": 1}, "not_option"), ({"ends": 3}, "fill_key")],
    ("30", 8): [(12345, "wrong"), (10**400, "wrong"), ("65,536", "comma"), (65536.5, "not_int"),
                ("1e400", "not_int"), ("шестьдесят", "not_int")],
    ("30", 10): [(right("30", 10, std_dh=8), "std.raw"), (right("30", 10, std_dh=1.01), "std.measured"),
                 (right("30", 10, std_dmodel=1.0), "std_dmodel.own"),
                 (right("30", 10, std_dmodel=0.125), "std_dmodel.ratio"),
                 (right("30", 10, std_dmodel=2.83), "std_dmodel.inverse"),
                 # a guess coarser than the answer's two decimals is neither hinted nor judged: 2.8 is
                 # within 0.05 of the inverse 2.83, and 0.4 of the answer; a reply that told them apart
                 # would locate the answer digit by digit
                 (right("30", 10, std_dmodel=2.8), "coarse"),
                 (right("30", 10, std_dmodel=2.84), "std_dmodel.wrong"),
                 (right("30", 10, std_dmodel=0.044), "std_dmodel.unit"),
                 (right("30", 10, std_dmodel=0.4), "coarse"), (right("30", 10, std_dmodel=0.5), "coarse"),
                 (right("30", 10, std_dmodel=0.51), "std_dmodel.wrong"),
                 (right("30", 10, std_dh=2.51), "std_dh.wrong"), (right("30", 10, top_dh=0.871), "top.raw"),
                 (right("30", 10, top_dmodel=0.125), "top.uniform"), (right("30", 10, top_dmodel=0.3), "coarse"),
                 (right("30", 10, top_dmodel=0.31), "wrong"),
                 (right("30", 10, top_dh="0,36"), "comma"), (right("30", 10, top_dh=np.nan), "not_number")],
    ("30", 11): [({"one_head": 0.5, "two_heads": 0.5, "heads": 2}, "one_head.half"),
                 ({"one_head": 1 / 3, "two_heads": 2 / 3, "heads": 3}, "one_head.swapped"),
                 ({"one_head": 1, "two_heads": 0, "heads": 1}, "one_head.all"),
                 ({"one_head": 0, "two_heads": 0.5, "heads": 3}, "one_head.zero"),
                 ({"one_head": 0.7, "two_heads": 0.1, "heads": 5}, "coarse"),
                 ({"one_head": 0.9, "two_heads": 0.1, "heads": 5}, "coarse"),
                 ({"one_head": 0.91, "two_heads": 0.1, "heads": 5}, "one_head.wrong"),
                 ({"one_head": 0.9, "two_heads": 0.11, "heads": 5}, "two_heads.wrong"),
                 ({"one_head": 0.9, "two_heads": 0.1, "heads": 5}, "heads.more"),
                 ({"one_head": 0.9, "two_heads": 0.1, "heads": 0}, "heads.none"),
                 ({"one_head": 0.9, "two_heads": 2 / 3, "heads": 2.5}, "not_int")],
    ("31", 1): [(["attention_norm", "attention", "residual_1", "ffn_norm", "ffn"], "missing"),
                (["attention_norm", "attention", "attention", "ffn_norm", "ffn", "residual_2"], "repeated"),
                (["attention", "residual_1", "attention_norm", "ffn", "residual_2", "ffn_norm"], "post"),
                (["attention", "attention_norm", "residual_1", "ffn_norm", "ffn", "residual_2"], "early.attention"),
                (["attention_norm", "attention", "ffn_norm", "residual_1", "ffn", "residual_2"], "early.ffn_norm"),
                (set(ch31.STEPS), "unordered")],
    ("31", 2): [(right("31", 2, f=[2, 5, 32]), "hidden"), (right("31", 2, x=[2, 5]), "rank"),
                (right("31", 2, a=[2, 5, 8]), "width"), (right("31", 2, y=[5, 2, 12]), "wrong"),
                (right("31", 2, axis="D"), "not_option"), ({**right("31", 2), "N_A": [2, 5, 12]}, "duplicate_key")],
    ("31", 4): [({"rows": {0, 1, 2, 3, 4}, "part": 1}, "changed"), ({"rows": {0, 1}, "part": 1}, "rows.wrong"),
                ({"rows": {0, 7}, "part": 1}, "outside")],
    ("31", 5): [(1000, "wrong"), (10**400, "wrong"), (True, "not_int")],
    ("31", 15): [({"stack": "1", "warmup": 5}, "not_option"), ({"stack": 1}, "fill_key"),
                 ({"stack": 1, "warmup": 2, "why": 3}, "unknown_key")],
    ("31", 11): [({"predicted": 0.5, "measured": 0.5}, "coarse"), ({"predicted": 2, "measured": 0.54}, "grows"),
                 ({"predicted": 0.25, "measured": 0.54}, "one_over_l"), ({"predicted": 0.7, "measured": 0.54},
                 "predicted.wrong"), ({"predicted": 0.5, "measured": 0.537}, "measured.wrong"),
                 ({"predicted": 0.5, "measured": 0.52}, "block"), ({"predicted": 0.5, "measured": 0.97}, "post"),
                 ({"predicted": 0.5, "measured": 0.81}, "scale_1"), ({"predicted": 0.5, "measured": 1.86}, "inverse"),
                 ({"predicted": 0.5, "measured": 1.9}, "coarse"),   # neither hinted nor judged, see 30.10
                 ({"predicted": "половина", "measured": 0.54}, "not_number"), ({"predicted": 0.5, "measured": np.inf},
                 "not_number")],
}

# Rounded the way the chapter prints it, or to more decimals: accepted (31.11, issue 17).
ROUNDED = {("31", 11): [{"predicted": 0.5, "measured": 0.54}, {"predicted": 0.50, "measured": 0.538},
                        {"predicted": 0.5, "measured": 0.5379}]}

SECRETS = {   # what a wrong answer's feedback may not say: it once gave the answer away
    ("30", 1): ["другое условие", "оба условия"],     # three labels: naming the violated condition names the label
    ("30", 3): [r"10\D?000\b", r"80\D?000\b", r"640\D?000\b"],   # the counts themselves
    ("30", 10): [r"0\.35[0-9]", r"0\.19[0-9]", r"0\.20\b", r"\b1\.0\b"],   # the references, measured or not
    ("30", 11): [r"\b[12]/3\b", r"0\.33", r"0\.6[67]", r"тр(и|ёх|ех) голов"],
}

PROBES = {   # tried one after another: all-same labels, all-zero or all-one matrices, every option
    ("30", 1): [{h: label for h in (1, 2, 3, 4, 6)} for label in ("ok", "odd", "indivisible")],
    ("30", 3): [dict.fromkeys(("weights_1", "weights_8", "products_1", "products_8"), v) for v in (0, 10000, 640000)],
    ("30", 4): [1, 2, 3, 4], ("30", 7): [{"ends": k, "why": k} for k in range(1, 5)],
    ("30", 10): [dict.fromkeys(("std_dh", "std_dmodel", "top_dh", "top_dmodel"), v) for v in (0, 0.5, 2)],
    ("30", 11): [{"one_head": v, "two_heads": v, "heads": k} for v, k in ((0, 1), (0.5, 2), (0.25, 4))],
    ("30", 6): [{"unchanged": set(), "may_change": set()}, {"unchanged": set(range(5)), "may_change": set(range(5))}],
    ("31", 3): [{"x_prime": k, "identity": k} for k in range(1, 5)], ("31", 4): [{"rows": set(), "part": 1}],
    ("31", 6): [{"post": k, "first": k, "example": k} for k in range(1, 5)], ("31", 14): [1, 2, 3, 4, 5],
    ("31", 10): [{"adam": k, "pre": k, "post": k} for k in range(1, 5)],
    ("31", 15): [{"stack": k, "warmup": k} for k in range(1, 5)],
}

BLIND = {   # functions that know nothing, as a learner probes a code exercise: 0 everywhere, then 1
    ("30", 12): [lambda x, *weights: np.zeros_like(x), lambda x, *weights: np.ones_like(x)],
    ("31", 9): [lambda d, h, f: 0, lambda d, h, f: 1],
    ("31", 12): [lambda u, g, e: np.zeros((u.size, u.size)), lambda u, g, e: np.ones((u.size, u.size))],
}


def broken(arguments: int) -> list:
    """Functions with ``arguments`` parameters that fail in every way a learner's function can."""
    names = [f"a{i}" for i in range(arguments)]
    bodies = {"raises": "raise ValueError('учащийся ошибся')", "none": "return None", "text": "return 'строка'",
              "shape": "return np.zeros(3)", "nan": "return np.full(np.shape(a0), np.nan)", "first": "return a0",
              "exits": "sys.exit(3)", "recursion": "return f(*args)", "huge": "return 10 ** 400"}
    made = []
    for name, body in bodies.items():
        namespace = {"np": np, "sys": sys}
        exec(f"def f({', '.join(names)}):\n    args = ({', '.join(names)},)\n    {body}", namespace)
        namespace["f"].__name__ = name
        made.append(namespace["f"])
    return made


def loops(*args):
    while True:
        pass


def swallows(*args):
    """Catches what a learner usually catches, ``Exception``, and loops on."""
    while True:
        try:
            while True:
                time.sleep(0.01)
        except Exception:
            pass


def sleeps(*args):
    """Waits 10 s in one call into C, as ``time.sleep(10)`` in an answer does."""
    time.sleep(10)
    return args[0]


def catches_all(*args):
    """Catches everything, the time limit included, and returns something."""
    try:
        loops()
    except BaseException:
        return args[0]


def learner_mha(x, w_q, w_k, w_v, w_o, heads, rope_base, slip=None):
    """30.12 as a learner writes it, written apart from the checker's reference; ``slip`` is one of its
    named mistakes, made the way a learner makes it."""
    batch, tokens, width = x.shape
    d_h = width // heads

    def split(y):
        if slip == "no_transpose":
            return y.reshape(batch, heads, tokens, d_h)
        return y.reshape(batch, tokens, heads, d_h).transpose(0, 2, 1, 3)

    def rope(y):
        over = width if slip == "rope_model" else d_h      # the slip: RoPE's steps over d_model
        angles = np.arange(tokens)[:, None] * rope_base ** (-np.arange(0, d_h, 2) / over)
        cos, sin = np.cos(angles), np.sin(angles)
        out = y.copy()
        out[..., 0::2] = y[..., 0::2] * cos - y[..., 1::2] * sin
        out[..., 1::2] = y[..., 0::2] * sin + y[..., 1::2] * cos
        return out

    q, k, v = rope(split(x @ w_q)), rope(split(x @ w_k)), split(x @ w_v)
    if slip == "rope_values":
        v = rope(v)
    scores = q @ np.swapaxes(k, -1, -2)
    if slip != "no_scale":
        scores = scores / np.sqrt(width if slip == "model_width" else d_h)
    if slip != "no_mask":
        scores = np.where(np.triu(np.ones((tokens, tokens), bool), 1), -np.inf, scores)
    axis = -2 if slip == "softmax_axis" else -1
    weights = np.exp(scores - scores.max(axis=axis, keepdims=True))
    weights /= weights.sum(axis=axis, keepdims=True)
    heads_out = weights @ v
    if slip == "no_transpose":
        merged = heads_out.reshape(batch, tokens, width)
    else:
        merged = heads_out.transpose(0, 2, 1, 3).reshape(batch, tokens, width)
    return merged if slip == "no_output" else merged @ w_o


MHA_SLIPS = ("no_scale", "model_width", "no_transpose", "rope_values", "no_mask", "softmax_axis", "no_output",
             "rope_model")
