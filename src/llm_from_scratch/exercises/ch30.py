"""Упражнения главы 30: каузальное многоголовое внимание с RoPE.

Для каждого упражнения N есть три функции:

* ``describe_exercise_N()`` — условие, формат ответа, варианты и шаблон ячейки;
* ``check_exercise_N(answer)`` — проверка любого значения, всегда ``Feedback``;
* ``solution_N()`` — эталонный ответ из главы в принятом формате.

Варианты выбора лежат в константах ``EXERCISE_4_OPTIONS`` и
``EXERCISE_7_OPTIONS``; ответ — буква варианта. ``EXERCISES`` связывает номер
упражнения с его тремя функциями.
"""

from __future__ import annotations

import re

import numpy as np

from .feedback import (
    AnswerFormatError,
    CountTerm,
    Exercise,
    ExerciseSpec,
    Feedback,
    Field,
    Text,
    Verdict,
    answer_template,
    as_label,
    check_answer,
    choice_verdict,
    count_verdict,
    diagnose_counts,
    plural,
    prefix_rows_fields,
    safe_repr,
    shape_field,
)

__all__ = [
    "EXERCISES", "EXERCISE_1_LABELS", "EXERCISE_2_STAGES", "EXERCISE_4_OPTIONS", "EXERCISE_7_OPTIONS",
    *(f"{kind}_{n}" for n in range(1, 9) for kind in ("check_exercise", "describe_exercise", "solution")),
]

_MODULE = "ch30"

# ---------------------------------------------------------------------------
# Упражнение 1: допустимые числа голов при d_model = 6
# ---------------------------------------------------------------------------

EXERCISE_1_LABELS = {
    "valid": "допустимо: d_model делится на h, и ширина головы d_h чётная",
    "indivisible": "недопустимо: d_model не делится на h без остатка",
    "odd_head_width": "недопустимо: d_h = d_model / h нечётная, RoPE не разбить на пары",
}
_WIDTH_1 = 6
_HEADS_1 = (1, 2, 3, 4, 6)
_PAIRS_HINT = "RoPE в этой главе поворачивает соседние пары координат всей головы, поэтому d_h обязана быть чётной."
_DIVIDE_HINT = "Сначала проверьте делимость: d_h = d_model / h должна быть целой; только потом — её чётность."

_SPEC_1 = ExerciseSpec(
    "30.1",
    "Для d_model = 6 классифицируйте h = 1, 2, 3, 4 и 6 по правилу главы: "
    "d_model делится на h, и ширина головы d_h = d_model / h чётная (для RoPE).",
    'словарь {h: метка} для h = 1, 2, 3, 4, 6; метка — "valid", "indivisible" или "odd_head_width" '
    "(значения меток — в ch30.EXERCISE_1_LABELS).",
    answer_template(_MODULE, 1, _HEADS_1),
    {"Метки (EXERCISE_1_LABELS):": EXERCISE_1_LABELS},
)


