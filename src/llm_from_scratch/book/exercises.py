"""Exercise checks: an exercise is a table, and one evaluator checks every table.

``Questions``: each ``Field`` says how to read its part of the answer, the right value, known mistakes
(value -> text key), rules (value -> text key) and its fallback text; a ``blind`` table restates each
field as the learner's claim instead of marking it (see ``Questions``). ``Code``: the learner's function
against the reference on hidden cases, one call a case within ``LIMIT`` seconds; known wrong functions and
rules name the mistake. The words are in ``text/<edition>/``: another edition adds such modules
(``LLM_FROM_SCRATCH_EDITION``), not code.

Numbers are read by one rule (``read_number``) wherever an answer holds one: an option, a count, a shape, a
set of positions, a dictionary's numbered key, a measured value. ``2``, ``2.0``, ``np.int64(2)``, a 0-d
array and the strings ``"2"``, ``" 2.0 "``, ``"65 536"`` or ``"1/3"`` are the same number; an integer is
asked for only when the value is not whole (``2.5``). Labels are read by ``word``: case, spaces, hyphens
and the Cyrillic letters that look Latin (a Cyrillic o and k typed for ``"ok"``) aside; a label typed in
the Russian keyboard layout, or with other Cyrillic letters, is told so with the letters shown.
"""

from __future__ import annotations

import contextlib
import copy
import ctypes
import decimal
import fractions
import functools
import math
import numbers
import operator
import re
import sys
import threading
import time
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..checks import Shown, is_int
from ..text import texts
from .formats import wrap

LIMIT = 3.0  # seconds for one call of a learner's function
ATOL = 1e-9  # how far a code exercise's numbers may be from the reference's
WIDTH = 75   # characters in a line of a book's output block

COMMON = texts()
MARKS = {"ok": "✓", "wrong": "✗", "missing": "…", "claim": "•"}


@dataclass(frozen=True)
class Item:   # one line of feedback: a field of the answer or a hidden case
    label: str
    status: str   # ok, wrong, missing, or claim: the learner's answer restated, neither right nor wrong
    message: str

    def __str__(self) -> str:
        return f"{MARKS[self.status]} {self.label}: {self.message}"


@dataclass(frozen=True)
class Feedback:
    exercise: str
    correct: bool
    items: tuple[Item, ...] = ()
    hint: str = ""
    notes: tuple[str, ...] = ()
    status: str = ""           # the header's verdict, when it is not the usual one
    placeholder: bool = False
    unit: str = "score"        # the header counts fields ("score") or hidden cases ("score_cases")

    def verdict(self) -> str:
        if self.status:
            return self.status
        if self.correct:
            return COMMON["correct"]
        if len(self.items) < 2:
            return COMMON["wrong"]
        right = sum(item.status == "ok" for item in self.items)
        return COMMON[self.unit].format(right=right, total=len(self.items))

    def __str__(self) -> str:
        lines = [COMMON["header"].format(number=self.exercise, status=self.verdict())]
        lines += [f"  {item}" for item in self.items]
        lines += self.notes
        if self.hint:
            lines.append(COMMON["hint"].format(hint=self.hint))
        return "\n".join(lines)

    __repr__ = __str__   # a notebook shows a returned feedback as its text


class Unreadable(Exception):   # the answer cannot be read as asked: a text key and its arguments
    def __init__(self, key: str, **args: object) -> None:
        super().__init__(key)
        self.key, self.args_ = key, args


class TimeLimit(BaseException):
    """A learner's function ran out of time (a ``BaseException``: ``except Exception`` lets it pass)."""


