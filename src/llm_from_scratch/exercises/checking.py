"""Проверка ответов к упражнениям: общее для глав 30 и 31.

Упражнение — объект ``Exercise``. В блокноте учащийся вызывает
``ex30.check_1(answer)``: проверка **печатает** отзыв (поэтому он виден и
после ``;`` в конце строки, и при ``result = ...``) и ничего не возвращает.
Тесты и решения используют ``exercise.feedback(answer)`` — тот же отзыв
объектом ``Feedback``. Ни одна проверка не поднимает исключение: любой ввод,
даже сломанная функция учащегося, получает отзыв.

Правила отзыва:

* верный пункт объясняет, почему он верен;
* неверный пункт говорит, что не так и где искать, но **не называет** верный
  ответ (для упражнений с кодом — показывает первое расхождение с эталоном
  на скрытом случае: это отладка, а не подсказка ответа);
* подсказки называют объекты так, как их импортирует блокнот (``ex30.…``).

Разбор ответов одинаков в обеих главах: ``None`` и ``...`` — заглушки (и функция
учащегося, которая всё ещё возвращает ``...``, — тоже); размеры
осей и номера — ``int``; буквы вариантов не зависят от регистра, а кириллические
«А», «В», «С», «Е» читаются как латинские.
"""

from __future__ import annotations

import itertools
import math
import textwrap
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "AnswerFormatError", "Case", "Exercise", "Feedback", "Field", "ItemResult", "Verdict",
    "as_bool", "as_choice", "as_int", "as_int_set", "as_label", "as_list", "as_shape",
    "check_answer", "choice_verdict", "compare_functions", "format_shape", "is_placeholder",
    "plural", "safe_repr", "wrap_lines",
]


# ---------------------------------------------------------------------------
# Отзыв
# ---------------------------------------------------------------------------

_MARK = {"ok": "✓", "wrong": "✗", "missing": "…"}


@dataclass(frozen=True)
class ItemResult:
    """Один пункт ответа; ``status`` — ``"ok"``, ``"wrong"`` или ``"missing"``."""

    label: str
    status: str
    message: str

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def __str__(self) -> str:
        return f"{_MARK[self.status]} {self.label}: {self.message}"


@dataclass(frozen=True)
class Feedback:
    """Итог проверки: верен ли ответ целиком, пункты по порядку, подсказка."""

    exercise: str
    correct: bool
    items: tuple[ItemResult, ...] = ()
    hint: str = ""
    placeholder: bool = False

    def __bool__(self) -> bool:
        return self.correct

    def __str__(self) -> str:
        if self.correct:
            status = "верно."
        elif self.placeholder:
            status = "ответ ещё не заполнен."
        elif len(self.items) > 1:
            right = sum(item.ok for item in self.items)
            status = f"пока неверно (верных пунктов: {right} из {len(self.items)})."
        else:
            status = "пока неверно."
        lines = [f"Упражнение {self.exercise}: {status}"]
        lines += [f"  {item}" for item in self.items]
        if self.hint:
            lines.append(f"Подсказка: {self.hint}")
        return "\n".join(lines)

    __repr__ = __str__


@dataclass(frozen=True)
class Exercise:
    """Проверяемое упражнение.

    ``evaluate(answer) -> Feedback`` — сама проверка; ``solution()`` — эталонный
    ответ в принятом формате (для тестов); ``secrets`` — строки, которые может
    содержать только отзыв на верный ответ (тесты следят, чтобы неверный
    ответ их не получал); ``wrong_answers()`` — типичные ошибки для тестов.
    """

    number: str
    answer_format: str
    evaluate: Callable[[object], Feedback]
    solution: Callable[[], object]
    secrets: tuple[str, ...] = ()
    wrong_answers: Callable[[], Sequence[object]] = field(default=lambda: ())

    def feedback(self, answer: object) -> Feedback:
        """Отзыв на любой ``answer``; исключение наружу не выходит."""
        if is_placeholder(answer):
            return Feedback(self.number, False, (), _placeholder_hint(self.answer_format), placeholder=True)
        try:
            return self.evaluate(answer)
        except AnswerFormatError as error:
            return Feedback(self.number, False, (ItemResult("формат", "wrong", str(error)),),
                            f"Формат ответа: {self.answer_format}")
        except Exception as error:
            return Feedback(self.number, False, (ItemResult(
                "ответ", "wrong", f"проверка не смогла разобрать ответ ({type(error).__name__})."),),
                f"Формат ответа: {self.answer_format}")

    def check(self, answer: object) -> None:
        """Напечатать отзыв (для ячейки блокнота) строками не длиннее ``WIDTH``."""
        print(wrap_lines(str(self.feedback(answer))))