def _head_label(heads: int) -> str:
    if _WIDTH_1 % heads:
        return "indivisible"
    return "valid" if (_WIDTH_1 // heads) % 2 == 0 else "odd_head_width"


def _head_count_check(heads: int):
    truth = _head_label(heads)
    width = _WIDTH_1 // heads
    pairs = f"{width // 2} {plural(width // 2, 'пару', 'пары', 'пар')}"
    unpaired = "единственная координата головы" if width == 1 else "одна координата головы"
    reason = {
        "valid": f"d_h = 6 / {heads} = {width}, чётная: RoPE поворачивает {pairs} координат",
        "odd_head_width": f"6 делится на {heads}, но d_h = {width} нечётная: {unpaired} остаётся без пары для RoPE",
        "indivisible": f"6 / {heads} = {_WIDTH_1 / heads:g} — не целое, ширину головы не выбрать",
    }[truth]

    def check(value: object) -> Verdict:
        label = as_label(value, tuple(EXERCISE_1_LABELS))
        if label == truth:
            return Verdict(True, f'"{label}": {reason}.')
        if truth == "indivisible":
            return Verdict(False, f'"{label}" не подходит: {reason}; до проверки чётности дело не доходит.',
                           _DIVIDE_HINT)
        if label == "indivisible":
            return Verdict(False, f'"{label}" не подходит: 6 делится на {heads} без остатка, d_h = {width}.',
                           _DIVIDE_HINT)
        return Verdict(False, f'"{label}" не подходит: {reason}.', _PAIRS_HINT)

    return check


def check_exercise_1(answer: object) -> Feedback:
    """Проверить словарь ``{h: "valid" | "indivisible" | "odd_head_width"}``."""
    fields = [Field(heads, f"h={heads}", _head_count_check(heads)) for heads in _HEADS_1]
    return check_answer(_SPEC_1, answer, fields,
                        default_hint="Для каждого h проверьте, делится ли 6 на h, и если да — чётна ли d_h.")


def solution_1() -> dict[int, str]:
    return {heads: _head_label(heads) for heads in _HEADS_1}


def describe_exercise_1() -> Text:
    return _SPEC_1.describe()


# ---------------------------------------------------------------------------
# Упражнение 2: формы при B = 2, T = 5, d_model = 12, h = 3
# ---------------------------------------------------------------------------

EXERCISE_2_STAGES = {
    "qkv": "Q, K и V после проекций (форма каждого)",
    "split": "Q, K и V после разделения на головы",
    "probs_one_head": "вероятности внимания одной головы",
    "probs_all_heads": "вероятности внимания всех голов вместе",
    "head_outputs": "выходы всех голов H = A·V",
    "merged": "после объединения голов",
    "output": "выход слоя после W_O",
}
_UNSPLIT = "проекции Q = X·W_Q, K и V выполняются на полной ширине d_model, до разделения на головы"
_NO_TRANSPOSE = ("это форма после reshape, но до перестановки осей: split_heads ещё меняет местами "
                 "оси токенов и голов — ось голов стоит перед осью токенов")
_NOT_DIVIDED = "ширина не разделена: каждая голова получает d_h = d_model / h признаков, а не все d_model"
_NO_D_H_IN_PROBS = "вероятности — таблица «запрос × ключ» размера T × T; ширина головы d_h в ней не участвует"
_SPEC_2 = ExerciseSpec(
    "30.2",
    "Проследите все формы при B = 2, T = 5, d_model = 12 и h = 3.",
    "словарь {этап: форма}; форма — список или кортеж целых чисел, например [1, 3, 4]. "
    "Этапы и их смысл — в ch30.EXERCISE_2_STAGES.",
    answer_template(_MODULE, 2, tuple(EXERCISE_2_STAGES)),
    {"Этапы — ключи словаря (EXERCISE_2_STAGES):": EXERCISE_2_STAGES},
)


def check_exercise_2(answer: object) -> Feedback:
    """Проверить словарь форм по этапам многоголового внимания."""
    full, split, table = ("B", "T", "d_model"), ("B", "h", "T", "d_h"), ("B", "h", "T", "T")
    fields = [
        shape_field("qkv", '"qkv"', (2, 5, 12), full, {
            (2, 3, 5, 4): f"это уже после разделения; {_UNSPLIT}.",
            (2, 5, 4): f"{_UNSPLIT}, поэтому последняя ось — d_model.",
        }),
        shape_field("split", '"split"', (2, 3, 5, 4), split, {
            (2, 5, 3, 4): f"{_NO_TRANSPOSE}.",
            (2, 3, 5, 12): f"{_NOT_DIVIDED}.",
            (2, 5, 12): "это форма до разделения; split_heads добавляет ось голов: [B, h, T, d_h].",
        }),
        shape_field("probs_one_head", '"probs_one_head"', (2, 5, 5), ("B", "T", "T"), {
            (2, 3, 5, 5): "это вероятности всех голов сразу; у одной головы таблица [B, T, T].",
            (2, 5, 4): f"{_NO_D_H_IN_PROBS}.",
            (5, 5): "потеряна ось батча: у каждого примера батча своя таблица [T, T].",
        }),
        shape_field("probs_all_heads", '"probs_all_heads"', (2, 3, 5, 5), table, {
            (2, 5, 5): "это одна голова; у всех голов вместе добавляется ось голов: [B, h, T, T].",
            (2, 5, 3, 5): "ось голов стоит перед осью запросов, как после split_heads: [B, h, T, T].",
            (2, 3, 5, 4): f"{_NO_D_H_IN_PROBS}.",
        }),
        shape_field("head_outputs", '"head_outputs"', (2, 3, 5, 4), split, {
            (2, 3, 5, 5): "это вероятности A; выход головы — смесь значений A·V шириной d_h.",
            (2, 5, 3, 4): "до merge_heads ось голов остаётся перед осью токенов: [B, h, T, d_h].",
            (2, 3, 5, 12): "каждая голова смешивает только свои значения ширины d_h, а не все d_model.",
            (2, 5, 4): "это одна голова; выходы всех голов — [B, h, T, d_h].",
        }),
        shape_field("merged", '"merged"', (2, 5, 12), full, {
            (2, 3, 5, 4): "это ещё до объединения; merge_heads возвращает [B, T, d_model].",
            (2, 5, 3, 4): "после перестановки осей merge_heads склеивает последние две оси: h · d_h = d_model.",
            (2, 5, 4): "конкатенация склеивает выходы всех h голов: h · d_h = d_model.",
        }),
        shape_field("output", '"output"', (2, 5, 12), full, {
            (12, 12): "это форма самой матрицы W_O; выход слоя — строки [B, T, d_model].",
            (2, 5, 4): "W_O имеет форму [d_model, d_model], поэтому выход слоя снова ширины d_model.",
        }),
    ]
    return check_answer(_SPEC_2, answer, fields, default_hint=(
        "Цепочка: [B, T, d_model] → split_heads → [B, h, T, d_h] → вероятности [B, h, T, T] → "
        "выходы голов [B, h, T, d_h] → merge_heads → [B, T, d_model] → W_O → [B, T, d_model]."))


def solution_2() -> dict[str, list[int]]:
    return {
        "qkv": [2, 5, 12], "split": [2, 3, 5, 4], "probs_one_head": [2, 5, 5], "probs_all_heads": [2, 3, 5, 5],
        "head_outputs": [2, 3, 5, 4], "merged": [2, 5, 12], "output": [2, 5, 12],
    }


def describe_exercise_2() -> Text:
    return _SPEC_2.describe()


# ---------------------------------------------------------------------------
# Упражнение 3: треугольник каузальной видимости трёх токенов
# ---------------------------------------------------------------------------

_TOKENS_3 = 3
_VISIBLE = tuple(tuple(int(key <= query) for key in range(_TOKENS_3)) for query in range(_TOKENS_3))
_SAME_MASK_HINT = "Треугольник видимости одинаков во всех головах: маска зависит только от позиций, а не от головы."
_AXES_HINT = "Строка — позиция запроса q, столбец — позиция ключа k; ключ виден, если k ≤ q."


def _pattern(rule) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(int(rule(query, key)) for key in range(_TOKENS_3)) for query in range(_TOKENS_3))