@dataclass(frozen=True)
class Exercise:
    number: str   # "30.1": its texts are those of exercise 1 in the chapter's text module

    @functools.cached_property
    def text(self) -> Mapping[str, Any]:
        """The edition's texts of this exercise, ``"N.key"`` as ``{key: text or (text, hint)}``."""
        chapter, number = self.number.split(".")
        prefix = f"{number}."
        return {key.removeprefix(prefix): text for key, text in texts(f"ch{chapter}").items()
                if key.startswith(prefix)}

    def say(self, key: str, args: Mapping[str, object] | None = None) -> str:
        entry = self.text.get(key, COMMON.get(key, key))
        text = entry[0] if isinstance(entry, tuple) else entry
        return text.format(**(args or {}))

    def unfilled(self, hint: str = "") -> Feedback:
        return Feedback(self.number, False, hint=hint or COMMON["fill"], status=COMMON["unfilled"], placeholder=True)

    def feedback(self, answer: object) -> Feedback:
        """Feedback on any answer: nothing the answer raises gets out, but a learner's interrupt or exit."""
        try:
            result = self.unfilled() if answer is None or answer is ... else self.evaluate(answer)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as error:   # Unreadable; anything else is a safety net the contract test keeps unused
            if isinstance(error, Unreadable):
                message = self.say(error.key, error.args_)
            else:
                message = self.say("failed", {"error": type(error).__name__})
            result = Feedback(self.number, False, (Item(COMMON["answer"], "wrong", message),), COMMON["format_hint"])
        changed = patched()
        if not changed:
            return result
        names = ", ".join(changed[:3]) + (", …" if len(changed) > 3 else "")
        note = COMMON["note"].format(note=COMMON["patched"].format(names=names))
        return replace(result, notes=(*result.notes, note))

    def check(self, *args: object, **kwargs: object) -> None:
        """Print the feedback on one answer; a wrong call prints how to call."""
        if len(args) != 1 or kwargs:
            chapter, number = self.number.split(".")
            usage = COMMON["usage"].format(call=f"ex{chapter}.check_{number}")
            print(wrap(COMMON["header"].format(number=self.number, status=usage)))
            return
        print(wrap(str(self.feedback(args[0]))))


# --- answers that are values or dictionaries ------------------------------------------------------
@dataclass(frozen=True)
class Field:
    key: Any                   # the dictionary key; None: the whole answer is this value
    read: Callable[[object], Any]
    right: Any                 # the right value, or a function that computes it at each check
    mistakes: Mapping[Any, str] = field(default_factory=dict)
    rules: Sequence[Callable[[Any, Any], Any]] = ()   # (value, right) -> falsy, a key, or (key, arguments)
    accept: Callable[[Any, Any], bool] = operator.eq

    def expected(self) -> Any:
        return self.right() if callable(self.right) else self.right


