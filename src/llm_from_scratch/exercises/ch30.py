"""Проверки упражнений главы 30 (условия — в тетрадке главы).

В тетрадке модуль импортирован как ``ex30``: ``ex30.check_3(answer)``
печатает отзыв. ``EXERCISES[N]`` — объект ``Exercise`` упражнения 30.N.

Упражнения 30.1–30.8 проверяют рассуждение (метки, формы, варианты,
числа); в 30.9–30.11 учащийся пишет функцию на NumPy, и она сравнивается с
библиотекой на случаях, которых нет в тетрадке.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

from ..heads import split_heads as library_split_heads
from ..rope import RotaryEmbedding
from ..tensor import Tensor
from ..tensor import causal_softmax as library_causal_softmax
from .checking import (
    AnswerFormatError,
    Case,
    Exercise,
    Feedback,
    Field,
    Verdict,
    as_int,
    as_int_set,
    as_label,
    as_list,
    as_shape,
    check_answer,
    choice_verdict,
    compare_functions,
    format_shape,
    safe_repr,
)

__all__ = ["EXERCISES", "HEAD_LABELS", "OPTIONS_4", "OPTIONS_7", "STAGES_2",
           *(f"check_{n}" for n in range(1, 12))]


# ---------------------------------------------------------------------------
# 30.1. Какие h допустимы при d_model = 6
# ---------------------------------------------------------------------------

HEAD_LABELS = {
    "ok": "слой собирается: 6 делится на h, и d_h = 6 / h чётная",
    "indivisible": "6 не делится на h без остатка",
    "odd": "6 делится на h, но d_h = 6 / h нечётная",
}
_WIDTH_1, _HEADS_1 = 6, (1, 2, 3, 4, 6)
_HINT_1 = ("Проверяйте по порядку: сначала делится ли 6 на h нацело, и только для целой "
           "d_h = 6 / h — чётна ли она (RoPE поворачивает координаты парами).")


def _head_label(heads: int) -> str:
    if _WIDTH_1 % heads:
        return "indivisible"
    return "ok" if (_WIDTH_1 // heads) % 2 == 0 else "odd"


def _head_count_field(heads: int) -> Field:
    truth = _head_label(heads)

    def check(value: object) -> Verdict:
        label = as_label(value, tuple(HEAD_LABELS))
        if label == truth:
            return Verdict(True, "верно.")
        if label == "ok":
            problem = "слой с таким числом голов не собрать: одно из двух условий нарушено."
        elif truth == "ok":
            problem = "здесь оба условия выполняются; пересчитайте d_h."
        else:
            problem = "нарушено другое условие."
        return Verdict(False, f'"{label}" не подходит: {problem}', _HINT_1)

    return Field(heads, f"h = {heads}", check)


def _evaluate_1(answer: object) -> Feedback:
    return check_answer("30.1", _FORMAT_1, answer, [_head_count_field(h) for h in _HEADS_1],
                        default_hint=_HINT_1)


_FORMAT_1 = 'словарь {h: метка} для h = 1, 2, 3, 4, 6; метки — ключи ex30.HEAD_LABELS.'


def _wrong_1() -> list[object]:
    return [
        {h: "ok" for h in _HEADS_1},                                   # only divisibility
        {1: "ok", 2: "ok", 3: "ok", 4: "indivisible", 6: "ok"},
        {1: "ok", 2: "odd", 3: "ok", 4: "odd", 6: "odd"},               # d_h = 1.5 called odd
        {1: "ok", 2: "indivisible", 3: "ok", 4: "indivisible", 6: "odd"},
        "ok",
    ]


# ---------------------------------------------------------------------------
# 30.2. Формы при B = 2, T = 5, d_model = 12, h = 3
# ---------------------------------------------------------------------------

STAGES_2 = {
    "qkv": "Q (и K, V) сразу после проекции",
    "split": "Q после split_heads",
    "weights_one_head": "веса внимания одной головы для всего батча",
    "weights": "веса внимания всех голов вместе",
    "head_outputs": "выходы голов A·V",
    "merged": "после merge_heads (конкатенации)",
    "output": "выход слоя после W_O",
}
_SHAPES_2 = {
    "qkv": (2, 5, 12), "split": (2, 3, 5, 4), "weights_one_head": (2, 5, 5), "weights": (2, 3, 5, 5),
    "head_outputs": (2, 3, 5, 4), "merged": (2, 5, 12), "output": (2, 5, 12),
}
_MISTAKES_2 = {
    "qkv": {(2, 3, 5, 4): "это форма после разделения, а проекция работает на всей ширине модели.",
            (2, 5, 4): "проекция выдаёт строки полной ширины, а не ширины одной головы."},
    "split": {(2, 5, 3, 4): "это результат reshape без перестановки осей: ось голов идёт перед осью токенов.",
              (2, 3, 5, 12): "каждая голова получает только d_h признаков, а не все d_model.",
              (3, 2, 5, 4): "ось батча остаётся первой."},
    "weights_one_head": {(2, 5, 4): "веса — таблица «запрос × ключ»; ширина головы в неё не входит.",
                         (5, 5): "пропала ось батча: у каждой последовательности своя таблица.",
                         (2, 3, 5, 5): "это веса всех голов сразу."},
    "weights": {(2, 5, 5): "это одна голова; у всех голов есть ещё ось голов.",
                (2, 5, 3, 5): "ось голов стоит перед осью запросов, как после split_heads.",
                (2, 3, 5, 4): "веса — таблица «запрос × ключ»; ширина головы в неё не входит."},
    "head_outputs": {(2, 3, 5, 5): "это веса A; выход головы — смесь значений ширины d_h.",
                     (2, 5, 3, 4): "до merge_heads ось голов стоит перед осью токенов.",
                     (2, 3, 5, 12): "голова смешивает только свои значения ширины d_h."},
    "merged": {(2, 3, 5, 4): "это ещё до объединения голов.",
               (2, 5, 4): "объединение ставит рядом выходы всех голов."},
    "output": {(12, 12): "это форма самой матрицы W_O, а не выхода.",
               (2, 5, 4): "W_O квадратная: выход той же ширины, что и вход слоя."},
}
_HINT_2 = "Пройдите цепочку: проекция → split_heads → softmax → A·V → merge_heads → W_O; d_h = 12 / 3."


def _shape_field(stage: str) -> Field:
    def check(value: object) -> Verdict:
        shape = as_shape(value)
        if shape == _SHAPES_2[stage]:
            return Verdict(True, "верно.")
        known = _MISTAKES_2[stage].get(shape)
        if known:
            return Verdict(False, f"{format_shape(shape)}: {known}", _HINT_2)
        return Verdict(False, f"{format_shape(shape)} — не та форма; сверьте число осей и их порядок.", _HINT_2)

    return Field(stage, f'"{stage}"', check)


def _evaluate_2(answer: object) -> Feedback:
    return check_answer("30.2", _FORMAT_2, answer, [_shape_field(stage) for stage in STAGES_2],
                        default_hint=_HINT_2)


_FORMAT_2 = "словарь {этап: форма}, этапы — ключи ex30.STAGES_2, форма — список целых, например [1, 3, 4]."


def _wrong_2() -> list[object]:
    right = {stage: list(shape) for stage, shape in _SHAPES_2.items()}
    return [
        {**right, "split": [2, 5, 3, 4]},
        {**right, "qkv": [2, 3, 5, 4]},
        {**right, "weights": [2, 3, 5, 4], "weights_one_head": [2, 5, 4]},
        {**right, "output": [12, 12]},
        [2, 5, 12],
    ]


# ---------------------------------------------------------------------------
# 30.3. Треугольник видимости четырёх токенов в обеих головах
# ---------------------------------------------------------------------------

_T_3 = 4
_VISIBLE = tuple(tuple(int(key <= query) for key in range(_T_3)) for query in range(_T_3))
_HINT_3 = ("Строка m — позиция запроса, столбец n — позиция ключа. Какие ключи закрывает каузальная "
           "маска, и зависит ли она от головы?")


def _matrix_3(value: object) -> tuple[tuple[int, ...], ...]:
    rows = as_list(value.tolist() if isinstance(value, np.ndarray) and value.ndim == 2 else value,
                   "матрица")
    if len(rows) != _T_3:
        raise AnswerFormatError(f"нужна матрица 4 × 4 (четыре строки), получено {safe_repr(value)}.")
    cells = [as_list(row, f"строка {q}") for q, row in enumerate(rows)]
    if any(len(row) != _T_3 for row in cells):
        raise AnswerFormatError(f"в каждой строке четыре ячейки, получено {safe_repr(value)}.")
    out = []
    for q, row in enumerate(cells):
        values = []
        for k, cell in enumerate(row):
            number = int(cell) if isinstance(cell, (bool, np.bool_)) else as_int(
                cell, f"ячейка ({q}, {k})", allow_integral_float=True)
            if number not in (0, 1):
                raise AnswerFormatError(f"ячейка ({q}, {k}) = {number}; в матрице видимости только 0 и 1.")
            values.append(number)
        out.append(tuple(values))
    return tuple(out)


def _visibility_check(value: object) -> Verdict:
    matrix = _matrix_3(value)
    if matrix == _VISIBLE:
        return Verdict(True, "верно.")
    if all(matrix[q][q] == 0 for q in range(_T_3)) and any(map(any, matrix)):
        return Verdict(False, "диагональ закрыта: запрос видит и свой собственный ключ.", _HINT_3)
    if any(matrix[q][k] for q in range(_T_3) for k in range(q + 1, _T_3)):
        return Verdict(False, "открыт ключ правее запроса: так запрос заглядывал бы в будущее.", _HINT_3)
    closed = [f"({q}, {k})" for q in range(_T_3) for k in range(q) if not matrix[q][k]]
    return Verdict(False, "закрыты ключи, которые запрос видеть должен: " + ", ".join(closed) + ".", _HINT_3)


def _evaluate_3(answer: object) -> Feedback:
    fields = [Field(head, f"голова {head}", _visibility_check) for head in (0, 1)]
    return check_answer("30.3", _FORMAT_3, answer, fields, default_hint=_HINT_3)


_FORMAT_3 = "словарь {0: матрица, 1: матрица}; матрица 4 × 4 из 0 и 1 (список строк или массив NumPy)."


def _wrong_3() -> list[object]:
    upper = [[int(n >= m) for n in range(_T_3)] for m in range(_T_3)]
    strict = [[int(n < m) for n in range(_T_3)] for m in range(_T_3)]
    ones = [[1] * _T_3] * _T_3
    visible = [list(row) for row in _VISIBLE]
    three = [row[:3] for row in visible[:3]]                       # the example's T = 3
    return [{0: upper, 1: upper}, {0: strict, 1: strict}, {0: visible, 1: ones}, visible,
            {0: three, 1: three}]


# ---------------------------------------------------------------------------
# 30.4. Одно внимание на всю ширину против двух голов (T = 5, h = 2)
# ---------------------------------------------------------------------------

OPTIONS_4 = {
    "A": "Две головы строят одну общую таблицу [5, 5], но каждая голова берёт из неё свою "
         "половину ключей.",
    "B": "Внимание на всю ширину строит одну таблицу [5, 5] на все признаки; у голов две "
         "таблицы, у каждой свой softmax.",
    "C": "У голов одна таблица весов [5, 5] на двоих, а различаются они только значениями, "
         "которые смешивают.",
    "D": "Головы строят две таблицы [5, 5], но softmax у них общий: строку нормируют по "
         "обеим таблицам сразу.",
}
_RIGHT_4 = "одна таблица весов делит все признаки значений, а у каждой головы своя таблица"
_HINT_4 = "Сосчитайте, сколько таблиц [T, T] нормирует softmax в каждом случае и по какой оси."


def _evaluate_4(answer: object) -> Feedback:
    field = Field(None, "вариант", lambda value: choice_verdict(
        value, OPTIONS_4, "B", f"верно: {_RIGHT_4}; совпасть по числам они при этом могут.", {
            "A": "каждая голова видит все разрешённые маской ключи; ключи между головами не делятся.",
            "C": "оценки головы считаются по её собственным запросам и ключам, так что и таблица у неё "
                 "своя.",
            "D": "softmax идёт по ключам отдельно в каждой голове; по головам ничего не нормируется.",
        }, _HINT_4))
    return check_answer("30.4", _FORMAT_4, answer, [field], default_hint=_HINT_4)


_FORMAT_4 = 'буква варианта строкой, например "A" (варианты — ex30.OPTIONS_4).'


# ---------------------------------------------------------------------------
# 30.5. W_O на символических строках
# ---------------------------------------------------------------------------

_SYMBOLS = "abcd"
_TERM = re.compile(r"(?:(\d+)\s*\*\s*)?([abcd])$")
_HINT_5 = ("В записи строкой y = c · W_O, c — строка Concat, выход j собирает столбец j: "
           "y_j = Σ_r c_r · (W_O)_{r,j}. Строка r матрицы говорит, куда уходит координата c_r.")


def _linear_form(value: object) -> dict[str, int]:
    """``"a + c"``, ``"c+a"``, ``"1*a + c"`` -> ``{"a": 1, "c": 1}``."""
    if not isinstance(value, str):
        raise AnswerFormatError(f'нужна строка вроде "a + b", получено {safe_repr(value)}.')
    text = value.lower().translate(str.maketrans({"а": "a", "с": "c", "в": "b", "д": "d"}))
    text = re.sub(r"^\s*y_?\d\s*=", "", text)
    form: dict[str, int] = {}
    for term in text.split("+"):
        match = _TERM.match(term.strip())
        if match is None:
            raise AnswerFormatError(f"не удалось разобрать {safe_repr(value)}: пишите сумму букв a, b, c, d, "
                                    'например "a + b".')
        form[match[2]] = form.get(match[2], 0) + int(match[1] or 1)
    return dict(sorted(form.items()))


def _symbols_row(value: object) -> list[dict[str, int]]:
    items = as_list(value)
    if len(items) != 4:
        raise AnswerFormatError(f"нужно четыре координаты (две головы по d_h = 2), получено {len(items)}.")
    return [_linear_form(item) for item in items]


def _row_field(key: str, expected: str, mistakes: dict[str, str]) -> Field:
    def check(value: object) -> Verdict:
        row = _symbols_row(value)
        if row == [{symbol: 1} for symbol in expected]:
            return Verdict(True, "верно.")
        plain = "".join(next(iter(form)) if len(form) == 1 and min(form.values()) == 1 else "?"
                        for form in row)
        return Verdict(False, mistakes.get(plain, "строка не совпадает с тем, что получается по правилу."),
                       _HINT_5)

    return Field(key, f'"{key}"', check)


def _y2_check(value: object) -> Verdict:
    form = _linear_form(value)
    if form == {"a": 1, "c": 1}:
        return Verdict(True, "верно: в одной координате встретились обе головы.")
    if form == {"c": 1}:
        return Verdict(False, "это вклад одной единичной части; добавленный элемент тоже пишет в y_2.", _HINT_5)
    if form == {"a": 1}:
        return Verdict(False, "учтён только добавленный элемент; единичная часть тоже пишет в y_2.", _HINT_5)
    return Verdict(False, "выражение не совпадает с тем, что даёт столбец 2 новой матрицы.", _HINT_5)


_HEADS_5 = frozenset({0, 3})   # d_model = 8, h = 4: row 1 is head 0's, column 6 is head 3's
_HINT_5B = ("При d_model = 8 и h = 4 у головы i координаты 2i и 2i + 1 строки Concat. Выход y_6 "
            "собирает столбец 6: в каких строках этого столбца стоят единицы?")


def _heads_check(value: object) -> Verdict:
    heads = as_int_set(value, '"heads_y6"')
    if heads == _HEADS_5:
        return Verdict(True, "верно: добавленная единица приводит в y_6 вторую голову.")
    outside = sorted(heads - set(range(4)))
    if outside:
        return Verdict(False, f"голов с номерами {outside} нет: при h = 4 они нумеруются 0…3.", _HINT_5B)
    if heads == {3}:
        return Verdict(False, "учтена только единичная часть; добавленный элемент тоже пишет в y_6.",
                       _HINT_5B)
    if heads == {0}:
        return Verdict(False, "учтён только добавленный элемент; единичная часть тоже пишет в y_6.",
                       _HINT_5B)
    if 1 in heads:
        return Verdict(False, "строка 1 матрицы — это координата 1 строки Concat, а не голова 1.",
                       _HINT_5B)
    return Verdict(False, "набор голов не совпадает с тем, что даёт столбец 6 этой матрицы.", _HINT_5B)


def _evaluate_5(answer: object) -> Feedback:
    fields = [
        _row_field("concat", "abcd", {
            "cdab": "это строка уже после W_O; конкатенация только ставит выходы голов рядом.",
            "acbd": "конкатенация не чередует координаты голов.",
        }),
        _row_field("swapped", "cdab", {
            "abcd": "это строка до W_O, а матрица примера её меняет.",
            "badc": "переставлены координаты внутри голов; проверьте, куда уходит каждая строка W_O.",
            "dcba": "порядок внутри группы головы не меняется.",
        }),
        Field("y2", '"y2"', _y2_check),
        Field("heads_y6", '"heads_y6"', _heads_check),
    ]
    return check_answer("30.5", _FORMAT_5, answer, fields, default_hint=_HINT_5)


_FORMAT_5 = ('словарь: "concat" и "swapped" — списки из четырёх букв, "y2" — строка вроде "a + b", '
             '"heads_y6" — набор номеров голов, например {0}.')


def _wrong_5() -> list[object]:
    right = {"concat": list("abcd"), "swapped": list("cdab"), "y2": "a + c", "heads_y6": {0, 3}}
    return [
        {**right, "swapped": list("abcd")},
        {**right, "concat": list("cdab")},
        {**right, "y2": "c"},
        {**right, "heads_y6": {3}},
        {**right, "heads_y6": {1, 3}},
        {**right, "swapped": list("badc"), "y2": "a"},
    ]


# ---------------------------------------------------------------------------
# 30.6. Из пяти токенов меняется только токен 3
# ---------------------------------------------------------------------------

_T_6, _CHANGED_6 = 5, 3
_HINT_6 = ("Какие запросы видят ключ и значение позиции 3? Голов две, но маска у них одна, "
           "и W_O действует на каждую позицию отдельно.")


def _rows_field(key: str, expected: frozenset[int]) -> Field:
    def check(value: object) -> Verdict:
        rows = as_int_set(value, f'"{key}"')
        if rows == expected:
            return Verdict(True, "верно.")
        outside = sorted(rows - set(range(_T_6)))
        if outside:
            return Verdict(False, f"строк с номерами {outside} нет: токенов пять, 0…4.", _HINT_6)
        if key == "unchanged" and _CHANGED_6 in rows:
            return Verdict(False, "строка 3 читает изменённый токен как свой ключ и своё значение.", _HINT_6)
        if key == "unchanged" and rows & set(range(_CHANGED_6 + 1, _T_6)):
            return Verdict(False, "запросы правее позиции 3 видят её ключ и её значение.", _HINT_6)
        if key == "may_change" and rows & set(range(_CHANGED_6)):
            return Verdict(False, "запросы левее позиции 3 не видят её ключ: маска его закрывает.", _HINT_6)
        return Verdict(False, "в наборе не хватает строк.", _HINT_6)

    return Field(key, f'"{key}"', check)


def _evaluate_6(answer: object) -> Feedback:
    fields = [_rows_field("unchanged", frozenset({0, 1, 2})), _rows_field("may_change", frozenset({3, 4}))]
    return check_answer("30.6", _FORMAT_6, answer, fields, default_hint=_HINT_6)


_FORMAT_6 = '{"unchanged": набор номеров строк, "may_change": набор номеров строк}, например {0} или set().'


def _wrong_6() -> list[object]:
    return [{"unchanged": {0, 1, 2, 4}, "may_change": {3}}, {"unchanged": {0, 1}, "may_change": {2, 3, 4}},
            {"unchanged": set(), "may_change": {0, 1, 2, 3, 4}},
            {"unchanged": {0, 1, 2, 3, 4}, "may_change": set()}, {0, 1, 2}]


# ---------------------------------------------------------------------------
# 30.7. Где головы впервые встречаются и почему проекция не режет вход
# ---------------------------------------------------------------------------

OPTIONS_7 = {
    "ends": {
        "A": "При конкатенации: она кладёт обе головы в одну строку и складывает их признаки.",
        "B": "В softmax: знаменатель каждой строки собирает оценки обеих голов одновременно.",
        "C": "На умножении на W_O: одна выходная координата может собрать вклады обеих голов.",
        "D": "Нигде: каждая координата выхода слоя зависит только от одной из голов.",
    },
    "why": {
        "A": "Каждый столбец W_Q, W_K, W_V читает всю строку входа; делятся уже выходы проекций.",
        "B": "Голова i получает только свои столбцы входа X, и чужие признаки ей недоступны.",
        "C": "Разделение на головы идёт раньше проекций, поэтому каждой достаётся часть X.",
        "D": "RoPE поворачивает пары внутри головы и стирает следы признаков соседней головы.",
    },
}
_HINT_7 = "Порядок этапов: проекция → split_heads → RoPE и softmax в каждой голове → конкатенация → W_O."


def _evaluate_7(answer: object) -> Feedback:
    fields = [
        Field("ends", '"ends"', lambda value: choice_verdict(
            value, OPTIONS_7["ends"], "C", "верно.", {
                "A": "у конкатенации нет параметров: она ничего не складывает, только ставит рядом.",
                "B": "softmax идёт отдельно в каждой голове; её оценки считаются по её Q и K.",
                "D": "при произвольной W_O это не так: вспомните y_2 из упражнения 30.5.",
            }, _HINT_7)),
        Field("why", '"why"', lambda value: choice_verdict(
            value, OPTIONS_7["why"], "A", "верно.", {
                "B": "так выглядит только пример с единичными матрицами; в общем случае это не так.",
                "C": "порядок в слое обратный: сначала проекции, потом разделение.",
                "D": "RoPE поворачивает пары внутри одной головы и в соседнюю не заглядывает.",
            }, _HINT_7)),
    ]
    return check_answer("30.7", _FORMAT_7, answer, fields, default_hint=_HINT_7)


_FORMAT_7 = '{"ends": буква, "why": буква}; варианты — ex30.OPTIONS_7["ends"] и ex30.OPTIONS_7["why"].'


def _wrong_7() -> list[object]:
    return [{"ends": "A", "why": "A"}, {"ends": "C", "why": "C"}, {"ends": "B", "why": "B"},
            {"ends": "D", "why": "D"}, "C"]


# ---------------------------------------------------------------------------
# 30.8. Число параметров при d_model = 128, посчитанное по головам (h = 8)
# ---------------------------------------------------------------------------

_D_8, _H_8 = 128, 8
_DH_8 = _D_8 // _H_8
_COUNT_8 = _H_8 * 3 * _D_8 * _DH_8 + _D_8 ** 2          # = 4 * 128 ** 2
_KNOWN_8 = {
    3 * _D_8 * _DH_8 + _D_8 ** 2: "матрицы W_Q^(i), W_K^(i), W_V^(i) есть у каждой из восьми голов.",
    _H_8 * 3 * _D_8 * _DH_8: "не забыта ли выходная матрица W_O?",
    _H_8 * (3 * _D_8 * _DH_8 + _D_8 ** 2): "W_O в слое одна, а не по одной на голову.",
    _H_8 * 3 * _D_8 ** 2 + _D_8 ** 2: "матрица головы имеет форму [d_model, d_h], а не [d_model, d_model].",
    _H_8 * 4 * _D_8 ** 2: "матрица головы имеет форму [d_model, d_h], а не [d_model, d_model].",
    _COUNT_8 + 4 * _D_8: "в этом слое нет смещений.",
    _COUNT_8 + 3 * _D_8: "в этом слое нет смещений.",
}
_HINT_8 = ("Выпишите формы: у каждой из h голов три матрицы [d_model, d_h], и ещё одна W_O "
           "[d_model, d_model]; смещений нет.")


def _count_check(value: object) -> Verdict:
    number = as_int(value, allow_integral_float=True)
    if number == _COUNT_8:
        return Verdict(True, "верно: 8 · 3 · 128 · 16 + 128² = 4 · 128², столько же, сколько у четырёх "
                             "упакованных матриц.")
    return Verdict(False, f"{number}: " + _KNOWN_8.get(number, "число не сходится."), _HINT_8)


def _evaluate_8(answer: object) -> Feedback:
    return check_answer("30.8", _FORMAT_8, answer, [Field(None, "число параметров", _count_check)],
                        default_hint=_HINT_8)


_FORMAT_8 = "целое число."


# ---------------------------------------------------------------------------
# 30.9–30.11. Код на NumPy против библиотеки
# ---------------------------------------------------------------------------

def _rng_array(seed: int, shape: tuple[int, ...], scale: float = 1.0) -> np.ndarray:
    return scale * np.random.default_rng(seed).standard_normal(shape)


# 30.9: split_heads

def _reference_split(x: np.ndarray, heads: int) -> np.ndarray:
    return library_split_heads(Tensor(x), heads).value


_CASES_9 = (
    Case("B = 1, T = 3, d_model = 4, h = 2", (_rng_array(1, (1, 3, 4)), 2)),
    Case("B = 2, T = 5, d_model = 12, h = 3", (_rng_array(2, (2, 5, 12)), 3)),
    Case("B = 3, T = 2, d_model = 8, h = 4", (_rng_array(3, (3, 2, 8)), 4)),
    Case("B = 1, T = 4, d_model = 6, h = 1", (_rng_array(4, (1, 4, 6)), 1)),
)
_HINT_9 = ("Голове i достаются столбцы i·d_h … (i+1)·d_h − 1 каждой строки. Сверьте с разделом "
           "«Сначала проекция, потом головы», в каком порядке там меняется форма.")


def _solution_9() -> Callable:
    def split_heads(x, heads):
        batch, tokens, width = x.shape
        return x.reshape(batch, tokens, heads, width // heads).transpose(0, 2, 1, 3)

    return split_heads


def _wrong_9() -> list[Callable]:
    def reshape_only(x, heads):
        batch, tokens, width = x.shape
        return x.reshape(batch, heads, tokens, width // heads)

    def no_transpose(x, heads):
        batch, tokens, width = x.shape
        return x.reshape(batch, tokens, heads, width // heads)

    def heads_from_rows(x, heads):
        batch, tokens, width = x.shape
        return x.reshape(batch, tokens, width // heads, heads).transpose(0, 3, 1, 2)

    return [reshape_only, no_transpose, heads_from_rows]


def _evaluate_9(answer: object) -> Feedback:
    return compare_functions("30.9", answer, _reference_split, _CASES_9, name="my_split_heads", hint=_HINT_9)


# 30.10: causal softmax

def _reference_softmax(scores: np.ndarray) -> np.ndarray:
    return library_causal_softmax(Tensor(scores)).value


_CASES_10 = (
    Case("одна таблица 3 × 3", (_rng_array(5, (3, 3)),)),
    Case("[2, 2, 4, 4]: батч и две головы", (_rng_array(6, (2, 2, 4, 4)),)),
    Case("один токен", (np.array([[0.7]]),)),
    Case("оценки около 800", (800.0 + _rng_array(7, (1, 4, 4), scale=10.0),)),
)
_HINT_10 = ("Ключ n закрыт для запроса m, если n > m. Что должно стоять в закрытой ячейке до exp, "
            "чтобы вес вышел ровно 0? И что спасает exp от переполнения при оценках около 800?")


def _solution_10() -> Callable:
    def causal_softmax(scores):
        tokens = scores.shape[-1]
        visible = np.tril(np.ones((tokens, tokens), dtype=bool))
        masked = np.where(visible, scores, -np.inf)
        masked = masked - masked.max(axis=-1, keepdims=True)
        weights = np.exp(masked)
        return weights / weights.sum(axis=-1, keepdims=True)

    return causal_softmax


def _wrong_10() -> list[Callable]:
    def mask_after(scores):
        tokens = scores.shape[-1]
        e = np.exp(scores - scores.max(axis=-1, keepdims=True))
        return np.tril(e / e.sum(axis=-1, keepdims=True)) * np.ones((tokens, tokens))

    def no_max(scores):
        tokens = scores.shape[-1]
        with np.errstate(over="ignore", invalid="ignore"):
            e = np.exp(np.where(np.tril(np.ones((tokens, tokens), bool)), scores, -np.inf))
            return e / e.sum(axis=-1, keepdims=True)

    def upper_triangle(scores):
        tokens = scores.shape[-1]
        masked = np.where(np.triu(np.ones((tokens, tokens), bool)), scores, -np.inf)
        e = np.exp(masked - masked.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    return [mask_after, no_max, upper_triangle]


def _evaluate_10(answer: object) -> Feedback:
    return compare_functions("30.10", answer, _reference_softmax, _CASES_10, name="my_causal_softmax",
                             hint=_HINT_10)


# 30.11: one RoPE rotation

def _reference_rope(x: np.ndarray, offset: int, base: float) -> np.ndarray:
    tokens, width = x.shape
    return RotaryEmbedding(width, offset + tokens, base).rotate(Tensor(x), offset).value


_CASES_11 = (
    Case("d_h = 2, позиции 0–2, основание 100", (_rng_array(8, (3, 2)), 0, 100.0)),
    Case("d_h = 4, позиции 2–5, основание 100", (_rng_array(9, (4, 4)), 2, 100.0)),
    Case("d_h = 6, позиции 1–3, основание 10 000", (_rng_array(10, (3, 6)), 1, 10_000.0)),
    Case("d_h = 8, одна позиция 7, основание 10 000", (_rng_array(11, (1, 8)), 7, 10_000.0)),
)
_HINT_11 = ("Сверьтесь с условием: какие координаты образуют пару k, на какой угол она поворачивается "
            "в позиции p, в какую сторону и с какой позиции начинается счёт.")


def _solution_11() -> Callable:
    def rope_rotate(x, offset, base):
        tokens, width = x.shape
        positions = offset + np.arange(tokens)                     # [T]
        steps = base ** (-np.arange(0, width, 2) / width)           # [d_h / 2]
        angles = positions[:, None] * steps                         # [T, d_h / 2]
        even, odd = x[:, 0::2], x[:, 1::2]
        out = np.empty_like(x)
        out[:, 0::2] = even * np.cos(angles) - odd * np.sin(angles)
        out[:, 1::2] = even * np.sin(angles) + odd * np.cos(angles)
        return out

    return rope_rotate


def _wrong_11() -> list[Callable]:
    right = _solution_11()

    def backwards(x, offset, base):             # turned by minus the angle
        return _turn(x, offset, base, sign=-1)

    def halves(x, offset, base):                # pairs (i, i + d/2), another common layout
        width = x.shape[1]
        order = np.ravel(np.column_stack([np.arange(width // 2), np.arange(width // 2, width)]))
        out = np.empty_like(x)
        out[:, order] = right(x[:, order], offset, base)
        return out

    def no_offset(x, offset, base):
        return right(x, 0, base)

    def wrong_step(x, offset, base):            # base^(-i/d_h) instead of base^(-2i/d_h)
        return _turn(x, offset, base, sign=1, exponent=1.0)

    return [backwards, halves, no_offset, wrong_step]


def _turn(x: np.ndarray, offset: int, base: float, sign: int, exponent: float = 2.0) -> np.ndarray:
    tokens, width = x.shape
    angles = sign * (offset + np.arange(tokens))[:, None] * base ** (
        -exponent * np.arange(width // 2) / width)
    out = np.empty_like(x)
    out[:, 0::2] = x[:, 0::2] * np.cos(angles) - x[:, 1::2] * np.sin(angles)
    out[:, 1::2] = x[:, 0::2] * np.sin(angles) + x[:, 1::2] * np.cos(angles)
    return out


def _evaluate_11(answer: object) -> Feedback:
    return compare_functions("30.11", answer, _reference_rope, _CASES_11, name="my_rope_rotate", hint=_HINT_11)


# ---------------------------------------------------------------------------

EXERCISES: dict[int, Exercise] = {
    1: Exercise("30.1", _FORMAT_1, _evaluate_1, lambda: {h: _head_label(h) for h in _HEADS_1},
                wrong_answers=_wrong_1),
    2: Exercise("30.2", _FORMAT_2, _evaluate_2, lambda: {s: list(shape) for s, shape in _SHAPES_2.items()},
                wrong_answers=_wrong_2),
    3: Exercise("30.3", _FORMAT_3, _evaluate_3, lambda: {h: [list(r) for r in _VISIBLE] for h in (0, 1)},
                wrong_answers=_wrong_3),
    4: Exercise("30.4", _FORMAT_4, _evaluate_4, lambda: "B", secrets=(_RIGHT_4,),
                wrong_answers=lambda: ["A", "C", "D", "a", "с"]),
    5: Exercise("30.5", _FORMAT_5, _evaluate_5,
                lambda: {"concat": list("abcd"), "swapped": list("cdab"), "y2": "a + c", "heads_y6": {0, 3}},
                wrong_answers=_wrong_5),
    6: Exercise("30.6", _FORMAT_6, _evaluate_6, lambda: {"unchanged": {0, 1, 2}, "may_change": {3, 4}},
                wrong_answers=_wrong_6),
    7: Exercise("30.7", _FORMAT_7, _evaluate_7, lambda: {"ends": "C", "why": "A"}, wrong_answers=_wrong_7),
    8: Exercise("30.8", _FORMAT_8, _evaluate_8, lambda: _COUNT_8,
                secrets=("65536", "65 536", "65,536", "4 · 128²"),
                wrong_answers=lambda: [3 * _D_8 * _DH_8 + _D_8 ** 2, _H_8 * 3 * _D_8 * _DH_8,
                                       _H_8 * (3 * _D_8 * _DH_8 + _D_8 ** 2), _H_8 * 4 * _D_8 ** 2,
                                       _COUNT_8 + 4 * _D_8, 12345]),
    9: Exercise("30.9", "функция split_heads(x, heads) на массивах NumPy.", _evaluate_9, _solution_9,
                wrong_answers=_wrong_9),
    10: Exercise("30.10", "функция causal_softmax(scores) на массивах NumPy.", _evaluate_10, _solution_10,
                 wrong_answers=_wrong_10),
    11: Exercise("30.11", "функция rope_rotate(x, offset, base) на массивах NumPy.", _evaluate_11,
                 _solution_11, wrong_answers=_wrong_11),
}

check_1, check_2, check_3, check_4 = (EXERCISES[n].check for n in (1, 2, 3, 4))
check_5, check_6, check_7, check_8 = (EXERCISES[n].check for n in (5, 6, 7, 8))
check_9, check_10, check_11 = (EXERCISES[n].check for n in (9, 10, 11))