_VISIBILITY_MISTAKES = {
    _pattern(lambda q, k: k >= q): "это треугольник выше диагонали: так запрос видел бы будущие ключи.",
    _pattern(lambda q, k: k < q): ("забыта диагональ: позиция q видит и собственный ключ k = q "
                                   "(иначе у строки 0 не осталось бы ни одного ключа и softmax не определён)."),
    _pattern(lambda q, k: k > q): ("отмечены закрытые ключи (там, где каузальная маска M = −∞), "
                                   "а нужна видимость: 1 там, где ключ доступен."),
    _pattern(lambda q, k: True): "это внимание без каузальной маски: будущие ключи k > q должны быть закрыты.",
    _pattern(lambda q, k: q == k): "маска закрывает только будущие ключи; прошлые ключи k < q остаются видимыми.",
    _pattern(lambda q, k: False): "всё закрыто — тогда softmax не определён; токен видит себя и прошлые ключи.",
}


def _visibility_matrix(value: object) -> tuple[tuple[int, ...], ...]:
    """Матрица 3 × 3 из 0/1 (подходят и True/False, и 1.0/0.0, как у np.tril(np.ones((3, 3))))."""
    rows = value.tolist() if isinstance(value, np.ndarray) else value
    if not isinstance(rows, (list, tuple)) or len(rows) != _TOKENS_3 or not all(
        isinstance(row, (list, tuple, np.ndarray)) and len(row) == _TOKENS_3 for row in rows
    ):
        raise AnswerFormatError("нужна матрица 3 × 3 (список из трёх строк по три числа), "
                                f"получено {safe_repr(value)}. {_AXES_HINT}")
    cells = [list(row.tolist() if isinstance(row, np.ndarray) else row) for row in rows]
    flat = [cell for row in cells for cell in row]
    if not all(isinstance(cell, (bool, int, float, np.bool_, np.integer, np.floating)) for cell in flat):
        raise AnswerFormatError(f"ячейки матрицы — числа 0 или 1, получено {safe_repr(value)}.")
    if any(cell not in (0, 1) for cell in flat):
        if all(0 <= cell <= 1 for cell in flat):
            raise AnswerFormatError("это похоже на вероятности, а нужна видимость: "
                                    "1 — ключ доступен запросу, 0 — закрыт каузальной маской.")
        raise AnswerFormatError(f"в матрице видимости только 0 и 1, получено {safe_repr(value)}.")
    return tuple(tuple(int(cell) for cell in row) for row in cells)


