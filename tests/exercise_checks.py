"""Test-only data for the exercise contract (``test_exercises.py``), kept out of the package.

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

import numpy as np

from llm_from_scratch.ch30 import exercises as ch30
from llm_from_scratch.ch31 import exercises as ch31

MODULES = {"30": ch30, "31": ch31}


def right(chapter: str, number: int, **changes: object) -> object:
    """The reference answer of an exercise, with some of its keys changed."""
    answer = MODULES[chapter].EXERCISES[number].solution()
    return {**answer, **changes} if changes else answer


VISIBLE = [[int(n <= m) for n in range(4)] for m in range(4)]
ZEROS, ONES = [[0] * 4 for _ in range(4)], [[1] * 4 for _ in range(4)]
STRICT = [[int(n < m) for n in range(4)] for m in range(4)]
OPEN_PAST = [[int(n <= m and not (m == 3 and n == 0)) for n in range(4)] for m in range(4)]

WRONG = {
    ("30", 1): [({1: "ok", 2: "ok", 3: "ok", 4: "indivisible", 6: "ok"}, "wrong_value"),
                ({"1": "ok", 2: "odd", 3: "ok", 4: "indivisible", 6: "odd"}, "quoted_key"),
                ({1: "ok", 2: "odd", 3: "ok", 4: "indivisible", 6: "odd", 5: "ok"}, "unknown_key"),
                ({1: "OK", 2: "Odd", 3: "ok", 4: "indivisible", 6: "odd", 7: 1}, "unknown_key"),
                ({1: "okay", 2: "odd", 3: "ok", 4: "indivisible", 6: "odd"}, "not_label"), ("ok", "not_mapping")],
    ("30", 2): [(right("30", 2, split=[2, 3, 5]), "wrong"), (right("30", 2, qkv=["2", 5, 12]), "quoted"),
                (right("30", 2, qkv=(2.5, 5, 12)), "not_int"), (right("30", 2, qkv={2, 5, 12}), "unordered")],
    ("30", 3): [({0: ZEROS, 1: VISIBLE}, "diagonal"), ({0: STRICT, 1: STRICT}, "diagonal"),
                ({0: VISIBLE, 1: OPEN_PAST}, "wrong"), ({0: VISIBLE, 1: [[1, 1, 0, 0], *VISIBLE[1:]]}, "future"),
                ({0: VISIBLE, 1: VISIBLE[:3]}, "rows"), ({0: VISIBLE, 1: [row[:3] for row in VISIBLE]}, "cells"),
                ({0: VISIBLE, 1: [[2, 0, 0, 0], *VISIBLE[1:]]}, "zero_one"), (VISIBLE, "not_mapping")],
    ("30", 4): [("B", "not_option"), (5, "not_option"), (" 3) ", "3")],
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
    ("30", 8): [(12345, "wrong"), (10**400, "wrong"), ("65536", "quoted"), (65536.5, "not_int")],
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
    ("31", 10): [({"predicted": 0.5, "measured": 0.5}, "coarse"), ({"predicted": 2, "measured": 0.54}, "grows"),
                 ({"predicted": 0.25, "measured": 0.54}, "one_over_l"), ({"predicted": 0.7, "measured": 0.54},
                 "predicted.wrong"), ({"predicted": 0.5, "measured": 0.537}, "measured.wrong"),
                 ({"predicted": 0.5, "measured": 0.52}, "block"), ({"predicted": 0.5, "measured": 0.97}, "post"),
                 ({"predicted": 0.5, "measured": 0.81}, "scale_1"), ({"predicted": 0.5, "measured": 1.86}, "inverse"),
                 ({"predicted": "0.5", "measured": 0.54}, "quoted"), ({"predicted": 0.5, "measured": np.inf},
                 "not_number")],
}

# Rounded the way the chapter prints it, or to more decimals: accepted (31.10, issue 17).
ROUNDED = {("31", 10): [{"predicted": 0.5, "measured": 0.54}, {"predicted": 0.50, "measured": 0.538},
                        {"predicted": 0.5, "measured": 0.5379}]}

SECRETS = {   # what a wrong answer's feedback may not say: it once gave the answer away
    ("30", 1): ["другое условие", "оба условия"],     # three labels: naming the violated condition names the label
    ("30", 3): [r"\(\d, \d\)"],                      # a list of the cells that must be 1
}

PROBES = {   # tried one after another: all-same labels, all-zero or all-one matrices, every option
    ("30", 1): [{h: label for h in (1, 2, 3, 4, 6)} for label in ("ok", "odd", "indivisible")],
    ("30", 3): [{0: m, 1: m} for m in (ZEROS, ONES, STRICT, [list(r) for r in zip(*VISIBLE, strict=True)])],
    ("30", 4): [1, 2, 3, 4], ("30", 7): [{"ends": k, "why": k} for k in range(1, 5)],
    ("30", 6): [{"unchanged": set(), "may_change": set()}, {"unchanged": set(range(5)), "may_change": set(range(5))}],
    ("31", 3): [{"x_prime": k, "identity": k} for k in range(1, 5)], ("31", 4): [{"rows": set(), "part": 1}],
    ("31", 6): [{"post": k, "first": k, "example": k} for k in range(1, 5)], ("31", 12): [1, 2, 3, 4],
}

BLIND = {   # functions that know nothing, as a learner probes a code exercise: 0 everywhere, then 1
    ("31", 9): [lambda d, h, f: 0, lambda d, h, f: 1],
    ("31", 13): [lambda u, g, e: np.zeros((u.size, u.size)), lambda u, g, e: np.ones((u.size, u.size))],
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