WIDTH = 75  # столько знаков помещается в строку вывода в книге без прокрутки


def wrap_lines(text: str, width: int = WIDTH) -> str:
    """Перенести длинные строки по словам; продолжение — с отступом строки и ещё двумя пробелами."""
    lines = []
    for line in text.splitlines():
        indent = " " * (len(line) - len(line.lstrip(" ")) + 2)
        lines.append(textwrap.fill(line, width, subsequent_indent=indent, break_on_hyphens=False)
                     if len(line) > width else line)
    return "\n".join(lines)


def _placeholder_hint(answer_format: str) -> str:
    return f"замените заглушку ... своим ответом. Формат: {answer_format}"


# ---------------------------------------------------------------------------
# Ответ из нескольких полей
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """Вердикт по одному полю: верно ли, что сказать, какую подсказку дать."""

    ok: bool
    message: str
    hint: str = ""


@dataclass(frozen=True)
class Field:
    """Поле ответа: ключ словаря (``None`` — весь ответ одно значение) и его проверка."""

    key: int | str | None
    label: str
    check: Callable[[Any], Verdict]


class AnswerFormatError(ValueError):
    """Значение нельзя прочитать в нужном формате; сообщение обращено к учащемуся."""


def check_answer(number: str, answer_format: str, answer: object, fields: Sequence[Field], *,
                 default_hint: str) -> Feedback:
    """Проверить ответ по полям.

    Одно поле с ключом ``None`` — ответ одно значение. Иначе ответ — словарь:
    недостающие ключи и заглушки отмечаются «не заполнено», лишние — ошибкой.
    """
    if len(fields) == 1 and fields[0].key is None:
        result, hint = _run_field(fields[0], answer, answer_format)
        return Feedback(number, result.ok, (result,), "" if result.ok else hint or default_hint)
    if not isinstance(answer, Mapping):
        raise AnswerFormatError(f"ожидается словарь, получено {safe_repr(answer)}.")
    by_key, extras = _group_by_key(answer, fields)
    items: list[ItemResult] = []
    hints: list[str] = []
    for item in fields:
        values = by_key.get(item.key, [])
        if len(values) > 1:
            items.append(ItemResult(item.label, "wrong", "ключ указан несколько раз в разном написании."))
        elif not values or is_placeholder(values[0]):
            items.append(ItemResult(item.label, "missing", "замените заглушку своим значением."))
        else:
            result, hint = _run_field(item, values[0], answer_format)
            items.append(result)
            if not result.ok:
                hints.append(hint or default_hint)
    if not extras and all(item.status == "missing" for item in items):
        return Feedback(number, False, (), _placeholder_hint(answer_format), placeholder=True)
    items += extras
    if all(item.ok for item in items):
        return Feedback(number, True, tuple(items))
    if extras:
        hints.append(default_hint)
    if any(item.status == "missing" for item in items):
        hints.append("Заполните все ключи: " + ", ".join(_key_text(f.key) for f in fields) + ".")
    return Feedback(number, False, tuple(items), _join(hints) or default_hint)


def _run_field(item: Field, value: object, answer_format: str) -> tuple[ItemResult, str]:
    try:
        verdict = item.check(value)
    except AnswerFormatError as error:
        return ItemResult(item.label, "wrong", str(error)), f"Формат ответа: {answer_format}"
    return ItemResult(item.label, "ok" if verdict.ok else "wrong", verdict.message), verdict.hint