def _visibility_verdict(value: object) -> Verdict:
    matrix = _visibility_matrix(value)
    if matrix == _VISIBLE:
        return Verdict(True, "запрос q видит ключи k ≤ q: единицы на диагонали и ниже, нули выше.")
    if matrix in _VISIBILITY_MISTAKES:
        return Verdict(False, _VISIBILITY_MISTAKES[matrix], _AXES_HINT)
    cells = [
        f"({query}, {key}) — " + ("ключ доступен" if _VISIBLE[query][key] else "будущий ключ закрыт")
        for query in range(_TOKENS_3) for key in range(_TOKENS_3) if matrix[query][key] != _VISIBLE[query][key]
    ]
    return Verdict(False, "неверные ячейки (q, k): " + "; ".join(cells) + ".", _AXES_HINT)


def _single_matrix(value: object) -> Verdict:
    verdict = _visibility_verdict(value)
    state = "сама матрица верна." if verdict.ok else f"и в самой матрице ошибка: {verdict.message}"
    return Verdict(False, f"Оформите ответ словарём {{0: матрица, 1: матрица}} — по матрице на голову; {state}",
                   _SAME_MASK_HINT)


_SPEC_3 = ExerciseSpec(
    "30.3",
    "Заполните треугольник каузальной видимости из трёх токенов для обеих голов.",
    "словарь {голова: матрица} для голов 0 и 1; матрица 3 × 3 — список строк или массив NumPy, "
    "строка — позиция запроса q, столбец — позиция ключа k; 1 — ключ виден, 0 — закрыт "
    "(подходят и True/False, и 1.0/0.0).",
    answer_template(_MODULE, 3, (0, 1)),
)


def check_exercise_3(answer: object) -> Feedback:
    """Проверить ``{0: матрица 3×3, 1: матрица 3×3}`` из 0/1."""
    fields = [Field(head, f"голова {head}", _visibility_verdict) for head in (0, 1)]
    feedback = check_answer(_SPEC_3, answer, fields, default_hint=_AXES_HINT, not_mapping=_single_matrix)
    if sorted(item.status for item in feedback.items) == ["ok", "wrong"]:
        return Feedback(feedback.exercise, False, feedback.items, f"{_SAME_MASK_HINT} {feedback.hint}")
    return feedback


def solution_3() -> dict[int, list[list[int]]]:
    return {head: [list(row) for row in _VISIBLE] for head in (0, 1)}


def describe_exercise_3() -> Text:
    return _SPEC_3.describe()


# ---------------------------------------------------------------------------
# Упражнение 4: почему одно полноразмерное внимание не равно двум головам
# ---------------------------------------------------------------------------