@dataclass(frozen=True, kw_only=True)
class Questions(Exercise):
    """Fields read, judged and explained one by one.

    A ``blind`` table is for fields of a few labels, where a mark on each field would let a learner find
    the answer by elimination: give every field the same label, read which ones are marked wrong, try the
    next label (three tries for 30.1). When the answer is not right, a blind table marks no field right
    or wrong and gives no count; it restates each field's value as the claim it makes (text
    ``claim.<value>``, with the field's key), in the same form whether the claim is true or false, and
    the header says that at least one claim is false. The reason a wrong label is wrong is in its line:
    the claim, made concrete for that key, is false, which the learner checks; and nothing in the
    feedback depends on the right answer but the one bit "right or not". A missing or unreadable field
    is told as in any table (that depends on the answer alone), and a right answer is marked ✓ throughout.
    """

    fields: tuple[Field, ...]
    blind: bool = False

    def solution(self) -> object:
        first = self.fields[0]
        if first.key is None:
            return first.expected()
        return {item.key: item.expected() for item in self.fields}

    def label(self, key: object) -> str:
        if "label" in self.text:
            return self.say("label", {"key": key})
        if key is None:
            return COMMON["answer"]
        return f'"{key}"' if isinstance(key, str) else str(key)

    def own(self, item: Field, name: str, default: str) -> str:
        """The text key of ``name`` (ok, wrong, hint): the field's ``key.name``, else the exercise's, else
        ``default``."""
        key = name if item.key is None else f"{item.key}.{name}"
        if key in self.text:
            return key
        return name if name in self.text else default

    def judge(self, item: Field, raw: object, blind: bool | None = None) -> tuple[Item, str]:
        """The field's line of feedback, and its hint; ``blind`` (the table's, unless given): the value
        restated as a claim, whatever the right one."""
        label = self.label(item.key)
        if raw is None or raw is ...:
            return Item(label, "missing", COMMON["fill_key"]), ""
        try:
            value = item.read(raw)
        except Unreadable as error:
            return Item(label, "wrong", self.say(error.key, error.args_)), COMMON["format_hint"]
        if self.blind if blind is None else blind:
            return Item(label, "claim", self.say(f"claim.{value}", {"key": item.key})), self.say("hint")
        right = item.expected()
        if item.accept(value, right):
            return Item(label, "ok", self.say(self.own(item, "ok", "correct"))), ""
        key, args = self.mistake(item, value, right)
        line = Item(label, "wrong", self.say(key, {"value": short(value), **args}))
        entry = self.text.get(key)
        if isinstance(entry, tuple):   # a text may bring its own hint
            return line, entry[1]
        return line, self.say(self.own(item, "hint", "hint"))

    def mistake(self, item: Field, value: Any, right: Any) -> tuple[str, Mapping[str, object]]:
        """The text of a wrong value: a known mistake, else the first rule that names one, else the
        field's text for any wrong value."""
        if item.mistakes.get(value):
            return item.mistakes[value], {}
        for rule in item.rules:
            found = rule(value, right)
            if found:
                return (found, {}) if isinstance(found, str) else found
        return self.own(item, "wrong", "wrong_value"), {}

    def evaluate(self, answer: object) -> Feedback:
        if self.fields[0].key is None:   # the whole answer is one value
            line, hint = self.judge(self.fields[0], answer, blind=False)
            if self.blind and line.status == "wrong" and hint != COMMON["format_hint"]:
                line, hint = self.judge(self.fields[0], answer)
                return Feedback(self.number, False, (line,), hint, status=COMMON["claims"])
            return Feedback(self.number, line.status == "ok", (line,), hint)
        if not isinstance(answer, Mapping):
            raise Unreadable("not_mapping", value=short(answer))
        given, extras = self.sort_keys(answer)
        judged = self.judge_all(given, blind=False)
        lines = [line for line, _ in judged]
        if not extras and all(line.status == "missing" for line in lines):
            return self.unfilled()
        correct = not extras and all(line.status == "ok" for line in lines)
        status = ""
        if self.blind and not correct:   # say no more than "not right": see the class's docstring
            judged = self.judge_all(given)
            lines = [line for line, _ in judged]
            told = not extras and all(line.status == "claim" for line in lines)
            status = COMMON["claims" if told else "wrong"]
        items = (*lines, *sorted(extras, key=lambda extra: extra.label))
        return Feedback(self.number, correct, items, "" if correct else self.hint(judged, extras), status=status)

    def judge_all(self, given: Mapping[Any, list], blind: bool | None = None) -> list[tuple[Item, str]]:
        judged = []
        for item in self.fields:
            values = given.get(item.key, [...])
            if len(values) > 1:
                judged.append((Item(self.label(item.key), "wrong", COMMON["duplicate_key"]), self.say("hint")))
            else:
                judged.append(self.judge(item, values[0], blind))
        return judged

    def sort_keys(self, answer: Mapping) -> tuple[dict[Any, list], list[Item]]:
        """The answer's values under the fields' keys (a key may come in several spellings), and a line
        for each key that is not a field's."""
        keys = [item.key for item in self.fields]
        numbered = isinstance(keys[0], int)
        given: dict[Any, list] = {}
        extras = []
        for key, value in answer.items():
            normal = None   # no field's key
            if numbered:
                with contextlib.suppress(Unreadable):   # 1, "1" and 1.0 are one key, as numbers are one
                    normal = read_int(key)
            elif isinstance(key, str) and key.strip():
                normal = word(key)
            if normal in keys:
                given.setdefault(normal, []).append(value)
                continue
            message = COMMON["unknown_key"].format(keys=", ".join(map(short, keys)))
            extras.append(Item(COMMON["key"].format(key=short(key)), "wrong", message))
        return given, extras

    def hint(self, judged: list[tuple[Item, str]], extras: list[Item]) -> str:
        hints = [hint for _, hint in judged]
        if extras:
            hints.append(self.say("hint"))
        if COMMON["format_hint"] in hints:   # an unreadable value: its format first, alone
            hints = [COMMON["format_hint"]]
        if any(line.status == "missing" for line, _ in judged):
            keys = ", ".join(short(item.key) for item in self.fields)
            hints.append(COMMON["fill_keys"].format(keys=keys))
        return " ".join(dict.fromkeys(hint for hint in hints if hint))   # each once, in order


# --- readers: each returns a hashable value or raises Unreadable ------------------------------------
LOOKALIKES = str.maketrans(*COMMON["lookalikes"])
LAYOUT = str.maketrans(*COMMON["layout"])