def _group_by_key(answer: Mapping, fields: Sequence[Field]) -> tuple[dict, list[ItemResult]]:
    """Значения ответа по ключам полей (с учётом написания) и пункты о лишних ключах."""
    int_keys = isinstance(fields[0].key, int)
    known = {item.key for item in fields}
    allowed = ", ".join(_key_text(item.key) for item in fields)
    by_key: dict[object, list[object]] = {}
    extras = []
    for key, value in answer.items():
        normal = _normalize_key(key, int_keys)
        if normal in known:
            by_key.setdefault(normal, []).append(value)
        else:
            extras.append(ItemResult(f"ключ {_key_text(key)}", "wrong",
                                     f"такого ключа нет; ожидаются ключи {allowed}."))
    return by_key, sorted(extras, key=lambda item: item.label)


def _normalize_key(key: object, int_keys: bool) -> int | str | None:
    if int_keys:
        ok = isinstance(key, (int, np.integer)) and not isinstance(key, (bool, np.bool_))
        return int(key) if ok else None
    return _normalize_word(key) if isinstance(key, str) else None


def _key_text(key: object) -> str:
    return f'"{key}"' if isinstance(key, str) else safe_repr(key)


def _join(hints: Iterable[str]) -> str:
    return " ".join(dict.fromkeys(hint for hint in hints if hint))


def choice_verdict(value: object, options: Mapping[str, str], correct: str, why_right: str,
                   why_wrong: Mapping[str, str], hint: str = "") -> Verdict:
    """Выбор одного варианта. Отзыв на неверную букву объясняет, чем плох этот
    вариант, но не называет верный."""
    letter = as_choice(value, options)
    if letter == correct:
        return Verdict(True, f"{letter} — {why_right}")
    return Verdict(False, f"{letter} не подходит: {why_wrong[letter]}", hint)


# ---------------------------------------------------------------------------
# Упражнения с кодом: функция учащегося против эталона на скрытых случаях
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """Скрытый случай: короткое описание (без ответа) и аргументы вызова."""

    description: str
    arguments: tuple


def compare_functions(number: str, candidate: object, reference: Callable, cases: Sequence[Case], *,
                      name: str, hint: str, atol: float = 1e-9) -> Feedback:
    """Вызвать ``candidate`` и ``reference`` на каждом случае и сравнить результаты.

    Аргументы передаются копиями, так что функция учащегося не испортит
    следующие случаи. Отзыв останавливается на первом расхождении и говорит,
    где оно: исключение, форма результата или первый отличающийся элемент.
    """
    if not callable(candidate):
        raise AnswerFormatError(f"ожидается функция {name}(...), получено {safe_repr(candidate)}.")
    items = []
    for index, case in enumerate(cases, start=1):
        label = f"случай {index} ({case.description})"
        expected = np.asarray(reference(*_copies(case.arguments)), dtype=np.float64)
        problem = _first_difference(candidate, case.arguments, expected, atol)
        if problem is _STUB:
            return Feedback(number, False, (), f"замените заглушку return ... в функции {name} своим кодом.",
                            placeholder=True)
        if problem:
            items.append(ItemResult(label, "wrong", problem))
            return Feedback(number, False, tuple(items), hint)
        items.append(ItemResult(label, "ok", "совпадает с библиотекой."))
    return Feedback(number, True, tuple(items))


def _copies(arguments: tuple) -> tuple:
    return tuple(np.array(a) if isinstance(a, np.ndarray) else a for a in arguments)


# A learner's function still returning the stub's ``...``: not a wrong answer, an unfilled one.
_STUB = "заглушка"


