"""Проверка упражнений: упражнение — таблица, проверяет её один вычислитель.

``Questions``: у поля ``Field`` — как прочитать ответ, верное значение, известные ошибки (значение →
текст), правила (функция ответа → текст), запасной текст. ``Code``: функция учащегося против эталона
на скрытых случаях, по вызову на случай под ``LIMIT``; неверные функции и правила называют ошибку.
Тексты — в ``text/ru/``: другое издание добавляет такие модули (``LLM_FROM_SCRATCH_EDITION``), не код.
"""

from __future__ import annotations

import contextlib
import copy
import ctypes
import decimal
import functools
import math
import operator
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..checks import is_int
from ..text import texts
from .formats import wrap

LIMIT = 3.0  # seconds for one call of a learner's function
ATOL = 1e-9  # how far a code exercise's numbers may be from the reference's
WIDTH = 75   # characters in a line of a book's output block

COMMON = texts()

@dataclass(frozen=True)
class Item:   # one line of feedback: a field of the answer or a hidden case
    label: str
    status: str   # ok, wrong or missing
    message: str

    def __str__(self) -> str:
        return f"{dict(ok='✓', wrong='✗', missing='…')[self.status]} {self.label}: {self.message}"

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

    def __str__(self) -> str:
        kind, right = "correct" if self.correct else "wrong" if len(self.items) < 2 else self.unit, [
            i for i in self.items if i.status == "ok"]
        status = self.status or COMMON[kind].format(right=len(right), total=len(self.items))
        lines = [COMMON["header"].format(number=self.exercise, status=status), *(f"  {i}" for i in self.items)]
        return "\n".join([*lines, *self.notes] + [COMMON["hint"].format(hint=self.hint)] * bool(self.hint))

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

    @functools.cached_property   # the edition's texts of "N.key" as {key: text or (text, hint)}
    def text(self) -> Mapping[str, Any]:
        chapter, number = self.number.split(".")
        found = texts(f"ch{chapter}").items()
        return {key.partition(".")[2]: text for key, text in found if key.partition(".")[0] == number}

    def say(self, key: str, args: Mapping[str, object] | None = None) -> str:
        entry = self.text.get(key, COMMON.get(key, key))
        return (entry[0] if isinstance(entry, tuple) else entry).format(**(args or {}))

    def unfilled(self, hint: str = "") -> Feedback:
        return Feedback(self.number, False, hint=hint or COMMON["fill"], status=COMMON["unfilled"], placeholder=True)

    def feedback(self, answer: object) -> Feedback:   # any answer: no exception gets out, a learner's Interrupt aside
        try:
            result = self.unfilled() if answer is None or answer is ... else self.evaluate(answer)
        except Exception as error:   # Unreadable; anything else is a safety net the contract test keeps unused
            key, args = (error.key, error.args_) if isinstance(error, Unreadable) else ("failed", {
                "error": type(error).__name__})
            result = Feedback(self.number, False, (Item(COMMON["answer"], "wrong", self.say(key, args)),),
                              COMMON["format_hint"])
        changed = patched()
        note = COMMON["patched"].format(names=", ".join(changed[:3]) + ", …" * (len(changed) > 3))
        return replace(result, notes=(*result.notes, COMMON["note"].format(note=note))) if changed else result

    def check(self, *args: object, **kwargs: object) -> None:   # prints; a wrong call prints how to call
        if len(args) != 1 or kwargs:
            usage = COMMON["usage"].format(call="ex{}.check_{}".format(*self.number.split(".")))
            return print(wrap(COMMON["header"].format(number=self.number, status=usage)))
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
    fields: tuple[Field, ...]

    def solution(self) -> object:
        first = self.fields[0]
        return first.expected() if first.key is None else {item.key: item.expected() for item in self.fields}

    def label(self, key: object) -> str:
        if "label" in self.text:
            return self.say("label", {"key": key})
        return COMMON["answer"] if key is None else f'"{key}"' if isinstance(key, str) else str(key)

    def own(self, item: Field, name: str, default: str) -> str:   # by convention: key.name, else the exercise's
        key = name if item.key is None else f"{item.key}.{name}"
        return key if key in self.text else name if name in self.text else default

    def judge(self, item: Field, raw: object) -> tuple[Item, str]:   # the field's line, and its hint
        label = self.label(item.key)
        if raw is None or raw is ...:
            return Item(label, "missing", COMMON["fill_key"]), ""
        try:
            value = item.read(raw)
        except Unreadable as error:
            return Item(label, "wrong", self.say(error.key, error.args_)), COMMON["format_hint"]
        right = item.expected()
        if item.accept(value, right):
            return Item(label, "ok", self.say(self.own(item, "ok", "correct"))), ""
        key, args = item.mistakes.get(value), {}
        for found in () if key else (rule(value, right) for rule in item.rules):
            if found:
                key, args = (found, {}) if isinstance(found, str) else found
                break
        key = key or self.own(item, "wrong", "wrong_value")
        hint = self.text[key][1] if isinstance(self.text.get(key), tuple) else ""   # a text may bring its hint
        return Item(label, "wrong", self.say(key, {"value": short(value), **args})), hint or self.say(
            self.own(item, "hint", "hint"))

    def evaluate(self, answer: object) -> Feedback:
        if self.fields[0].key is None:
            line, hint = self.judge(self.fields[0], answer)
            return Feedback(self.number, line.status == "ok", (line,), hint)
        if not isinstance(answer, Mapping):
            raise Unreadable("not_mapping", value=short(answer))
        keys, numbered = [item.key for item in self.fields], isinstance(self.fields[0].key, int)
        given: dict[Any, list] = {}
        extras = []
        for key, value in answer.items():
            bare = key.strip() if isinstance(key, str) else ""
            normal = int(key) if numbered and is_int(key) else word(key) if not numbered and bare else None
            if normal in keys:
                given.setdefault(normal, []).append(value)
            else:   # a number written as a string is explained
                text = COMMON["quoted_key" if numbered and bare.isdigit() and int(bare) in keys else "unknown_key"]
                extras.append(Item(COMMON["key"].format(key=short(key)), "wrong", text.format(
                    key=short(key), bare=bare, keys=", ".join(map(short, keys)))))
        judged = [(Item(self.label(item.key), "wrong", COMMON["duplicate_key"]), self.say("hint"))
                  if len(given.get(item.key, ())) > 1 else self.judge(item, given.get(item.key, [...])[0])
                  for item in self.fields]
        lines = [line for line, _ in judged]
        if not extras and all(line.status == "missing" for line in lines):
            return self.unfilled()
        hints = [hint for _, hint in judged] + [self.say("hint")] * bool(extras)
        hints = [COMMON["format_hint"]] if COMMON["format_hint"] in hints else hints   # an unreadable value first
        hints += [COMMON["fill_keys"].format(keys=", ".join(map(short, keys)))] * any(
            line.status == "missing" for line in lines)
        correct = not extras and all(line.status == "ok" for line in lines)
        return Feedback(self.number, correct, (*lines, *sorted(extras, key=lambda x: x.label)), "" if correct else
                        " ".join(dict.fromkeys(hint for hint in hints if hint)))