def word(text: str) -> str:
    """A label as its key: ``" N-a "`` -> ``"n_a"``; the edition's letters that look Latin read as Latin."""
    return "_".join(text.translate(LOOKALIKES).strip().lower().replace("-", " ").split())


def _foreign(text: str) -> list[str]:
    """The letters of ``text`` that are not Latin (Cyrillic ones, for the Russian edition), each once."""
    return list(dict.fromkeys(c for c in text if c.isalpha() and not unicodedata.name(c, "").startswith("LATIN")))


_GAPS = re.compile(r"(?<=\d)[ _\u00a0\u2009\u202f](?=\d)")   # 65 536, 65_536: digits in groups
_FRACTION = re.compile(r"([+-]?\d+)\s*/\s*(\d+)")


def _parse(text: str) -> object:
    """A number written as a string: ``"2"``, ``" -0.5 "``, ``"1e3"``, ``"65 536"``, ``"1/3"``; a comma
    is told (a decimal comma or a thousands separator, it cannot be both)."""
    bare = _GAPS.sub("", text.strip().replace("\u2212", "-"))
    if "," in bare:
        raise Unreadable("comma", value=short(text))
    fraction = _FRACTION.fullmatch(bare)
    with contextlib.suppress(ValueError):   # more digits than int() reads: not a number here
        if fraction and int(fraction[2]):
            return fractions.Fraction(int(fraction[1]), int(fraction[2]))
    with contextlib.suppress(ValueError):   # an integer as exact as it is written (up to 4300 digits)
        return int(bare)
    with contextlib.suppress(ValueError):
        return float(bare)
    return text