EXERCISE_4_OPTIONS = {
    "A": "Две головы всегда дают разные таблицы вероятностей, а одно полноразмерное вычисление — одну.",
    "B": "Головы получают разные куски исходного входа X, а полноразмерное внимание — весь X.",
    "C": ("Одно полноразмерное вычисление строит одну нормализованную таблицу [T, T], общую для всех признаков "
          "значений; две головы строят две отдельно нормализованные таблицы [T, T], у каждой строки запроса "
          "в каждой голове свой знаменатель softmax."),
    "D": "В многоголовом внимании softmax нормализует вероятности по оси голов, а не по оси ключей.",
}
_SPEC_4 = ExerciseSpec(
    "30.4",
    "Объясните, почему одно полноразмерное вычисление внимания не равносильно двум вычислениям "
    "внутри отдельных голов.",
    'буква верного варианта, например "X" (варианты — в ch30.EXERCISE_4_OPTIONS).',
    answer_template(_MODULE, 4),
    {"Варианты (EXERCISE_4_OPTIONS):": EXERCISE_4_OPTIONS},
)


def check_exercise_4(answer: object) -> Feedback:
    """Проверить букву варианта из ``EXERCISE_4_OPTIONS``."""
    field = Field(None, "вариант", lambda value: choice_verdict(
        value, EXERCISE_4_OPTIONS, "C",
        "верно: различие в числе отдельно нормализованных таблиц; при некоторых параметрах их значения "
        "могут и совпасть.",
        {
            "A": "таблицы голов могут совпасть при некоторых входах и параметрах; различие — в устройстве "
                 "(сколько таблиц и знаменателей), а не в гарантии разных значений.",
            "B": "проекции выполняются до разделения: каждая голова через свои столбцы W_Q, W_K, W_V "
                 "может использовать весь вход X.",
            "D": "softmax всегда идёт по позициям ключей j, отдельно в каждой голове; между головами "
                 "вероятности не нормализуются.",
        },
    ))
    return check_answer(_SPEC_4, answer, [field], default_hint="Сравните, сколько таблиц [T, T] нормализуется.")


def solution_4() -> str:
    return "C"


def describe_exercise_4() -> Text:
    return _SPEC_4.describe()


# ---------------------------------------------------------------------------
# Упражнение 5: W_O на символических строках
# ---------------------------------------------------------------------------

_SYMBOLS = "abcd"
_TERM = re.compile(r"([+-]?)(\d*)\*?([a-z])$|([+-]?)([a-z])\*(\d+)$")


def _linear_form(value: object, what: str = "") -> dict[str, int]:
    """Разобрать ``"a + c"``, ``"c+a"``, ``"1*a + c"`` в коэффициенты ``{"a": 1, "c": 1}``."""
    what = f"{what}: " if what else ""
    if not isinstance(value, str):
        raise AnswerFormatError(f"{what}нужна строка-выражение вроде \"a + b\", получено {safe_repr(value)}.")
    text = value.translate(str.maketrans({"а": "a", "с": "c", "А": "a", "С": "c", "·": "*"}))
    text = re.sub(r"\s+", "", text.lower())
    text = re.sub(r"^y_?\d=", "", text)
    terms = re.findall(r"[+-]?[^+-]+", text)
    if not text or "".join(terms) != text:
        raise AnswerFormatError(f"{what}не удалось разобрать {safe_repr(value)}; "
                                'пишите сумму букв, например "a + b".')
    form: dict[str, int] = {}
    for term in terms:
        match = _TERM.match(term)
        if match is None or (match[3] or match[5]) not in _SYMBOLS:
            raise AnswerFormatError(f"{what}не удалось разобрать слагаемое {safe_repr(term)}; "
                                    "используйте буквы a, b, c, d.")
        sign = -1 if (match[1] or match[4]) == "-" else 1
        symbol, coefficient = (match[3], match[2]) if match[3] else (match[5], match[6])
        form[symbol] = form.get(symbol, 0) + sign * int(coefficient or 1)
    return {symbol: count for symbol, count in sorted(form.items()) if count}


def _show(form: dict[str, int]) -> str:
    """Каноническая запись линейной формы: ``{"a": 2, "c": -1}`` → ``"2*a - c"``."""
    text = ""
    for symbol, count in form.items():
        sign = "-" if count < 0 else "+"
        term = symbol if abs(count) == 1 else f"{abs(count)}*{symbol}"
        text += f" {sign} {term}" if text else ("-" if count < 0 else "") + term
    return text or "0"