# --- readers: each returns a hashable value or raises Unreadable ------------------------------------
def word(text: str) -> str:   # " N-a " -> "n_a"; Cyrillic letters that look Latin read as Latin
    return "_".join(text.translate(str.maketrans("АВСЕаес", "ABCEaec")).strip().lower().replace("-", " ").split())

def read_number(value: object, integer: bool = False) -> float:
    """A finite number (NumPy's too); with ``integer``, an integer, given as a float or not."""
    value = value[()] if isinstance(value, np.ndarray) and value.ndim == 0 else value
    if integer and is_int(value):
        return int(value)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        quoted = isinstance(value, str) and value.strip().lstrip("-").replace(".", "", 1).isdigit()
        raise Unreadable("quoted" if quoted else "not_int" if integer else "not_number", value=short(value))
    number = float(value) if abs(value) < 1e308 else math.inf
    if not math.isfinite(number) or (integer and not number.is_integer()):
        raise Unreadable("not_int" if integer else "not_number", value=short(value))
    return int(number) if integer else number

read_int = functools.partial(read_number, integer=True)

def read_list(value: object) -> list:   # a list, a tuple or a 1-D NumPy array
    if (isinstance(value, np.ndarray) and value.ndim == 1) or isinstance(value, (list, tuple)):
        return list(value)
    raise Unreadable("unordered" if isinstance(value, (set, frozenset, Mapping)) and value else "not_list",
                     value=short(value))