def read_number(value: object, integer: bool = False) -> float:
    """A finite number by the one rule of the module's docstring; with ``integer``, a whole one as an int."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, np.generic):   # np.float32(2.0) as 2.0: compared with Python floats, no warning
        value = value.item()
    if isinstance(value, str):
        value = _parse(value)
    wrong = "not_int" if integer else "not_number"
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, decimal.Decimal)):
        raise Unreadable(wrong, value=short(value))
    if integer and is_int(value):
        return int(value)
    try:
        number = float(value) if abs(value) < 1e308 else math.inf
    except (OverflowError, ValueError, decimal.InvalidOperation):
        number = math.inf
    if not math.isfinite(number) or (integer and not number.is_integer()):
        raise Unreadable(wrong, value=short(value))
    return int(number) if integer else number


read_int = functools.partial(read_number, integer=True)


def read_list(value: object) -> list:
    """A list, a tuple or a 1-D NumPy array; a set or a dictionary is told it has no order."""
    if isinstance(value, (list, tuple)) or (isinstance(value, np.ndarray) and value.ndim == 1):
        return list(value)
    unordered = isinstance(value, (set, frozenset, Mapping)) and len(value) > 0
    raise Unreadable("unordered" if unordered else "not_list", value=short(value))


def option(key: object, right: int, shared: Mapping[int, str] | None = None, *, count: int = 4) -> Field:
    """A choice among options 1 … ``count`` (1-4 unless told); its texts are ``key.ok`` and ``key.N`` for
    each wrong N (or ``shared``)."""
    prefix = "" if key is None else f"{key}."
    mistakes = {n: f"{prefix}{n}" for n in range(1, count + 1) if n != right}
    return Field(key, read_option if count == 4 else options(count), right, mistakes | dict(shared or {}))


def outside(count: int, key: str) -> Callable[[frozenset, Any], Any]:
    """The rule for numbers outside 0 … count − 1; the text gets them as ``{outside}``."""
    def rule(value: frozenset, right: Any) -> Any:
        extra = sorted(value - set(range(count)))
        shown = "[" + ", ".join(map(str, extra[:8])) + (", …]" if len(extra) > 8 else "]")
        return bool(extra) and (key, {"outside": shown})
    return rule


def read_shape(value: object) -> tuple[int, ...]:
    return tuple(read_int(size) for size in read_list(value))


MAX_NUMBERS = 1_000   # a set of rows or positions in this book has a handful


def read_int_set(value: object) -> frozenset[int]:
    """Numbers as a set, list, tuple, ``range`` or 1-D array; ``{}`` and a lone number are explained."""
    if isinstance(value, Mapping) and not value:
        raise Unreadable("empty_dict", value=short(value))
    lone = None   # a number alone, as read_number reads it
    if isinstance(value, (numbers.Real, np.generic, str)) and not isinstance(value, (bool, np.bool_)):
        with contextlib.suppress(Unreadable):
            lone = read_int(value)
    if lone is not None:
        raise Unreadable("one_number", value=short(lone))
    if isinstance(value, (set, frozenset, range, list, tuple, np.ndarray)) and len(value) > MAX_NUMBERS:
        raise Unreadable("too_many", count=len(value))
    if isinstance(value, (set, frozenset)):
        items = sorted(value, key=short)   # the first unreadable one is the same in every run
    elif isinstance(value, range):
        items = list(value)
    else:
        items = read_list(value)
    return frozenset(read_int(item) for item in items)


def read_option(value: object, count: int = 4) -> int:
    """An option's number 1 … ``count`` (1-4), a number as ``read_number`` reads it: ``2``, ``2.0``, ``"2"``
    and ``" 2) "`` read the same."""
    typed = value.strip().strip("()[]'\" ").rstrip(".)") if isinstance(value, str) else value
    shown: object = value   # a number as read, whatever its spelling
    with contextlib.suppress(Unreadable):
        shown = read_number(typed)
        shown = read_int(typed)
    if not is_int(shown) or not 1 <= shown <= count:
        raise Unreadable("not_option", value=short(shown), last=count)
    return int(shown)


def options(count: int) -> Callable[[object], int]:
    """The reader of an option among 1 … ``count``, for a choice of other than four options (31.13 and 31.14
    share five verdicts); ``numbers`` lists them."""
    def read(value: object) -> int:
        return read_option(value, count)
    read.numbers = tuple(range(1, count + 1))   # type: ignore[attr-defined]
    return read


def labels(*allowed: str) -> Callable[[object], str]:
    """A reader of one of the ``allowed`` labels (case, spaces and hyphens aside)."""
    def read(value: object) -> str:
        if isinstance(value, str) and word(value) in allowed:
            return word(value)
        listed = ", ".join(f'"{name}"' for name in allowed)
        foreign = _foreign(value) if isinstance(value, str) else []
        if foreign and word(value.lower().translate(LAYOUT)) in allowed:   # typed in the Russian layout
            raise Unreadable("typed_in_layout", value=short(value), label=f'"{word(value.lower().translate(LAYOUT))}"')
        if foreign:
            raise Unreadable("foreign_letters", value=short(value), labels=listed,
                             letters=", ".join(f"«{c}»" for c in foreign[:6]))
        raise Unreadable("not_label", value=short(value), labels=listed)
    read.allowed = allowed   # type: ignore[attr-defined]
    return read


def _decimals(number: float) -> int:
    return max(0, -int(decimal.Decimal(repr(float(number))).as_tuple().exponent))


def near(value: float, right: float, places: int = 9) -> bool:
    """``value`` is ``right`` at the precision it was given in (at most ``places`` decimals)."""
    return abs(value - right) <= 0.5 * 10.0 ** -min(_decimals(value), places) + 1e-12


def known_slip(value: float, known: float) -> bool:
    """``value`` is the known wrong quantity ``known`` (a slip a hint names): equal to it, or typed to two
    decimals or more and ``known`` at that precision (three at most). A coarser guess gets no hint: a hint
    that fired for 0.3 would say where an unknown number lies, and a learner could close in on it digit by
    digit (or on the answer, when the slip is its inverse)."""
    return value == known or (_decimals(value) >= 2 and near(value, known, 3))


def rounded(least: int) -> Callable[[float, float], bool]:
    """Accept the right number, or it rounded to ``least`` or more decimals (0.54 for 0.5379)."""
    def accept(value: float, right: float) -> bool:
        if _decimals(value) > 9:   # computed, not typed: equal as floats
            return math.isclose(value, right, rel_tol=1e-9)
        return _decimals(value) >= least and near(value, right)
    return accept


def coarse(least: int) -> Callable[[float, float], Any]:
    """The rule for an answer given to fewer than ``least`` decimals, right or wrong: the reply asks
    for the digits and says nothing of the value, or a learner could find the answer by halving (0.1 …
    0.9 is "too coarse" only where the answer lies, then 0.30 … 0.39)."""
    def rule(value: float, right: float) -> Any:
        return _decimals(value) < least and ("coarse", {"decimals": least})
    return rule


# --- values in feedback: short, the same in every run ------------------------------------------------
class Short(Shown):
    """The core's short values, for a learner: a shape as ``[1, 3, 4]``, a set sorted, no memory address,
    and the edition's words for an array, a function and a huge number."""

    def __init__(self) -> None:
        super().__init__()
        self.fillvalue, self.maxlevel, self.maxstring = "…", 3, 42
        self.maxlist = self.maxtuple = self.maxset = self.maxfrozenset = self.maxdict = 6

    def repr1(self, value: object, level: int) -> str:
        if isinstance(value, np.generic):   # np.float64(0.5) reads as 0.5
            value = value.item()
        return super().repr1(value, level)

    def repr_int(self, value: int, level: int) -> str:
        if abs(value) < 10**15:
            return repr(value)
        return COMMON["huge"].format(sign="-" * (value < 0), exponent=int(math.log10(abs(value))))

    def repr_tuple(self, value: tuple, level: int) -> str:   # a shape as the chapters write it
        return self.repr_list(value, level)

    def repr_set(self, value: set | frozenset, level: int) -> str:   # not in the hash seed's order
        return "set()" if not value else super().repr_set(sorted(value, key=self.repr), level)

    repr_frozenset = repr_set

    def repr_ndarray(self, value: np.ndarray, level: int) -> str:
        return COMMON["array"].format(shape=self.repr(value.shape), dtype=value.dtype)

    def repr_instance(self, value: object, level: int) -> str:   # a type with no repr_<name> above
        if isinstance(value, Mapping):
            return self.repr_dict(value, level)
        if value is None or isinstance(value, (bool, float)):
            return repr(value)
        if value is ...:
            return "..."
        name = getattr(value, "__name__", None)
        if callable(value) and isinstance(name, str):
            return COMMON["function"].format(name=name[:30])
        return f"<{type(value).__name__}>"