def _row_check(expected: str, mistakes: dict[str, str], hint: str):
    """Проверка строки из четырёх символических координат; ``mistakes`` — типичные строки вроде ``"abcd"``."""
    known = {tuple(row): message for row, message in mistakes.items()}

    def check(value: object) -> Verdict:
        if not isinstance(value, (list, tuple, np.ndarray)) or (isinstance(value, np.ndarray) and value.ndim != 1):
            raise AnswerFormatError('нужен список из четырёх строк-символов, например ["x", "y", "z", "w"], '
                                    f"получено {safe_repr(value)}.")
        items = list(value.tolist() if isinstance(value, np.ndarray) else value)
        if len(items) != 4:
            count = len(items)
            return Verdict(False, f"в строке {count} {plural(count, 'координата', 'координаты', 'координат')}, "
                                  "а нужно 4: две головы по d_h = 2.", hint)
        shown = [_show(_linear_form(item, f"координата {index}")) for index, item in enumerate(items)]
        row = "[" + ", ".join(shown) + "]"
        if tuple(shown) == tuple(expected):
            return Verdict(True, f"{row}.")
        return Verdict(False, f"{row}: {known.get(tuple(shown), 'не совпадает с ожидаемой строкой.')}", hint)

    return check


def _y2_check(value: object) -> Verdict:
    form = _linear_form(value)
    shown = _show(form)
    if form == {"a": 1, "c": 1}:
        return Verdict(True, f"y_2 = {shown}: единичная часть переносит c, добавленная (W_O)_{{0,2}} = 1 — a; "
                             "в одной координате встретились признаки обеих голов.")
    hint = ("В строковом соглашении y = h·W_O, поэтому y_j = Σ_i h_i·(W_O)_{i,j}: выход 2 собирает столбец 2 "
            "матрицы W_O, а в нём единицы в строках 0 и 2.")
    mistakes = {
        "c": "это вклад единичной части (W_O)_{2,2} = 1; добавленная (W_O)_{0,2} = 1 переносит в выход 2 ещё "
             "координату 0 — это a.",
        "a": "учтён только добавленный элемент (W_O)_{0,2} = 1; начните с единичной W_O — её (W_O)_{2,2} = 1 "
             "по-прежнему переносит c (в меняющей группы матрице y_2 = a, но упражнение начинается с единичной).",
    }
    return Verdict(False, f"y_2 = {shown}: {mistakes.get(shown, 'не совпадает с ожидаемым выражением.')}", hint)


_SWAP_HINT = ("W_O из примера меняет местами группы голов: единицы в (0, 2), (1, 3), (2, 0), (3, 1), "
              "а y_j = Σ_i h_i·(W_O)_{i,j}.")
_CONCAT_HINT = "Конкатенация ставит выходы голов рядом: сначала все координаты головы 0, затем головы 1."
_SPEC_5 = ExerciseSpec(
    "30.5",
    "Примените меняющую группы местами матрицу W_O из примера к символическим строкам H^(0) = [a, b] и "
    "H^(1) = [c, d]. Затем возьмите единичную W_O, дополнительно задайте (W_O)_{0,2} = 1 и выведите y_2.",
    '"concat" — строка после конкатенации, "swapped" — после W_O из примера (списки из четырёх строк-символов); '
    '"y2" — выражение для y_2 при новой W_O, например "a + b" (порядок слагаемых, пробелы и регистр не важны).',
    answer_template(_MODULE, 5, ("concat", "swapped", "y2")),
)


def check_exercise_5(answer: object) -> Feedback:
    """Проверить ``{"concat": [...], "swapped": [...], "y2": "..."}``."""
    fields = [
        Field("concat", '"concat"', _row_check("abcd", {
            "cdab": "это уже результат после W_O; конкатенация лишь ставит H^(0) и H^(1) рядом.",
            "acbd": "конкатенация не чередует координаты голов.",
        }, _CONCAT_HINT)),
        Field("swapped", '"swapped"', _row_check("cdab", {
            "abcd": "это конкатенация до W_O; матрица из примера переставляет группы голов.",
            "badc": "переставлены координаты внутри каждой головы, а W_O из примера меняет местами группы целиком.",
            "dcba": "это разворот всех координат, а W_O меняет местами группы, сохраняя порядок внутри группы.",
        }, _SWAP_HINT)),
        Field("y2", '"y2"', _y2_check),
    ]
    return check_answer(_SPEC_5, answer, fields, default_hint=_SWAP_HINT)