def option(key: object, right: int, shared: Mapping[int, str] | None = None) -> Field:
    """A choice among options 1-4; its texts are ``key.ok`` and ``key.N`` for each wrong N (or ``shared``)."""
    return Field(key, read_option, right, {n: f"{n}" if key is None else f"{key}.{n}" for n in range(1, 5)
                                           if n != right} | dict(shared or {}))

def outside(count: int, key: str) -> Callable[[frozenset, Any], Any]:
    """The rule for numbers outside 0 … count − 1; the text gets them as ``{outside}``."""
    return lambda v, _: bool(v - set(range(count))) and (key, {"outside": sorted(v - set(range(count)))})

def read_shape(value: object) -> tuple[int, ...]:
    return tuple(read_int(size) for size in read_list(value))

def read_int_set(value: object) -> frozenset[int]:
    """Numbers as a set, list, tuple, ``range`` or 1-D array; ``{}`` and a lone number are explained."""
    if (isinstance(value, Mapping) and not value) or is_int(value):
        raise Unreadable("empty_dict" if isinstance(value, Mapping) else "one_number", value=short(value))
    items = sorted(value, key=short) if isinstance(value, (set, frozenset)) else list(value) if isinstance(
        value, range) else read_list(value)
    return frozenset(read_int(item) for item in items)

def read_option(value: object) -> int:
    """An option's number 1-4: ``2``, ``"2"`` and ``" 2) "`` read the same."""
    text = value.strip().strip("()[].'\" ") if isinstance(value, str) else ""
    value = int(text) if text.isdigit() else value
    if not is_int(value) or not 1 <= value <= 4:
        raise Unreadable("not_option", value=short(value))
    return int(value)

def labels(*allowed: str) -> Callable[[object], str]:
    """A reader of one of the ``allowed`` labels (case, spaces and hyphens aside)."""
    def read(value: object) -> str:
        if isinstance(value, str) and word(value) in allowed:
            return word(value)
        raise Unreadable("not_label", value=short(value), labels=", ".join(f'"{name}"' for name in allowed))
    read.allowed = allowed   # type: ignore[attr-defined]
    return read

def _decimals(number: float) -> int:
    return max(0, -int(decimal.Decimal(repr(float(number))).as_tuple().exponent))

def near(value: float, right: float, places: int = 9) -> bool:
    """``value`` is ``right`` at the precision it was given in (at most ``places`` decimals)."""
    return abs(value - right) <= 0.5 * 10.0 ** -min(_decimals(value), places) + 1e-12

def rounded(least: int) -> Callable[[float, float], bool]:
    """Accept the right number, or it rounded to ``least`` or more decimals (0.54 for 0.5379)."""
    return lambda value, right: (math.isclose(value, right, rel_tol=1e-9) if _decimals(value) > 9
                                 else _decimals(value) >= least and near(value, right))

def coarse(least: int) -> Callable[[float, float], Any]:
    """The rule for an answer right but rounded to fewer than ``least`` decimals."""
    return lambda value, right: _decimals(value) < least and near(value, right) and ("coarse", {"decimals": least})