SHORT = Short()


def short(value: object, limit: int = 60) -> str:
    """``value`` in at most ``limit`` characters (``Short``)."""
    text = SHORT.repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- code exercises --------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class Code(Exercise):
    name: str                                     # the learner's function, as the notebook names it
    reference: Callable
    cases: Callable[[], Sequence[tuple]]          # fresh arguments at every check
    mistakes: Mapping[str, Callable] = field(default_factory=dict)   # text key -> a function with that slip
    rules: Sequence[Callable[[np.ndarray, tuple], Any]] = ()         # on the first failing output
    setup: tuple[str, ...] = ()                   # names the chapter's setup cells define
    right: Callable[[list, list], dict] | None = None   # (outputs, cases) -> arguments of the text "right"

    def solution(self) -> Callable:
        return self.reference

    def evaluate(self, answer: object) -> Feedback:
        if not callable(answer):
            raise Unreadable("not_function", name=self.name, value=short(answer))
        cases, outputs, problems = list(self.cases()), [], []
        for arguments in cases:
            if problems and problems[-1] and problems[-1][0] in ("timeout", "not_run"):
                got, problem = None, ("not_run", {})   # the function may still hold the kernel: call it no more
            else:
                got, problem = self._run(answer, arguments)
            if problem and problem[0] == "stub":
                return self.unfilled(COMMON["fill_code"].format(name=self.name))
            if problem and problem[0] == "setup":
                return Feedback(self.number, False, status=self.say(*problem))
            outputs.append(got)
            problems.append(problem)
        failing = [i for i, problem in enumerate(problems) if problem]
        lines = tuple(self._line(i, about, problem, failing)
                      for i, (about, problem) in enumerate(zip(self.text["cases"], problems, strict=True)))
        if failing:
            diagnosis = self._diagnosis(outputs, cases, failing)
            return Feedback(self.number, False, lines, self.say(diagnosis), unit="score_cases")
        notes = ()
        if "right" in self.text:
            notes = (self.say("right", self.right(outputs, cases) if self.right else {}),)
        return Feedback(self.number, True, lines, notes=notes, unit="score_cases")

    def _line(self, index: int, about: str, problem: tuple | None, failing: list[int]) -> Item:
        label = COMMON["case"].format(index=index + 1, about=about)
        if not problem:
            return Item(label, "ok", self.say("same"))       # an exercise may name its own reference
        if index == failing[0] or problem[0] != "element":   # one wrong element in detail, the first
            return Item(label, "wrong", self.say(*problem))
        return Item(label, "wrong", self.say("also_wrong"))

    def _run(self, answer: Callable, arguments: tuple) -> tuple[object, tuple | None]:
        """The function's result on one case, and its problem (a text key and arguments) or None."""
        want = np.asarray(self.reference(*copy.deepcopy(arguments)))
        given = copy.deepcopy(arguments)
        before = _state(given)
        try:
            with np.errstate(all="ignore"):
                got = call_with_limit(answer, given, LIMIT)
        except TimeLimit:
            return None, ("timeout", {"seconds": f"{LIMIT:g}"})
        except KeyboardInterrupt:   # the learner's own interrupt stops the check too
            raise
        except SystemExit as error:
            return None, ("exit", {"code": "" if error.code is None else short(error.code)})
        except BaseException as error:   # whatever else it raised, a BaseException of its own too
            if isinstance(error, NameError) and error.name in self.setup:
                return None, ("setup", {"name": error.name})
            return None, ("raised", {"error": type(error).__name__, "message": _first_line(error)})
        if got is ...:
            return None, ("stub", {})
        same = all(np.array_equal(a, b, equal_nan=True) for a, b in zip(before, _state(given), strict=True))
        return got, difference(got, want, ATOL) or (None if same else ("mutated", {}))

    def _diagnosis(self, outputs: list, cases: list, failing: list[int]) -> str:
        """The text key that explains the failing cases: a known slip that gives all of them, a rule on
        the first, or "hint"."""
        if any(outputs[i] is None for i in failing):
            return "hint"
        with contextlib.suppress(Exception), np.errstate(all="ignore"):
            for key, mistake in self.mistakes.items():
                slips = (np.asarray(mistake(*copy.deepcopy(cases[i]))) for i in failing)
                if all(difference(outputs[i], slip, ATOL) is None for i, slip in zip(failing, slips, strict=True)):
                    return key
            got = np.asarray(outputs[failing[0]], dtype=np.float64)
            for rule in self.rules:
                key = rule(got, cases[failing[0]])
                if key:
                    return key
        return "hint"


