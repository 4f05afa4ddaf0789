"""Проверка ответов к упражнениям: объект ``Feedback`` и общие помощники глав 30 и 31.

Каждая функция ``check_exercise_N`` принимает любой объект и возвращает
``Feedback``; исключение наружу не выходит. Текст обратной связи — обычный
текст без адресов памяти и без зависимости от порядка множеств, поэтому
ячейка блокнота печатает его одинаково при каждом запуске (nbval сравнивает
вывод побайтно).

Общие правила разбора ответов (одинаковые для обеих глав):

* ``None`` и ``...`` — заглушки: ответ ещё не заполнен, это не ошибка.
* Размеры осей, номера строк и ключи-числа — только ``int`` (или целые типы
  NumPy). ``True``/``False`` числом не считаются, ``5.0`` как размер оси или
  номер строки не принимается: NumPy тоже требует целые размеры и индексы.
* Число параметров — тоже ``int``, но конечный ``float`` с целым значением
  (``1752.0``) принимается как равное ему целое, с пометкой в отзыве.
* Буквы вариантов и текстовые метки не зависят от регистра и пробелов;
  кириллические «А», «В», «С», «Е», похожие на латинские, читаются как латинские.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

__all__ = [
    "AnswerFormatError", "CountTerm", "Exercise", "ExerciseSpec", "Feedback", "Field", "ItemResult", "Text",
    "Verdict", "answer_template", "as_bool", "as_choice", "as_int", "as_int_set", "as_label", "as_list",
    "as_shape", "check_answer", "choice_verdict", "count_verdict", "diagnose_counts", "format_shape",
    "is_placeholder", "key_text", "plural", "prefix_rows_fields", "safe_repr", "shape_field",
]


class Text(str):
    """Строка, которая в блокноте печатается как обычный текст (без кавычек и ``\\n``)."""

    def __repr__(self) -> str:
        return str(self)


# ---------------------------------------------------------------------------
# Результат проверки
# ---------------------------------------------------------------------------

_STATUS_MARK = {"ok": "✓ верно", "wrong": "✗ ошибка", "missing": "… не заполнено"}


@dataclass(frozen=True)
class ItemResult:
    """Один пункт ответа: ``status`` — ``"ok"``, ``"wrong"`` или ``"missing"``."""

    label: str
    status: str
    message: str

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def __str__(self) -> str:
        return f"{_STATUS_MARK[self.status]} · {self.label}: {self.message}"


@dataclass(frozen=True)
class Feedback:
    """Итог проверки одного упражнения.

    ``correct`` — весь ответ верен; ``items`` — пункты по порядку (что верно,
    что нет); ``hint`` — адресная подсказка к найденным ошибкам (пустая, если
    ответ верен); ``placeholder`` — ответ ещё не заполнен. ``bool(feedback)``
    равно ``correct``, поэтому в скрытой ячейке решения можно писать
    ``assert ch30.check_exercise_1(ch30.solution_1())``.
    """

    exercise: str
    correct: bool
    items: tuple[ItemResult, ...] = ()
    hint: str = ""
    placeholder: bool = False

    @property
    def right(self) -> tuple[ItemResult, ...]:
        return tuple(item for item in self.items if item.ok)

    @property
    def wrong(self) -> tuple[ItemResult, ...]:
        return tuple(item for item in self.items if not item.ok)

    def __bool__(self) -> bool:
        return self.correct

    def __str__(self) -> str:
        if self.correct:
            status = "верно."
        elif self.placeholder:
            status = "ответ ещё не заполнен."
        else:
            status = "пока не верно."
            if len(self.items) > 1:
                status = f"пока не верно (верных пунктов: {len(self.right)} из {len(self.items)})."
        lines = [f"Упражнение {self.exercise}: {status}"]
        lines.extend(f"  {item}" for item in self.items)
        if self.hint:
            lines.append(f"Подсказка: {self.hint}")
        return "\n".join(lines)

    __repr__ = __str__


# ---------------------------------------------------------------------------
# Описание упражнения и разбор ответа по полям
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ExerciseSpec:
    """Условие, формат ответа, шаблон ячейки и списки (варианты, ключи) одного упражнения.

    ``lists`` — заголовок → словарь ``{ключ: пояснение}``; однобуквенные ключи
    печатаются как варианты ``A) …``, остальные — как ``"key" — …``.
    """

    exercise: str
    statement: str
    answer_format: str
    template: str
    lists: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    def describe(self) -> Text:
        lines = [f"Упражнение {self.exercise}. {self.statement}", "", f"Формат ответа: {self.answer_format}"]
        for heading, entries in self.lists.items():
            lines += ["", heading]
            for key, text in entries.items():
                lines.append(f"  {key}) {text}" if len(key) == 1 else f'  "{key}" — {text}')
        lines += ["", "Шаблон ячейки (замените каждое ... своим значением):", self.template]
        return Text("\n".join(lines))


class Exercise(NamedTuple):
    """Три функции упражнения: проверка, эталонный ответ, описание формата."""

    check: Callable[[object], Feedback]
    solution: Callable[[], object]
    describe: Callable[[], Text]


@dataclass(frozen=True)
class Verdict:
    """Вердикт по одному полю: верно ли, что именно сказать и какую подсказку дать."""

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


def is_placeholder(value: object) -> bool:
    return value is None or value is Ellipsis


def plural(n: int, one: str, few: str, many: str) -> str:
    """Русская форма слова для числа ``n``: 1 ось, 2 оси, 5 осей."""
    if n % 10 == 1 and n % 100 != 11:
        return one
    if 2 <= n % 10 <= 4 and not 12 <= n % 100 <= 14:
        return few
    return many


def key_text(key: object) -> str:
    """Ключ так, как его пишут в ячейке: строки в двойных кавычках, числа как есть."""
    return f'"{key}"' if isinstance(key, str) else safe_repr(key)


def _normalize_key(key: object, int_keys: bool) -> int | str | None:
    """Ключ ответа в виде ключа поля; ``None`` — такой ключ не предусмотрен."""
    if int_keys:
        if isinstance(key, (bool, np.bool_)):
            return None
        if isinstance(key, (int, np.integer)):
            return int(key)
        return None
    if isinstance(key, str):
        return _normalize_word(key)
    return None


def _run_field(item: Field, value: object, spec: ExerciseSpec) -> tuple[ItemResult, str]:
    """Пункт результата и подсказка к нему (пустая, если пункт верен или своей подсказки нет)."""
    try:
        verdict = item.check(value)
    except AnswerFormatError as error:
        return ItemResult(item.label, "wrong", str(error)), f"Формат ответа: {spec.answer_format}"
    if verdict.ok:
        return ItemResult(item.label, "ok", verdict.message), ""
    return ItemResult(item.label, "wrong", verdict.message), verdict.hint


def _join_hints(hints: Iterable[str]) -> str:
    unique: list[str] = []
    for hint in hints:
        if hint and hint not in unique:
            unique.append(hint)
    return " ".join(unique)


def check_answer(
    spec: ExerciseSpec,
    answer: object,
    fields: Sequence[Field],
    *,
    default_hint: str,
    not_mapping: Callable[[object], Verdict] | None = None,
) -> Feedback:
    """Проверить ответ по полям; никогда не поднимает исключение.

    Если у единственного поля ключ ``None``, весь ответ — одно значение.
    Иначе ответ — словарь: недостающие ключи и заглушки отмечаются
    «не заполнено», лишние ключи — ошибкой. ``not_mapping`` может разобрать
    ответ, который пришёл не словарём (например, одна матрица вместо словаря).
    """
    try:
        return _check_answer(spec, answer, fields, default_hint, not_mapping)
    except Exception as error:
        return Feedback(
            spec.exercise, False,
            (ItemResult("ответ", "wrong", f"внутренняя ошибка проверки ({type(error).__name__}); "
                        "сообщите авторам курса, какое значение вы ввели"),),
            f"Формат ответа: {spec.answer_format}",
        )


def _placeholder_feedback(spec: ExerciseSpec) -> Feedback:
    hint = f"Замените заглушку ... (или None) своим ответом. Формат: {spec.answer_format}"
    return Feedback(spec.exercise, False, (), hint, placeholder=True)


def _check_answer(spec, answer, fields, default_hint, not_mapping) -> Feedback:
    if is_placeholder(answer):
        return _placeholder_feedback(spec)
    if len(fields) == 1 and fields[0].key is None:
        result, hint = _run_field(fields[0], answer, spec)
        return Feedback(spec.exercise, result.ok, (result,), "" if result.ok else hint or default_hint)
    if not isinstance(answer, Mapping):
        return _not_a_mapping(spec, answer, not_mapping)
    return _check_mapping(spec, answer, fields, default_hint)


def _not_a_mapping(spec, answer, not_mapping) -> Feedback:
    message = f"ожидается словарь, получено {safe_repr(answer)}."
    hint = f"Формат ответа: {spec.answer_format}"
    if not_mapping is not None:
        try:
            verdict = not_mapping(answer)
            message, hint = f"{message} {verdict.message}", _join_hints([verdict.hint, hint])
        except AnswerFormatError:
            pass
    return Feedback(spec.exercise, False, (ItemResult("формат", "wrong", message),), hint)


def _group_by_key(answer: Mapping, fields: Sequence[Field]) -> tuple[dict[object, list[object]], list[ItemResult]]:
    """Значения ответа по ключам полей (с учётом разного написания) и пункты о лишних ключах."""
    int_keys = isinstance(fields[0].key, int)
    known = {item.key for item in fields}
    allowed = ", ".join(key_text(item.key) for item in fields)
    by_key: dict[object, list[object]] = {}
    extras: list[ItemResult] = []
    for key, value in answer.items():
        normal = _normalize_key(key, int_keys)
        if normal in known:
            by_key.setdefault(normal, []).append(value)
        else:
            extras.append(ItemResult(f"ключ {key_text(key)}", "wrong",
                                     f"такого ключа в ответе нет; ожидаются ключи {allowed}."))
    return by_key, sorted(extras, key=lambda item: item.label)


def _check_mapping(spec, answer, fields, default_hint) -> Feedback:
    by_key, extras = _group_by_key(answer, fields)
    items: list[ItemResult] = []
    hints: list[str] = []
    for item in fields:
        values = by_key.get(item.key, [])
        if len(values) > 1:
            items.append(ItemResult(item.label, "wrong", "ключ указан несколько раз в разном написании."))
        elif not values:
            items.append(ItemResult(item.label, "missing", "ключа нет в словаре."))
        elif is_placeholder(values[0]):
            items.append(ItemResult(item.label, "missing", "замените заглушку своим значением."))
        else:
            result, hint = _run_field(item, values[0], spec)
            items.append(result)
            if not result.ok:
                hints.append(hint or default_hint)
    if answer and not extras and all(item.status == "missing" for item in items):
        return _placeholder_feedback(spec)  # шаблон ячейки, ещё не тронутый
    items.extend(extras)
    if all(item.ok for item in items):
        return Feedback(spec.exercise, True, tuple(items))
    if extras:
        hints.append(default_hint)
    if any(item.status == "missing" for item in items):
        hints.append("Заполните все ключи: " + ", ".join(key_text(item.key) for item in fields) + ".")
    return Feedback(spec.exercise, False, tuple(items), _join_hints(hints) or default_hint)


# ---------------------------------------------------------------------------
# Безопасное описание значения учащегося
# ---------------------------------------------------------------------------


def safe_repr(value: object, limit: int = 80) -> str:
    """Короткое детерминированное описание любого значения (без адресов памяти)."""
    try:
        text = _repr(value, 0)
    except Exception:
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _repr(value: object, depth: int) -> str:
    if value is None:
        return "None"
    if value is Ellipsis:
        return "..."
    if isinstance(value, (bool, np.bool_)):
        return "True" if value else "False"
    if isinstance(value, (int, np.integer)):
        number = int(value)
        if number.bit_length() > 100:
            return f"<целое из {len(str(number)) if number.bit_length() < 10_000 else 'многих'} цифр>"
        return str(number)
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
    return f"<{type(value).__name__}>"


# ---------------------------------------------------------------------------
# Разбор значений: поднимают AnswerFormatError с понятным сообщением
# ---------------------------------------------------------------------------

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
        if not math.isfinite(number):
            raise AnswerFormatError(_say(what, f"{safe_repr(value)} — не конечное число."))
        if not number.is_integer():
            raise AnswerFormatError(_say(what, f"{safe_repr(value)} — не целое число."))
        if allow_integral_float:
            return int(number)
        example = safe_repr(int(number))
        raise AnswerFormatError(_say(what, f"нужно целое число, например {example}, а не {safe_repr(value)}."))
    if isinstance(value, str) and value.strip().isdigit():
        raise AnswerFormatError(_say(what, f"{safe_repr(value)} — строка; уберите кавычки, нужно целое число."))
    raise AnswerFormatError(_say(what, f"ожидалось целое число, получено {safe_repr(value)}."))


def as_list(value: object, what: str = "") -> list[object]:
    """Упорядоченная последовательность: список, кортеж или одномерный массив NumPy."""
    if isinstance(value, np.ndarray):
        if value.ndim != 1:
            raise AnswerFormatError(_say(what, f"нужен одномерный список, а получен {safe_repr(value)}."))
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, str):
        raise AnswerFormatError(_say(what, f"нужен список, а получена строка {safe_repr(value)}."))
    if isinstance(value, (set, frozenset, Mapping)):
        raise AnswerFormatError(_say(what, "нужен список — у множества или словаря нет порядка элементов."))
    raise AnswerFormatError(_say(what, f"нужен список, получено {safe_repr(value)}."))


def as_shape(value: object) -> tuple[int, ...]:
    """Форма — список или кортеж целых размеров осей."""
    items = as_list(value)
    return tuple(as_int(item, f"размер оси {index}") for index, item in enumerate(items))


def as_int_set(value: object, what: str = "") -> frozenset[int]:
    """Набор номеров: множество, список, кортеж, ``range`` или одномерный массив целых."""
    if isinstance(value, (set, frozenset)):
        items: list[object] = sorted(value, key=safe_repr)  # порядок множества зависит от хешей строк
    elif isinstance(value, range):
        items = list(value)
    elif isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        example = "{" + safe_repr(value) + "}"
        raise AnswerFormatError(_say(what, f"нужен набор номеров строк, например {example}, а не одно число."))
    else:
        items = as_list(value, what)
    return frozenset(as_int(item, _say(what, f"элемент {safe_repr(item)}")) for item in items)


_BOOL_WORDS = ("true", "false", "да", "нет")


def as_bool(value: object, what: str = "") -> bool:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, str) and _normalize_word(value) in {_normalize_word(word) for word in _BOOL_WORDS}:
        raise AnswerFormatError(_say(what, f"напишите True или False без кавычек, а не {safe_repr(value)}."))
    raise AnswerFormatError(_say(what, f"нужно True или False, получено {safe_repr(value)}."))


def as_label(value: object, allowed: Sequence[str], what: str = "") -> str:
    """Текстовый идентификатор из ``allowed`` (регистр, пробелы и дефисы не важны)."""
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
        if len(letter) > 1:
            raise AnswerFormatError(f"укажите одну букву варианта ({letters}), а не {safe_repr(value)}.")
        raise AnswerFormatError(f"варианта {safe_repr(value)} нет; есть {letters}.")
    return letter


def answer_template(module: str, number: int, keys: Sequence[int | str] | None = None) -> str:
    """Код ячейки ответа с заглушками ``...``; он запускается как есть."""
    call = f"{module}.check_exercise_{number}(answer)"
    if keys is None:
        return f"answer = ...\n{call}"
    body = "".join(f"    {key_text(key)}: ...,\n" for key in keys)
    return f"answer = {{\n{body}}}\n{call}"


def format_shape(shape: Sequence[int]) -> str:
    return "[" + ", ".join(safe_repr(size) for size in shape) + "]"


# ---------------------------------------------------------------------------
# Общие проверки: выбор варианта, формы, число параметров, неизменный префикс
# ---------------------------------------------------------------------------


def choice_verdict(
    value: object,
    options: Mapping[str, str],
    correct: str,
    why_right: str,
    why_wrong: Mapping[str, str],
    hint: str = "",
) -> Verdict:
    """Вердикт для выбора одного варианта; у каждого неверного варианта своё объяснение."""
    letter = as_choice(value, options)
    if letter == correct:
        return Verdict(True, f"{letter} — {why_right}")
    return Verdict(False, f"{letter} не подходит: {why_wrong[letter]}", hint)


def shape_field(
    key: str,
    label: str,
    expected: Sequence[int],
    axes: Sequence[str],
    mistakes: Mapping[tuple[int, ...], str] | None = None,
) -> Field:
    """Поле-форма: ``axes`` — символические имена осей, ``mistakes`` — типичные неверные формы."""
    expected = tuple(expected)
    pattern = "[" + ", ".join(axes) + "]"
    known = dict(mistakes or {})

    def check(value: object) -> Verdict:
        shape = as_shape(value)
        if shape == expected:
            return Verdict(True, f"{format_shape(shape)} = {pattern}.")
        if shape in known:
            return Verdict(False, f"{format_shape(shape)}: {known[shape]}")
        if len(shape) != len(expected):
            count = len(expected)
            return Verdict(False, f"{format_shape(shape)}: здесь {count} {plural(count, 'ось', 'оси', 'осей')} "
                                  f"{pattern}, а в ответе {len(shape)}.")
        wrong_axes = ", ".join(name for name, got, want in zip(axes, shape, expected) if got != want)
        return Verdict(False, f"{format_shape(shape)}: порядок осей {pattern} верен, "
                              f"но не совпадает размер: {wrong_axes}.")

    return Field(key, label, check)


@dataclass(frozen=True)
class CountTerm:
    """Слагаемое формулы числа параметров и его типичные неверные варианты ``(значение, объяснение)``."""

    correct: int
    mistakes: tuple[tuple[int, str], ...] = ()


def diagnose_counts(
    terms: Sequence[CountTerm], known: Mapping[int, str] | None = None, max_mistakes: int = 2
) -> dict[int, str]:
    """Неверный итог → объяснение: перебор сочетаний не более ``max_mistakes`` ошибок в слагаемых.

    При совпадении итогов остаётся объяснение с меньшим числом ошибок;
    явные значения ``known`` важнее перебора.
    """
    expected = sum(term.correct for term in terms)
    result: dict[int, str] = dict(known or {})
    for count in range(1, max_mistakes + 1):
        for chosen in itertools.combinations(range(len(terms)), count):
            for picks in itertools.product(*(terms[index].mistakes for index in chosen)):
                total = expected + sum(value - terms[index].correct for index, (value, _) in zip(chosen, picks))
                if total != expected and total not in result:
                    result[total] = "; ".join(reason for _, reason in picks)
    return result


def count_verdict(value: object, expected: int, diagnoses: Mapping[int, str], formula: str, hint: str) -> Verdict:
    """Вердикт для числа параметров: ``int`` или ``float`` с целым значением."""
    number = as_int(value, allow_integral_float=True)
    shown = safe_repr(number)
    note = "" if isinstance(value, (int, np.integer)) else f" (значение {safe_repr(value)} принято как целое {shown})"
    if number == expected:
        return Verdict(True, f"{shown} = {formula}{note}.")
    if number in diagnoses:
        return Verdict(False, f"{shown}: похоже, {diagnoses[number].rstrip('.')}.", hint)
    relation = "больше" if number > expected else "меньше"
    return Verdict(False, f"{shown} — {relation} нужного; такую ошибку не удалось узнать.", hint)


def _rows(items: Iterable[int]) -> str:
    if not items:
        return "set()"
    return "{" + ", ".join(safe_repr(item) for item in sorted(items)) + "}"


def prefix_rows_fields(tokens: int, changed: int, row_local: str) -> list[Field]:
    """Поля ``"unchanged"`` и ``"may_change"``: какие строки выхода зависят от изменённого токена.

    Меняется только вход в позиции ``changed``. ``row_local`` называет
    преобразования, работающие внутри одной строки (например, «W_O»).
    """
    before = frozenset(range(changed))
    after = frozenset(range(changed, tokens))
    why = {
        before: (f"строки {_rows(before)} не видят токен {changed}: каузальная маска закрывает ключи справа "
                 f"от запроса, а {row_local} работают внутри одной строки"),
        after: (f"в строке {changed} стоит сам изменённый токен, её выход может измениться" if len(after) == 1
                else f"строки {_rows(after)} видят изменённый токен {changed}"),
    }
    hint = (f"Строка q видит только ключи k ≤ q, а {row_local} не смешивают позиции; "
            f"поэтому изменение токена {changed} может дойти только до строк q ≥ {changed}.")

    def check(value: object, expected: frozenset[int], other: frozenset[int]) -> Verdict:
        given = as_int_set(value)
        outside = given - frozenset(range(tokens))
        if outside:
            return Verdict(False, f"номера {_rows(outside)} вне диапазона: в примере позиции 0…{tokens - 1}.", hint)
        if given == expected:
            return Verdict(True, f"{_rows(given)} — {why[expected]}.")
        parts = []
        if expected - given:
            parts.append(f"не хватает {_rows(expected - given)}: {why[expected]}")
        if given - expected:
            parts.append(f"лишние {_rows(given - expected)}: {why[other]}")
        return Verdict(False, f"{_rows(given)} — " + "; ".join(parts) + ".", hint)

    return [
        Field("unchanged", '"unchanged"', lambda value: check(value, before, after)),
        Field("may_change", '"may_change"', lambda value: check(value, after, before)),
    ]