def solution_5() -> dict[str, object]:
    return {"concat": ["a", "b", "c", "d"], "swapped": ["c", "d", "a", "b"], "y2": "a + c"}


def describe_exercise_5() -> Text:
    return _SPEC_5.describe()


# ---------------------------------------------------------------------------
# Упражнение 6: меняется только токен 2
# ---------------------------------------------------------------------------

_SPEC_6 = ExerciseSpec(
    "30.6",
    "Измените только токен в позиции 2 (в примере три токена: 0, 1, 2). Какие строки выхода могут "
    "измениться, а какие обязаны остаться побитово прежними?",
    '"unchanged" и "may_change" — множества номеров строк выхода, например {0} или set() '
    "(подходят и списки).",
    answer_template(_MODULE, 6, ("unchanged", "may_change")),
)


def check_exercise_6(answer: object) -> Feedback:
    """Проверить ``{"unchanged": {...}, "may_change": {...}}``."""
    fields = prefix_rows_fields(3, 2, "конкатенация и W_O")
    return check_answer(_SPEC_6, answer, fields, default_hint="Какие строки запросов видят ключ в позиции 2?")


def solution_6() -> dict[str, set[int]]:
    return {"unchanged": {0, 1}, "may_change": {2}}


def describe_exercise_6() -> Text:
    return _SPEC_6.describe()


# ---------------------------------------------------------------------------
# Упражнение 7: где заканчивается разделение групп
# ---------------------------------------------------------------------------

EXERCISE_7_OPTIONS = {
    "ends": {
        "A": "На конкатенации: она склеивает головы и смешивает их признаки.",
        "B": "На выходной проекции W_O: это первый этап, где признаки разных голов могут попасть в одну "
             "выходную координату.",
        "C": "На softmax: вероятности нормализуются по всем головам вместе.",
        "D": "Нигде: головы остаются раздельными и на выходе слоя.",
    },
    "why": {
        "A": "Единичные W_Q, W_K, W_V примера лишь делают группы видимыми; в общем случае каждый столбец "
             "упакованной проекции использует все координаты входной строки, а на головы делятся только "
             "спроецированные выходы.",
        "B": "Плотная проекция изолирует части входа: голова i видит только координаты X с номерами своей группы.",
        "C": "Разделение на головы выполняется до проекций, поэтому каждой голове достаётся своя часть X.",
        "D": "Изоляцию нарушает RoPE: поворот смешивает координаты соседних голов.",
    },
}
_SPEC_7 = ExerciseSpec(
    "30.7",
    "Объясните, где заканчивается разделение групп в примере и почему общая плотная проекция не изолирует "
    "фиксированные части исходного входа.",
    '"ends" и "why" — буквы вариантов (варианты — в ch30.EXERCISE_7_OPTIONS["ends"] и ["why"]).',
    answer_template(_MODULE, 7, ("ends", "why")),
    {f'Варианты для "{part}" (EXERCISE_7_OPTIONS["{part}"]):': choices for part, choices in EXERCISE_7_OPTIONS.items()},
)