def _first_line(error: BaseException) -> str:
    """``": "`` and the first line of an error's message (100 characters at most), or nothing."""
    text = str(error).strip()
    return f": {text.splitlines()[0][:100]}" if text else ""


def _state(arguments: tuple) -> list[np.ndarray]:
    """Copies of the arrays the arguments hold, a layer's parameters too: what a function must not change."""
    arrays = []
    for argument in arguments:
        if isinstance(argument, np.ndarray):
            arrays.append(np.array(argument))
        elif hasattr(argument, "parameters"):
            arrays += [np.array(p.value) for p in argument.parameters()]
    return arrays


def difference(got: object, want: np.ndarray, atol: float) -> tuple[str, dict] | None:
    """None when ``got`` equals ``want`` within ``atol``; else what differs, type and shape first."""
    if got is None:
        return "returned_none", {}
    if isinstance(getattr(got, "value", None), np.ndarray):
        return "returned_tensor", {}
    try:
        array = np.asarray(got)
    except Exception:
        array = np.asarray(None)
    numeric = array.dtype.kind in "biuf"
    if not numeric or isinstance(got, (str, bytes)):
        return "not_numeric", {"value": short(got)}
    if want.ndim == 0 and array.ndim:
        return "not_scalar", {"value": short(got)}
    if array.shape != want.shape:
        return "shape", {"got": short(array.shape), "want": short(want.shape)}
    values = array.astype(np.float64)
    gap = np.abs(values - want)
    wrong = ~((gap <= atol) | (values == want) | (np.isnan(values) & np.isnan(want)))   # inf and nan match themselves
    if not wrong.any():
        return None
    if want.ndim == 0:
        return "scalar", {"got": short(got), "want": short(want[()])}
    where = tuple(int(i) for i in np.argwhere(wrong)[0])
    g, w, d = float(values[where]), float(want[where]), float(gap[where])
    digits = 4   # as many as it takes to tell got from want, 4 to 15
    if 0 < d < math.inf:
        digits = min(15, max(4, 2 + math.ceil(math.log10(max(abs(w), abs(g), 1e-300) / d))))
    return "element", {
        "dtype": COMMON["dtype"].format(got=array.dtype, want=want.dtype) if array.dtype != want.dtype else "",
        "where": list(where), "got": f"{g:.{digits}g}", "want": f"{w:.{digits}g}", "gap": f"{d:.1e}",
        "atol": f"{atol:.0e}", "count": int(wrong.sum()), "size": wrong.size,
        "near": COMMON["near"] if float(gap[wrong].max()) < 1e-5 else ""}