def _first_difference(candidate: Callable, arguments: tuple, expected: np.ndarray, atol: float) -> str:
    """Пустая строка, если результат совпал; ``_STUB``, если функция вернула ``...``;
    иначе — где первое расхождение."""
    try:
        result = candidate(*_copies(arguments))
    except Exception as error:
        message = str(error).splitlines()[0][:120] if str(error) else ""
        return f"вызов поднял {type(error).__name__}" + (f": {message}" if message else "") + "."
    if result is Ellipsis:
        return _STUB
    if result is None:
        return "функция вернула None: не забыт ли return?"
    if hasattr(result, "value") and isinstance(result.value, np.ndarray):
        return "функция вернула Tensor; верните массив NumPy (его .value)."
    try:
        got = np.asarray(result, dtype=np.float64)
    except (TypeError, ValueError):
        kind = "не число" if expected.ndim == 0 else "не числовой массив"
        return f"результат {safe_repr(result)} — {kind}."
    if got.shape != expected.shape:
        return f"форма результата {format_shape(got.shape)}, а у библиотеки {format_shape(expected.shape)}."
    wrong = ~np.isclose(got, expected, rtol=0.0, atol=atol, equal_nan=False)
    if not wrong.any():
        return ""
    where = tuple(int(i) for i in np.argwhere(wrong)[0])
    return (f"первое расхождение в элементе {list(where)}: получено {_number(got[where])}, "
            f"у библиотеки {_number(expected[where])} (всего отличается {int(wrong.sum())} "
            f"из {wrong.size}).")


def _number(value: float) -> str:
    return f"{value:.4f}" if math.isfinite(value) else str(value)


# ---------------------------------------------------------------------------
# Описание значений и разбор ответов
# ---------------------------------------------------------------------------


def is_placeholder(value: object) -> bool:
    return value is None or value is Ellipsis


def plural(n: int, one: str, few: str, many: str) -> str:
    """Русская форма слова для числа ``n``: 1 ось, 2 оси, 5 осей."""
    if n % 10 == 1 and n % 100 != 11:
        return one
    if 2 <= n % 10 <= 4 and not 12 <= n % 100 <= 14:
        return few
    return many


def format_shape(shape: Sequence[int]) -> str:
    return "[" + ", ".join(safe_repr(size) for size in shape) + "]"


def safe_repr(value: object, limit: int = 80) -> str:
    """Короткое детерминированное описание любого значения (без адресов памяти)."""
    try:
        text = _repr(value, 0)
    except Exception:
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _repr(value: object, depth: int) -> str:
    if value is None or value is Ellipsis:
        return "None" if value is None else "..."
    if isinstance(value, (bool, np.bool_)):
        return "True" if value else "False"
    if isinstance(value, (int, np.integer)):
        number = int(value)
        return str(number) if number.bit_length() <= 100 else "<очень большое целое>"
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    if isinstance(value, str):
        return repr(value if len(value) <= 60 else value[:60] + "…")
    if isinstance(value, np.ndarray):
        return f"массив NumPy формы {tuple(value.shape)} ({value.dtype})"
    if depth >= 3:
        return "…"
    if isinstance(value, (list, tuple)):
        parts = [_repr(item, depth + 1) for item in value[:8]] + (["…"] if len(value) > 8 else [])
        body = ", ".join(parts)
        if isinstance(value, list):
            return f"[{body}]"
        return f"({body},)" if len(value) == 1 else f"({body})"
    if isinstance(value, (set, frozenset)):
        parts = sorted(_repr(item, depth + 1) for item in value)
        return "{" + ", ".join(parts[:8] + (["…"] if len(parts) > 8 else [])) + "}" if parts else "set()"
    if isinstance(value, Mapping):
        pairs = [f"{_repr(k, depth + 1)}: {_repr(v, depth + 1)}" for k, v in itertools.islice(value.items(), 8)]
        return "{" + ", ".join(pairs + (["…"] if len(value) > 8 else [])) + "}"
    if callable(value):
        return f"<функция {getattr(value, '__name__', type(value).__name__)}>"
    return f"<{type(value).__name__}>"


_LOOKALIKE = str.maketrans({"А": "A", "В": "B", "С": "C", "Е": "E", "а": "a", "с": "c", "е": "e"})


def _normalize_word(text: str) -> str:
    return "_".join(text.translate(_LOOKALIKE).strip().lower().replace("-", " ").split())