def check_exercise_7(answer: object) -> Feedback:
    """Проверить ``{"ends": буква, "why": буква}``."""
    ends = EXERCISE_7_OPTIONS["ends"]
    why = EXERCISE_7_OPTIONS["why"]
    fields = [
        Field("ends", '"ends"', lambda value: choice_verdict(
            value, ends, "B", "верно: до W_O головы не влияют друг на друга, а W_O может смешать их ветви.", {
                "A": "конкатенация только ставит координаты голов рядом: у неё нет параметров, и она ничего "
                     "не смешивает.",
                "C": "softmax идёт по ключам отдельно в каждой голове; между головами вероятности не нормализуются.",
                "D": "W_O может складывать координаты разных голов — в упражнении 5 так получилось y_2 = a + c.",
            })),
        Field("why", '"why"', lambda value: choice_verdict(
            value, why, "A", "верно: отдельные ветви получают лишь спроецированные выходы общей проекции.", {
                "B": "так выглядит только пример с единичными W_Q, W_K, W_V; в обученном слое столбцы головы "
                     "могут использовать все входные признаки.",
                "C": "порядок обратный: сначала полноразмерные проекции, затем разделение их выходов на головы.",
                "D": "RoPE поворачивает пары координат внутри одной головы и ничего не переносит между головами.",
            })),
    ]
    return check_answer(_SPEC_7, answer, fields,
                        default_hint="Проследите порядок: проекция → split_heads → внимание → конкатенация → W_O.")


def solution_7() -> dict[str, str]:
    return {"ends": "B", "why": "A"}


def describe_exercise_7() -> Text:
    return _SPEC_7.describe()


# ---------------------------------------------------------------------------
# Упражнение 8: число параметров при d_model = 128
# ---------------------------------------------------------------------------

_D_8 = 128
_PER_HEAD = ("посчитаны матрицы одной головы [d_model, d_h]; упакованная W_Q = [W_1^Q … W_h^Q] уже содержит "
             "все головы, поэтому число от h не зависит")
_TIMES_HEADS = "каждой голове приписаны полноразмерные матрицы; упакованные матрицы содержат все головы ровно один раз"
_DIAGNOSES_8 = diagnose_counts(
    [
        CountTerm(3 * _D_8**2),
        CountTerm(_D_8**2, ((0, "не учтена выходная матрица W_O"),)),
        CountTerm(0, ((4 * _D_8, "добавлены смещения четырёх проекций, а в этом слое их нет"),
                      (3 * _D_8, "добавлены смещения W_Q, W_K, W_V, а в этом слое их нет"))),
    ],
    {
        **{4 * _D_8**2 // heads: _PER_HEAD for heads in (2, 4, 8, 16, 32, 64)},
        **{4 * _D_8**2 * heads: _TIMES_HEADS for heads in (2, 4, 8, 16, 32, 64)},
        _D_8**2: "посчитана одна матрица d_model × d_model, а их четыре: W_Q, W_K, W_V и W_O",
        4 * _D_8: "посчитаны векторы длины d_model, а каждая из четырёх матриц — d_model × d_model",
    },
)
_SPEC_8 = ExerciseSpec(
    "30.8",
    "Вычислите число параметров целевого слоя без смещений при d_model = 128.",
    "целое число (int); float с целым значением, например 10.0, тоже принимается.",
    answer_template(_MODULE, 8),
)


def check_exercise_8(answer: object) -> Feedback:
    """Проверить число параметров: ``int`` (или ``float`` с целым значением)."""
    hint = ("N = 4·d_model²: четыре матрицы d_model × d_model (W_Q, W_K, W_V, W_O) без смещений; "
            "число голов на это не влияет.")
    field = Field(None, "число параметров", lambda value: count_verdict(
        value, 4 * _D_8**2, _DIAGNOSES_8, "4·128²: W_Q, W_K, W_V и W_O по 128 × 128, смещений нет", hint))
    return check_answer(_SPEC_8, answer, [field], default_hint=hint)


def solution_8() -> int:
    return 4 * _D_8**2


def describe_exercise_8() -> Text:
    return _SPEC_8.describe()


EXERCISES = {
    1: Exercise(check_exercise_1, solution_1, describe_exercise_1),
    2: Exercise(check_exercise_2, solution_2, describe_exercise_2),
    3: Exercise(check_exercise_3, solution_3, describe_exercise_3),
    4: Exercise(check_exercise_4, solution_4, describe_exercise_4),
    5: Exercise(check_exercise_5, solution_5, describe_exercise_5),
    6: Exercise(check_exercise_6, solution_6, describe_exercise_6),
    7: Exercise(check_exercise_7, solution_7, describe_exercise_7),
    8: Exercise(check_exercise_8, solution_8, describe_exercise_8),
}