# --- the time limit: a watchdog thread ---------------------------------------------------------------
_RAISE_IN = getattr(getattr(ctypes, "pythonapi", None), "PyThreadState_SetAsyncExc", None)
_SLEEP = time.sleep


def _sleep_in_slices(seconds: float) -> None:
    """``time.sleep`` while a learner's function runs: the same wait in 50 ms slices, so the time limit,
    raised between two bytecodes, ends ``time.sleep(10)`` at the limit rather than after 10 s."""
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        _SLEEP(min(left, 0.05))


def call_with_limit(function: Callable, arguments: tuple, seconds: float) -> object:
    """``function(*arguments)``, or ``TimeLimit`` once it has run ``seconds``: a watchdog thread raises
    it in the calling thread through CPython's ``PyThreadState_SetAsyncExc`` (alike on Linux, macOS and
    Windows; the kernel's signal handlers stay untouched) while ``_call`` is on the stack, then every 50 ms.
    ``except Exception`` does not catch it and a bare ``except:`` that returns is told apart; a long call
    into C (one huge NumPy operation) ends first (``time.sleep`` sleeps in 50 ms slices meanwhile), and
    code that catches ``BaseException`` and loops on may escape it. Outside CPython there is no limit."""
    target = threading.get_ident()
    frame: list = []   # the frame of ``_call``, once the function runs
    fired: list = []   # one entry a TimeLimit raised
    done, lock = threading.Event(), threading.Lock()

    def watch() -> None:
        while not done.wait(0.05 if fired else seconds):
            with lock:
                current = sys._current_frames().get(target)
                while frame and current is not None and current is not frame[0]:
                    current = current.f_back
                if done.is_set() or (frame and current is None):   # the call is over
                    return
                if frame:
                    fired.append(True)
                    _RAISE_IN(ctypes.c_ulong(target), ctypes.py_object(TimeLimit))

    if _RAISE_IN:
        threading.Thread(target=watch, daemon=True).start()
    time.sleep = _sleep_in_slices
    try:
        result = _call(function, arguments, frame)
    finally:
        time.sleep = _SLEEP
        cleaned = False
        while not cleaned:   # a pending exception may land here: clean up again
            try:
                with lock:
                    done.set()
                    if fired:   # take back one still pending
                        _RAISE_IN(ctypes.c_ulong(target), None)
                    cleaned = True
            except TimeLimit:
                pass
    if fired:   # the learner's code caught the exception and returned
        raise TimeLimit
    return result


def _call(function: Callable, arguments: tuple, frame: list) -> object:
    frame.append(sys._getframe())
    return function(*arguments)


# --- package functions a learner may replace, and restore --------------------------------------------
_ORIGINALS: dict[tuple[str, str], object] = {}


def remember_package() -> None:
    """Record the package's functions, classes and methods as they are now (the exercise modules aside)."""
    for name, module in list(sys.modules.items()):
        if module is None or not name.startswith("llm_from_scratch.") or ".exercises" in name:
            continue
        for attr, obj in list(vars(module).items()):
            if not callable(obj) or not str(getattr(obj, "__module__", "")).startswith("llm_from_scratch"):
                continue
            _ORIGINALS.setdefault((name, attr), obj)
            if isinstance(obj, type) and obj.__module__ == name:   # a class defined here: its methods too
                for method, function in vars(obj).items():
                    if callable(function):
                        _ORIGINALS.setdefault((name, f"{attr}.{method}"), function)


def patched() -> list[str]:
    """``module.name`` of every recorded function or method that is not the original now."""
    changed = set()
    for (name, attr), original in _ORIGINALS.items():
        owner, _, method = attr.partition(".")
        current = getattr(sys.modules.get(name), owner, None)
        if method:
            current = vars(current).get(method) if isinstance(current, type) else None
        if current is not original:
            changed.add(f"{name.rsplit('.', 1)[-1]}.{attr}")
    return sorted(changed)