def _say(what: str, text: str) -> str:
    return f"{what}: {text}" if what else text


def as_int(value: object, what: str = "", *, allow_integral_float: bool = False) -> int:
    """Целое из ``int``/целого NumPy; ``float`` с целым значением — только если разрешено."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, (bool, np.bool_)):
        raise AnswerFormatError(_say(what, f"{safe_repr(value)} — логическое значение, а нужно целое число."))
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        number = float(value)
        if not math.isfinite(number) or not number.is_integer():
            raise AnswerFormatError(_say(what, f"{safe_repr(value)} — не целое число."))
        if allow_integral_float:
            return int(number)
        raise AnswerFormatError(_say(what, f"нужно целое число без точки, а не {safe_repr(value)}."))
    if isinstance(value, str) and value.strip().isdigit():
        raise AnswerFormatError(_say(what, f"{safe_repr(value)} — строка; уберите кавычки."))
    raise AnswerFormatError(_say(what, f"ожидалось целое число, получено {safe_repr(value)}."))


def as_list(value: object, what: str = "") -> list[object]:
    """Упорядоченная последовательность: список, кортеж или одномерный массив NumPy."""
    if isinstance(value, np.ndarray):
        if value.ndim != 1:
            raise AnswerFormatError(_say(what, f"нужен одномерный список, а получен {safe_repr(value)}."))
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, (set, frozenset, Mapping)):
        raise AnswerFormatError(_say(what, "нужен список: у множества или словаря нет порядка элементов."))
    raise AnswerFormatError(_say(what, f"нужен список, получено {safe_repr(value)}."))


def as_shape(value: object) -> tuple[int, ...]:
    """Форма — список или кортеж целых размеров осей."""
    return tuple(as_int(item, f"размер оси {index}") for index, item in enumerate(as_list(value)))


def as_int_set(value: object, what: str = "") -> frozenset[int]:
    """Набор номеров: множество, список, кортеж, ``range`` или одномерный массив целых."""
    if isinstance(value, (set, frozenset)):
        items: list[object] = sorted(value, key=safe_repr)
    elif isinstance(value, range):
        items = list(value)
    elif isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        raise AnswerFormatError(_say(what, f"нужен набор номеров, например {{{safe_repr(value)}}}, "
                                           "а не одно число."))
    else:
        items = as_list(value, what)
    return frozenset(as_int(item, _say(what, f"элемент {safe_repr(item)}")) for item in items)


def as_bool(value: object, what: str = "") -> bool:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, str) and _normalize_word(value) in ("true", "false", "да", "нет"):
        raise AnswerFormatError(_say(what, f"напишите True или False без кавычек, а не {safe_repr(value)}."))
    raise AnswerFormatError(_say(what, f"нужно True или False, получено {safe_repr(value)}."))


def as_label(value: object, allowed: Sequence[str], what: str = "") -> str:
    """Текстовая метка из ``allowed`` (регистр, пробелы и дефисы не важны)."""
    names = ", ".join(f'"{name}"' for name in allowed)
    if not isinstance(value, str):
        raise AnswerFormatError(_say(what, f"нужна строка — одна из {names}; получено {safe_repr(value)}."))
    label = _normalize_word(value)
    if label not in allowed:
        raise AnswerFormatError(_say(what, f"{safe_repr(value)} не распознано; допустимы {names}."))
    return label


def as_choice(value: object, options: Mapping[str, str]) -> str:
    """Буква варианта: ``"b"``, ``" B "``, ``"B)"`` и кириллическая «В» читаются как ``"B"``."""
    letters = ", ".join(f'"{letter}"' for letter in options)
    if not isinstance(value, str):
        raise AnswerFormatError(f"ответ — строка с буквой варианта ({letters}), получено {safe_repr(value)}.")
    letter = value.translate(_LOOKALIKE).strip().strip("()[].'\" ").upper()
    if letter not in options:
        raise AnswerFormatError(f"варианта {safe_repr(value)} нет; есть {letters}.")
    return letter