# --- values in feedback: short, with no memory addresses --------------------------------------------
def short(value: object, limit: int = 60, depth: int = 0) -> str:
    """Short, deterministic text: shapes as [1, 3, 4], sets sorted, huge numbers cut, no memory addresses."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, (list, tuple, set, frozenset, Mapping)):
        start, end = "[]" if isinstance(value, (list, tuple)) else "{}"
        if depth > 2 or not value:
            text = "set()" if isinstance(value, (set, frozenset)) and not value else start + "…" * bool(value) + end
        else:   # a set's items sorted: its order is the hash seed's
            items = [f"{short(k, 20, depth + 1)}: {short(v, 20, depth + 1)}" for k, v in list(value.items())[:7]] \
                if isinstance(value, Mapping) else sorted(short(v, 20, depth + 1) for v in value) if isinstance(
                    value, (set, frozenset)) else [short(v, 20, depth + 1) for v in value[:7]]
            text = start + ", ".join(items[:6] + ["…"] * (len(value) > 6)) + end
    elif isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**15:
        text = COMMON["huge"].format(sign="-" * (value < 0), exponent=int(math.log10(abs(value))))
    elif isinstance(value, np.ndarray):
        text = COMMON["array"].format(shape=short(value.shape), dtype=value.dtype)
    elif value is None or isinstance(value, (bool, int, float, str)):
        text = repr(value if not isinstance(value, str) or len(value) <= 40 else value[:40] + "…")
    elif callable(value) and isinstance(getattr(value, "__name__", None), str):
        text = COMMON["function"].format(name=value.__name__[:30])
    else:
        text = "..." if value is ... else f"<{type(value).__name__}>"
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
            stopped = problems and problems[-1] and problems[-1][0] in ("timeout", "not_run")
            got, problem = (None, ("not_run", {})) if stopped else self._run(answer, arguments)
            if problem and problem[0] == "stub":
                return self.unfilled(COMMON["fill_code"].format(name=self.name))
            if problem and problem[0] == "setup":
                return Feedback(self.number, False, status=self.say(*problem))
            outputs.append(got)
            problems.append(problem)
        failing = [i for i, problem in enumerate(problems) if problem]
        lines = tuple(Item(COMMON["case"].format(index=i + 1, about=about), "wrong" if problem else "ok", self.say(
            *problem) if problem and (i == failing[0] or problem[0] != "element") else COMMON[   # one in detail
            "also_wrong" if problem else "same"]) for i, (about, problem) in enumerate(zip(
                self.text["cases"], problems, strict=True)))
        if failing:
            return Feedback(self.number, False, lines, self.say(self._diagnosis(outputs, cases, failing)),
                            unit="score_cases")
        notes = (self.say("right", self.right(outputs, cases) if self.right else {}),) * ("right" in self.text)
        return Feedback(self.number, True, lines, notes=notes, unit="score_cases")

    def _run(self, answer: Callable, arguments: tuple) -> tuple[object, tuple | None]:   # (result, problem)
        want, given = np.asarray(self.reference(*copy.deepcopy(arguments))), copy.deepcopy(arguments)
        before = _state(given)
        try:
            with np.errstate(all="ignore"):
                got = call_with_limit(answer, given, LIMIT)
        except TimeLimit:
            return None, ("timeout", {"seconds": f"{LIMIT:g}"})
        except SystemExit as error:
            return None, ("exit", {"code": "" if error.code is None else short(error.code)})
        except (Exception, GeneratorExit) as error:   # a learner's KeyboardInterrupt goes through
            if isinstance(error, NameError) and error.name in self.setup:
                return None, ("setup", {"name": error.name})
            text = str(error).strip().splitlines()[0][:100] if str(error).strip() else ""
            return None, ("raised", {"error": type(error).__name__, "message": f": {text}" * bool(text)})
        if got is ...:
            return None, ("stub", {})
        same = all(np.array_equal(a, b, equal_nan=True) for a, b in zip(before, _state(given), strict=True))
        return got, difference(got, want, ATOL) or (None if same else ("mutated", {}))

    def _diagnosis(self, outputs: list, cases: list, failing: list[int]) -> str:   # the slip, a rule, or "hint"
        if any(outputs[i] is None for i in failing):
            return "hint"
        with contextlib.suppress(Exception), np.errstate(all="ignore"):
            for key, mistake in self.mistakes.items():
                if all(difference(outputs[i], np.asarray(mistake(*copy.deepcopy(cases[i]))), ATOL) is None
                       for i in failing):
                    return key
            got = np.asarray(outputs[failing[0]], dtype=np.float64)
            return next((key for rule in self.rules if (key := rule(got, cases[failing[0]]))), "hint")
        return "hint"

def _state(arguments: tuple) -> list[np.ndarray]:   # copies of the arrays the arguments hold, parameters too
    return [np.array(a) for argument in arguments for a in ([argument] if isinstance(argument, np.ndarray) else [
        p.value for p in argument.parameters()] if hasattr(argument, "parameters") else [])]

def difference(got: object, want: np.ndarray, atol: float) -> tuple[str, dict] | None:
    """None when ``got`` equals ``want`` within ``atol``; else what differs, type and shape first."""
    if got is None or isinstance(getattr(got, "value", None), np.ndarray):
        return "returned_none" if got is None else "returned_tensor", {}
    try:
        array = np.asarray(got)
    except Exception:
        array = np.asarray(None)
    if array.dtype.kind not in "biuf" or isinstance(got, (str, bytes)) or (want.ndim == 0 and array.ndim):
        return "not_scalar" if array.dtype.kind in "biuf" else "not_numeric", {"value": short(got)}
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
    digits = min(15, max(4, 2 + math.ceil(math.log10(max(abs(w), abs(g), 1e-300) / d)))) if 0 < d < math.inf else 4
    return "element", {
        "dtype": COMMON["dtype"].format(got=array.dtype, want=want.dtype) if array.dtype != want.dtype else "",
        "where": list(where), "got": f"{g:.{digits}g}", "want": f"{w:.{digits}g}", "gap": f"{d:.1e}",
        "atol": f"{atol:.0e}", "count": int(wrong.sum()), "size": wrong.size,
        "near": COMMON["near"] if float(gap[wrong].max()) < 1e-5 else ""}

# --- the time limit: a watchdog thread ---------------------------------------------------------------
_RAISE_IN = getattr(getattr(ctypes, "pythonapi", None), "PyThreadState_SetAsyncExc", None)

def call_with_limit(function: Callable, arguments: tuple, seconds: float) -> object:
    """``function(*arguments)``, or ``TimeLimit`` once it has run ``seconds``: a watchdog thread raises
    it in the calling thread through CPython's ``PyThreadState_SetAsyncExc`` (alike on Linux, macOS and
    Windows; the kernel's signal handlers stay untouched) while ``_call`` is on the stack, then every 50 ms.
    ``except Exception`` does not catch it and a bare ``except:`` that returns is told apart; a long call
    into C (``time.sleep``, one huge NumPy operation) ends first, and code that catches ``BaseException``
    and loops on may escape it. Outside CPython there is no limit."""
    target, frame, fired, done, lock = threading.get_ident(), [], [], threading.Event(), threading.Lock()

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
    try:
        result = _call(function, arguments, frame)
    finally:
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

def remember_package() -> None:   # the package's functions, classes and methods as they are now
    for name, module in list(sys.modules.items()):
        for attr, obj in list(vars(module).items()) if name.startswith("llm_from_scratch.") and (
                ".exercises" not in name) and module else ():
            if callable(obj) and str(getattr(obj, "__module__", "")).startswith("llm_from_scratch"):
                _ORIGINALS.setdefault((name, attr), obj)
                for method, function in vars(obj).items() if isinstance(obj, type) and obj.__module__ == name else ():
                    if callable(function):
                        _ORIGINALS.setdefault((name, f"{attr}.{method}"), function)

def patched() -> list[str]:   # ``module.name`` of every recorded function or method that is not the original now
    changed = set()
    for (name, attr), original in _ORIGINALS.items():
        owner, _, method = attr.partition(".")
        current = getattr(sys.modules.get(name), owner, None)
        current = (vars(current).get(method) if isinstance(current, type) else None) if method else current
        if current is not original:
            changed.add(f"{name.rsplit('.', 1)[-1]}.{attr}")
    return sorted(changed)
