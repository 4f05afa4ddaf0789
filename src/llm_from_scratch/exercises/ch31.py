"""Упражнения главы 31: блок декодера с предварительной нормализацией.

В блокноте: ``from llm_from_scratch.exercises import ch31 as ex31``, затем
``ex31.check_N(answer)``. Условия — в тексте главы; здесь только то, что нужно
для проверки: варианты ответов (``ex31.STEPS``, ``ex31.AXIS_OPTIONS``, …) и
скрытые случаи для упражнений с кодом (31.7–31.9), которых учащийся не видит.
Варианты пронумерованы 1–4 (а не буквами: буквы A, B, … в главе — тензоры и
оси); номер можно дать числом или строкой.

Отзыв на неверный ответ объясняет, что не так, и не называет верный ответ;
для кода он показывает первое расхождение с библиотекой на скрытом случае.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Mapping

import numpy as np

from ..block import DecoderBlock, DecoderBlockConfig
from ..chapters import ch31 as chapter
from ..chapters import depth_lab, lesson31
from ..parameter import Parameter
from ..rmsnorm import RmsNorm
from ..rng import SplitMix64
from ..tensor import Tensor
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
    compare_functions,
    format_shape,
    plural,
    safe_repr,
)

__all__ = [
    "AXIS_OPTIONS", "EXERCISES", "IDENTITY_OPTIONS", "ORDER_FORMULAS", "PART_OPTIONS", "PLACES", "STAGES",
    "STEPS", "X_PRIME_OPTIONS", *(f"check_{n}" for n in range(1, 11)),
]


# ---------------------------------------------------------------------------
# Выбор варианта по номеру
# ---------------------------------------------------------------------------

def _option(value: object, options: Mapping[int, str]) -> int:
    """Номер варианта: ``2``, ``"2"``, ``" 2) "`` читаются одинаково."""
    numbers = ", ".join(str(number) for number in options)
    if isinstance(value, str):
        text = value.strip().strip("()[].'\" ")
        if not text.isdigit():
            raise AnswerFormatError(f"нужен номер варианта ({numbers}), получено {safe_repr(value)}.")
        value = int(text)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise AnswerFormatError(f"нужен номер варианта ({numbers}), получено {safe_repr(value)}.")
    if int(value) not in options:
        raise AnswerFormatError(f"варианта {safe_repr(value)} нет; есть {numbers}.")
    return int(value)


def _choice(value: object, options: Mapping[int, str], correct: int, why_right: str,
            why_wrong: Mapping[int, str], hint: str = "") -> Verdict:
    """Один вариант из ``options``; отзыв на неверный объясняет, чем он плох, и не
    называет верный."""
    number = _option(value, options)
    if number == correct:
        return Verdict(True, f"вариант {number} — {why_right}")
    return Verdict(False, f"вариант {number} не подходит: {why_wrong[number]}", hint)

# ---------------------------------------------------------------------------
# 31.1 Порядок операций
# ---------------------------------------------------------------------------

STEPS = {   # в том же перемешанном порядке, что и в условии
    "residual_1": "первое остаточное сложение",
    "ffn_norm": "RMSNorm перед SwiGLU",
    "attention_norm": "RMSNorm перед вниманием",
    "ffn": "SwiGLU",
    "attention": "каузальное внимание",
    "residual_2": "второе остаточное сложение",
}
_ORDER = ("attention_norm", "attention", "residual_1", "ffn_norm", "ffn", "residual_2")
_NEEDS = {   # шаг -> что ему нужно раньше (без перечисления всего порядка)
    "attention": "внимание читает нормализованную копию потока, а её ещё нет",
    "residual_1": "первое сложение прибавляет результат ветви внимания, а его ещё нет",
    "ffn_norm": "вторая нормализация читает поток после первого сложения, а его ещё нет",
    "ffn": "SwiGLU читает нормализованную копию промежуточного потока, а её ещё нет",
    "residual_2": "второе сложение прибавляет результат SwiGLU, а его ещё нет",
}
_FORMAT_1 = "список из шести ключей ex31.STEPS в порядке вычисления."


def _order_verdict(value: object) -> Verdict:
    steps = [as_label(item, tuple(STEPS), f"шаг {i + 1}") for i, item in enumerate(as_list(value))]
    repeated = [step for step in dict.fromkeys(steps) if steps.count(step) > 1]
    if repeated:
        return Verdict(False, f'шаг "{repeated[0]}" указан несколько раз; каждая операция выполняется '
                              "один раз.", "В блоке шесть разных шагов: ключи ex31.STEPS.")
    missing = [step for step in STEPS if step not in steps]
    if missing:
        return Verdict(False, f"не хватает {len(missing)} {plural(len(missing), 'шага', 'шагов', 'шагов')}.",
                       "Каждый из шести ключей ex31.STEPS входит в ответ ровно один раз.")
    if steps == list(_ORDER):
        return Verdict(True, "нормализация → ветвь → сложение, и так дважды.")
    first = next(i for i, (given, want) in enumerate(zip(steps, _ORDER, strict=True)) if given != want)
    early = steps[first]
    if early in _NEEDS:
        message = f'на месте {first + 1} стоит "{early}", но {_NEEDS[early]}.'
    else:
        message = f'на месте {first + 1} стоит "{early}": этот шаг не может идти так рано.'
    post = steps.index("residual_1") < steps.index("attention_norm")
    hint = ("Такой порядок ставит нормализацию после сложения (Post). Здесь нормализуется вход ветви."
            if post else "У каждой ветви три шага: прочитать поток через свою норму, преобразовать, прибавить.")
    return Verdict(False, message, hint)


def _check_1(answer: object) -> Feedback:
    return check_answer("31.1", _FORMAT_1, answer, [Field(None, "порядок", _order_verdict)],
                        default_hint="Перечитайте формулу блока в начале главы.")


# ---------------------------------------------------------------------------
# 31.2 Формы и ось, которую может изменить сложение
# ---------------------------------------------------------------------------

STAGES = {   # ключи без учёта регистра: "N_a" и "n_a" — одно и то же
    "x": "вход блока", "n_a": "нормализованный вход внимания", "a": "выход ветви внимания",
    "x_prime": "поток после первого сложения", "n_f": "нормализованный вход SwiGLU",
    "f": "выход ветви SwiGLU", "y": "выход блока",
}
AXIS_OPTIONS = {
    1: "ось батча: сложение может слить примеры",
    2: "ось токенов: ветвь вернёт больше позиций",
    3: "ось d_model: ветвь вернёт иную ширину",
    4: "никакую: формы слагаемых обязаны совпасть",
}
_STREAM = (2, 5, 12)
_FORMAT_2 = ('словарь: ключи ex31.STAGES -> форма (список или кортеж трёх целых) '
             'и "axis" -> номер варианта из ex31.AXIS_OPTIONS.')


def _shape_verdict(stage: str) -> Callable[[object], Verdict]:
    def verdict(value: object) -> Verdict:
        shape = as_shape(value)
        if shape == _STREAM:
            return Verdict(True, "форма верна.")
        if len(shape) != 3:
            return Verdict(False, f"у {format_shape(shape)} {len(shape)} "
                                  f"{plural(len(shape), 'ось', 'оси', 'осей')}, а все семь "
                                  "тензоров трёхмерны: [B, T, d_model].", "Поток всегда [B, T, d_model].")
        if stage == "f" and shape[2] == 32:
            return Verdict(False, ("ширина 32 похожа на скрытую ширину SwiGLU; "
                                   "проекция down возвращает из неё ширину потока."),
                           "Выход ветви складывается с потоком поэлементно.")
        if shape[2] != _STREAM[2]:
            return Verdict(False, f"ширина {shape[2]} не совпадает с шириной потока.",
                           "Каждая ветвь возвращает ширину модели.")
        return Verdict(False, f"{format_shape(shape)}: проверьте, какая ось — B, а какая — T.",
                       "Порядок осей: [B, T, d_model].")
    return verdict


_AXIS_WHY = {
    1: "поэлементное сложение не трогает число примеров в батче.",
    2: "сложение идёт позиция к позиции; число позиций у обоих слагаемых одно.",
    3: "если ветвь вернёт другую ширину, сложение просто не определено, а не меняет ось.",
}


def _check_2(answer: object) -> Feedback:
    fields = [Field(stage, f'"{stage}"', _shape_verdict(stage)) for stage in STAGES]
    fields.append(Field("axis", '"axis"', lambda value: _choice(
        value, AXIS_OPTIONS, 4, "в сложении без растяжения осей обе формы совпадают целиком.", _AXIS_WHY,
        "Поэлементное сложение без растяжения осей требует одинаковых форм.")))
    return check_answer("31.2", _FORMAT_2, answer, fields,
                        default_hint="Блок сохраняет форму потока; внутри ветвей она может меняться.")


# ---------------------------------------------------------------------------
# 31.3 Ветвь внимания вернула ноль
# ---------------------------------------------------------------------------

IDENTITY_OPTIONS = {
    1: "да: обе ветви тогда ничего не добавляют",
    2: "нет: ветвь SwiGLU всё ещё добавляет F",
    3: "да: RMSNorm_f вернёт поток без изменений",
    4: "нет: сложение x + 0 удвоит входной поток",
}
X_PRIME_OPTIONS = {1: "x' = 0", 2: "x' = x", 3: "x' = RMSNorm_a(x)", 4: "x' = 2x"}
_FORMAT_3 = ('словарь: "x_prime" -> номер из ex31.X_PRIME_OPTIONS, '
             '"identity" -> номер из ex31.IDENTITY_OPTIONS.')


def _check_3(answer: object) -> Feedback:
    fields = [
        Field("x_prime", '"x_prime"', lambda value: _choice(
            value, X_PRIME_OPTIONS, 2, "остаточный путь переносит x, а ветвь добавила ноль.", {
                1: "ноль вернула ветвь, а не остаточный путь; поток на входе никуда не делся.",
                3: "нормализованная копия идёт только во вход ветви; в поток она не попадает.",
                4: "к потоку прибавляется выход ветви, а он равен нулю.",
            }, "Сложение x' = x + A прибавляет выход ветви к потоку, который в неё вошёл.")),
        Field("identity", '"identity"', lambda value: _choice(
            value, IDENTITY_OPTIONS, 2, "вторая ветвь работает как прежде и прибавляет своё F.", {
                1: "нулём стал выход только одной ветви; вторая работает как прежде.",
                3: "RMSNorm делит строку на её RMS; у x это не обязательно 1, да и ветвь после неё не тождественна.",
                4: "x + 0 = x: прибавление нуля ничего не удваивает.",
            }, "Выпишите y через x, когда A = 0; упражнение 31.8 проверит это кодом.")),
    ]
    return check_answer("31.3", _FORMAT_3, answer, fields, default_hint="Запишите обе ступени блока при A = 0.")


# ---------------------------------------------------------------------------
# 31.4 Меняется только последний токен
# ---------------------------------------------------------------------------

PART_OPTIONS = {
    1: "каузальная маска в ветви внимания",
    2: "RMSNorm, нормирующая строку отдельно",
    3: "проекция down внутри ветви SwiGLU",
    4: "второе сложение, строка к строке",
}
_FORMAT_4 = ('словарь: "rows" -> множество номеров строк выхода, которые обязаны остаться '
             'побитово прежними; "part" -> номер из ex31.PART_OPTIONS.')
_TOKENS_4 = 5


def _rows_verdict(value: object) -> Verdict:
    rows = as_int_set(value, "строки")
    outside = sorted(row for row in rows if not 0 <= row < _TOKENS_4)
    if outside:
        return Verdict(False, f"строки {outside[0]} нет: позиции 0…{_TOKENS_4 - 1}.", "T = 5: строки 0…4.")
    if rows == frozenset(range(_TOKENS_4 - 1)):
        return Verdict(True, "эти строки не видят изменённый токен.")
    if _TOKENS_4 - 1 in rows:
        return Verdict(False, "строка 4 — это сам изменённый токен: её выход обязан измениться.",
                       "Какие строки вообще могут прочитать токен 4?")
    return Verdict(False, f"в ответе {len(rows)} {plural(len(rows), 'строка', 'строки', 'строк')}; "
                          "не все строки, которые не видят токен 4, перечислены.",
                   "Строка t видит только токены с номерами не больше t.")


_PART_WHY = {
    2: "норма работает с каждой строкой отдельно и не проводит границы между токенами.",
    3: "проекция down применяется к каждой строке отдельно; токены здесь не встречаются.",
    4: "сложение поэлементное; оно не решает, какие токены видит строка.",
}


def _check_4(answer: object) -> Feedback:
    fields = [
        Field("rows", '"rows"', _rows_verdict),
        Field("part", '"part"', lambda value: _choice(
            value, PART_OPTIONS, 1, "только здесь строки читают друг друга, и маска закрывает будущее.",
            _PART_WHY, "Найдите единственный этап, где одна строка читает другие.")),
    ]
    return check_answer("31.4", _FORMAT_4, answer, fields, default_hint="Вспомните проверку каузальности в главе.")


# ---------------------------------------------------------------------------
# 31.5 Число параметров при d_model = 12, d_ff = 32
# ---------------------------------------------------------------------------

_D, _D_FF = 12, 32
_TERMS = {"gains": 2 * _D, "attention": 4 * _D * _D, "ffn": 3 * _D * _D_FF}
_COUNT = sum(_TERMS.values())


def _count_verdict(value: object) -> Verdict:
    count = as_int(value, "число параметров", allow_integral_float=True)
    if count == _COUNT:
        return Verdict(True, "два вектора масштабов, четыре матрицы внимания, три матрицы SwiGLU.")
    diagnoses = {
        _COUNT - _TERMS["gains"]: "похоже, векторы масштабов двух RMSNorm не учтены.",
        _COUNT - _TERMS["gains"] // 2: "похоже, учтён только один вектор масштабов, а их два.",
        _COUNT - _D * _D_FF: "похоже, в SwiGLU учтены две матрицы, а их три: gate, up и down.",
        _COUNT - _D * _D: "похоже, у внимания учтены три матрицы; выходная W_O тоже обучается.",
        _COUNT - _TERMS["ffn"]: "похоже, сеть SwiGLU не учтена вовсе.",
        _COUNT - _TERMS["attention"]: "похоже, матрицы внимания не учтены.",
    }
    message = diagnoses.get(count, f"{count} не сходится с подсчётом по тензорам блока.")
    return Verdict(False, message, "Сложите размеры всех девяти тензоров блока.")


def _check_5(answer: object) -> Feedback:
    return check_answer("31.5", "целое число.", answer, [Field(None, "N", _count_verdict)],
                        default_hint="Сложите размеры всех девяти тензоров блока.")


# ---------------------------------------------------------------------------
# 31.6 Первый остаточный этап в порядке Post
# ---------------------------------------------------------------------------

ORDER_FORMULAS = {
    1: "x' = Norm(x + MHA(x))",
    2: "x' = x + MHA(Norm(x))",
    3: "x' = Norm(x) + MHA(x)",
    4: "x' = x + Norm(MHA(x))",
}
PLACES = {
    1: "на входе внимания: Norm(x) против x",
    2: "только после сложения, в самом x'",
    3: "только во второй ветви, внутри SwiGLU",
    4: "нигде: при единичных масштабах всё равно",
}
_FORMAT_6 = ('словарь: "post" -> номер из ex31.ORDER_FORMULAS; "first" и "example" -> '
             "номера из ex31.PLACES.")
_FORMULA_WHY = {
    2: "так выглядит порядок Pre, где норма стоит на входе ветви.",
    3: "здесь норма срезает масштаб у самого потока ещё до сложения; в Post она идёт после суммы.",
    4: "нормировать выход ветви — ни Pre, ни Post: в Post нормируется сумма.",
}
_PLACE_WHY_GENERAL = {
    2: "различие возможно ещё до суммы, ведь внимание в двух порядках может читать разные строки.",
    3: "первая ступень кончается сложением; SwiGLU сюда не входит.",
    4: "единичные масштабы не делают RMS каждой строки равным 1.",
}
_PLACE_WHY_EXAMPLE = {
    1: "в примере RMS каждой строки X равно 1, так что Norm(x) = x и внимание читает одно и то же.",
    3: "первая ступень кончается сложением; SwiGLU сюда не входит.",
    4: "в примере порядки дают разные x'; сравните строки в главе.",
}


def _check_6(answer: object) -> Feedback:
    fields = [
        Field("post", '"post"', lambda value: _choice(
            value, ORDER_FORMULAS, 1, "в Post норма стоит на потоке после суммы.", _FORMULA_WHY,
            "В Post норма следует за сложением.")),
        Field("first", '"first"', lambda value: _choice(
            value, PLACES, 1, "Pre подаёт во внимание Norm(x), Post — сам x.", _PLACE_WHY_GENERAL,
            "Сравните, что читает внимание в двух формулах.")),
        Field("example", '"example"', lambda value: _choice(
            value, PLACES, 2, "в примере Norm(x) = x, и разница видна только после сложения.",
            _PLACE_WHY_EXAMPLE, "Вспомните, чему равно RMS строк X в примере главы.")),
    ]
    return check_answer("31.6", _FORMAT_6, answer, fields, default_hint="Сравните две формулы ступени по шагам.")


# ---------------------------------------------------------------------------
# Упражнения с кодом: скрытые случаи
# ---------------------------------------------------------------------------

def _random_block(seed: int, width: int = 8, heads: int = 2, ffn_width: int = 12, tokens: int = 4,
                  gains: bool = False) -> DecoderBlock:
    config = DecoderBlockConfig(model_width=width, heads=heads, feed_forward_width=ffn_width,
                                max_positions=tokens)
    block = DecoderBlock.new("hidden", config, SplitMix64(seed))
    if not gains:
        return block
    draws = np.linspace(0.5, 1.5, width)          # g_a and g_f different and not 1
    return DecoderBlock.from_parts(
        RmsNorm.from_parameters(Parameter("hidden.attention_norm.gain", draws), epsilon=1e-5),
        block.attention,
        RmsNorm.from_parameters(Parameter("hidden.ffn_norm.gain", draws[::-1].copy()), epsilon=1e-5),
        block.feed_forward)


def _random_input(seed: int, shape: tuple[int, ...], scale: float = 1.0) -> np.ndarray:
    x = depth_lab.lab_data(shape[2], batch=shape[0], tokens=shape[1], seed=seed)[0]
    return scale * x


def _block_cases() -> list[Case]:
    return [
        Case("блок главы, строки входа с RMS 2, 0.5 и 1.5", (chapter.build_block(), lesson31.scaled_input())),
        Case("случайный блок, d_model = 8, B = 2, T = 4", (_random_block(3), _random_input(3, (2, 4, 8)))),
        Case("масштабы g_a и g_f разные и не равны 1",
             (_random_block(4, gains=True), _random_input(4, (1, 4, 8), scale=2.5))),
    ]


def _array_function(wiring: Callable[[depth_lab.Parts, Tensor], Tensor]):
    def function(block: DecoderBlock, x: np.ndarray) -> np.ndarray:
        return wiring(depth_lab.parts_of(block), Tensor(x)).value
    return function


def _without_attention(p: depth_lab.Parts, x: Tensor) -> Tensor:
    return x + p.feed_forward(p.feed_forward_norm(x))


def _swapped_norms(p: depth_lab.Parts, x: Tensor) -> Tensor:
    return depth_lab.post_norm(dataclasses.replace(p, attention_norm=p.feed_forward_norm,
                                                   feed_forward_norm=p.attention_norm), x)


def _unnormalised_ffn(p: depth_lab.Parts, x: Tensor) -> Tensor:
    return x + p.feed_forward(x)


def _code_exercise(number: str, name: str, reference: Callable, cases: Callable[[], list[Case]],
                   hint: str, known: Mapping[str, Callable]) -> Callable[[object], Feedback]:
    """``compare_functions`` plus a hint for mistakes we recognise on the failing case."""
    def evaluate(answer: object) -> Feedback:
        hidden = cases()
        feedback = compare_functions(number, answer, reference, hidden, name=name, hint=hint)
        if feedback.correct or feedback.placeholder:
            return feedback
        failing = cases()[len(feedback.items) - 1].arguments    # fresh copies
        try:
            got = np.asarray(answer(*failing), dtype=np.float64)
        except Exception:
            return feedback
        for message, mistake in known.items():
            expected = np.asarray(mistake(*failing), dtype=np.float64)
            if got.shape == expected.shape and np.allclose(got, expected, rtol=0, atol=1e-9):
                return dataclasses.replace(feedback, hint=message)
        return feedback
    return evaluate


# ---------------------------------------------------------------------------
# 31.7 Блок Post из деталей блока
# ---------------------------------------------------------------------------

_post_reference = _array_function(depth_lab.post_norm)
_POST_KNOWN = {
    "Ваша функция считает порядок Pre: норма на входе ветви. В Post норма стоит после сложения.":
        _array_function(depth_lab.pre_norm),
    "Нормы перепутаны: сумму после внимания нормирует block.attention_norm, вторую — "
    "block.feed_forward_norm.": _array_function(_swapped_norms),
}


def _check_7(answer: object) -> Feedback:
    return _code_exercise("31.7", "post_norm_block", _post_reference, _block_cases,
                          "Соберите две ступени: прибавьте выход ветви к потоку, затем пропустите сумму "
                          "через норму этой ветви; forward внимания и SwiGLU возвращают записи с полем "
                          ".output.", _POST_KNOWN)(answer)


def _post_wrong_answers() -> list[Callable]:
    return [*_POST_KNOWN.values(), lambda block, x: x]


# ---------------------------------------------------------------------------
# 31.8 Блок, у которого ветвь внимания молчит
# ---------------------------------------------------------------------------

_silent_reference = _array_function(_without_attention)
_SILENT_KNOWN = {
    "Функция вернула вход без изменений: вторая ветвь тоже что-то прибавляет.": lambda block, x: x,
    "SwiGLU здесь читает поток без нормы; у второй ветви есть своя RMSNorm.": _array_function(_unnormalised_ffn),
    "Это обычный выход блока: ветвь внимания здесь должна прибавлять ноль.":
        _array_function(depth_lab.pre_norm),
}


def _check_8(answer: object) -> Feedback:
    return _code_exercise("31.8", "block_without_attention", _silent_reference, _block_cases,
                          "Ветвь внимания здесь прибавляет ноль; что тогда входит во вторую ступень?",
                          _SILENT_KNOWN)(answer)


# ---------------------------------------------------------------------------
# 31.9 Параметры блока, посчитанные программой
# ---------------------------------------------------------------------------

def _count_reference(d_model: int, heads: int, d_ff: int) -> int:
    return 2 * d_model + 4 * d_model * d_model + 3 * d_model * d_ff


def _count_cases() -> list[Case]:
    return [Case("d_model = 4, h = 2, d_ff = 4", (4, 2, 4)), Case("d_model = 8, h = 2, d_ff = 20", (8, 2, 20)),
            Case("d_model = 6, h = 3, d_ff = 10", (6, 3, 10)), Case("d_model = 16, h = 4, d_ff = 40", (16, 4, 40))]


_COUNT_KNOWN = {
    "Не учтены векторы масштабов двух RMSNorm: они тоже параметры блока.":
        lambda d, h, f: 4 * d * d + 3 * d * f,
    "В SwiGLU три матрицы, а в подсчёте две.": lambda d, h, f: 2 * d + 4 * d * d + 2 * d * f,
    "Похоже, считаются тензоры, а не числа в них.": lambda d, h, f: 9,
}


def _check_9(answer: object) -> Feedback:
    return _code_exercise("31.9", "count_parameters", _count_reference, _count_cases,
                          "Постройте блок через DecoderBlock.new и сложите размеры (.size) значений "
                          "его параметров.", _COUNT_KNOWN)(answer)


def _count_solution(d_model: int, heads: int, d_ff: int) -> int:
    config = DecoderBlockConfig(model_width=d_model, heads=heads, feed_forward_width=d_ff, max_positions=1)
    block = DecoderBlock.new("count", config, SplitMix64(0))
    return sum(p.value.size for p in block.parameters())


# ---------------------------------------------------------------------------
# 31.10 Лаборатория глубины: градиент верхнего блока Pre и закон 1/√L
# ---------------------------------------------------------------------------

_DEPTHS_10 = (4, 16)
_SCALE_10 = math.sqrt(3.0)
_FORMAT_10 = ('словарь: "predicted" -> отношение g(16)/g(4) по закону 1/√L, "measured" -> '
              "то же отношение, измеренное лабораторией; оба — числа.")


@functools.cache
def _lab_ratios() -> dict[str, float]:
    """``g(16)/g(4)`` as the lab measures it: ``"pre"`` is the answer (W_down of
    the top block, Pre, scale √3); the others are the slips we recognise."""
    def ratio(variant: str = "pre", tensor: str | None = "ffn.down.weight",
              scale: float = _SCALE_10) -> float:
        tops = depth_lab.top_block_gradient(_DEPTHS_10, tensor=tensor, variants=(variant,),
                                            weight_scale=scale)[variant]
        return float(tops[1] / tops[0])
    return {"pre": ratio(), "block": ratio(tensor=None), "post": ratio("post"),
            "scale_1": ratio(scale=1.0)}


def _as_number(value: object, what: str) -> float:
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, str):
        raise AnswerFormatError(f"{what}: {safe_repr(value)} — строка; нужно число без кавычек.")
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise AnswerFormatError(f"{what}: нужно число, получено {safe_repr(value)}.")
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if not math.isfinite(number):
        raise AnswerFormatError(f"{what}: {safe_repr(value)} — не конечное число.")
    return number


def _predicted_verdict(value: object) -> Verdict:
    predicted = _as_number(value, "predicted")
    if abs(predicted - 0.5) <= 0.01:
        return Verdict(True, "по закону 1/√L глубина выросла вчетверо, градиент падает вдвое.")
    if predicted > 1:
        message = "отношение больше 1 значит, что градиент растёт с глубиной, а закон говорит об убывании."
    elif abs(predicted - 0.25) <= 0.01:
        message = "так падала бы величина по закону 1/L; у Xiong и соавторов — 1/√L."
    else:
        message = f"{predicted:g} не следует из закона 1/√L."
    return Verdict(False, message, "Подставьте L = 16 и L = 4 в 1/√L и поделите одно на другое.")


def _measured_verdict(value: object) -> Verdict:
    measured = _as_number(value, "measured")
    ratios = _lab_ratios()
    if abs(measured - ratios["pre"]) <= 0.002:
        return Verdict(True, "градиент падает чуть медленнее закона: он следует за 1/RMS потока, "
                             "а квадрат RMS растёт примерно как 1 + L, а не как L.")
    slips = {
        "block": "похоже, это градиент всего верхнего блока; здесь нужна одна матрица W_down.",
        "post": "похоже, это отношение для Post; здесь нужна схема Pre.",
        "scale_1": "похоже, это масштаб весов 1; здесь нужен масштаб √3.",
    }
    for key, message in slips.items():
        if abs(measured - ratios[key]) <= 0.002:
            return Verdict(False, message, "Передайте в depth_lab.top_block_gradient глубины [4, 16], "
                                           'tensor="ffn.down.weight" и weight_scale=3 ** 0.5.')
    if abs(measured * ratios["pre"] - 1.0) <= 0.01:
        return Verdict(False, "похоже, это g(4)/g(16); нужно g(16)/g(4).", "Поделите градиент при L = 16 "
                                                                           "на градиент при L = 4.")
    return Verdict(False, f"{measured:g} не сходится с измерением лаборатории.",
                   "Передайте в depth_lab.top_block_gradient глубины [4, 16], tensor=\"ffn.down.weight\" "
                   "и weight_scale=3 ** 0.5, возьмите схему Pre.")


def _check_10(answer: object) -> Feedback:
    fields = [Field("predicted", '"predicted"', _predicted_verdict),
              Field("measured", '"measured"', _measured_verdict)]
    return check_answer("31.10", _FORMAT_10, answer, fields,
                        default_hint="Сначала предсказание по формуле, затем измерение в лаборатории.")


def _lab_wrong_answers() -> list[dict[str, float]]:
    ratios = _lab_ratios()
    return [{"predicted": 0.25, "measured": ratios["pre"]}, {"predicted": 2.0, "measured": 1 / ratios["pre"]},
            *({"predicted": 0.5, "measured": ratios[key]} for key in ("block", "post", "scale_1"))]


# ---------------------------------------------------------------------------
# Реестр
# ---------------------------------------------------------------------------

EXERCISES: dict[int, Exercise] = {
    1: Exercise("31.1", _FORMAT_1, _check_1, lambda: list(_ORDER), secrets=(", ".join(_ORDER),),
                wrong_answers=lambda: [
                    ["attention", "attention_norm", "residual_1", "ffn_norm", "ffn", "residual_2"],
                    ["attention", "residual_1", "attention_norm", "ffn", "residual_2", "ffn_norm"],
                    ["attention_norm", "attention", "residual_1", "ffn", "residual_2"],
                    ["attention_norm", "attention", "attention", "ffn_norm", "ffn", "residual_2"]]),
    2: Exercise("31.2", _FORMAT_2, _check_2, lambda: {**{s: [2, 5, 12] for s in STAGES}, "axis": 4},
                wrong_answers=lambda: [
                    {**{s: [2, 5, 12] for s in STAGES}, "axis": 3},
                    {**{s: [2, 5, 12] for s in STAGES}, "f": [2, 5, 32], "axis": 4},
                    {**{s: [5, 2, 12] for s in STAGES}, "axis": "4"},
                    {**{s: [2, 5, 12] for s in STAGES}, "axis": "D"}]),
    3: Exercise("31.3", _FORMAT_3, _check_3, lambda: {"x_prime": 2, "identity": 2},
                wrong_answers=lambda: [{"x_prime": 2, "identity": 1}, {"x_prime": 1, "identity": 2},
                                       {"x_prime": 3, "identity": 3}, {"x_prime": "B", "identity": 2}]),
    4: Exercise("31.4", _FORMAT_4, _check_4, lambda: {"rows": {0, 1, 2, 3}, "part": 1},
                wrong_answers=lambda: [{"rows": {0, 1, 2, 3, 4}, "part": 1}, {"rows": {0, 1, 2}, "part": 1},
                                       {"rows": {0, 1, 2, 3}, "part": 2}]),
    5: Exercise("31.5", "целое число.", _check_5, lambda: _COUNT, secrets=(str(_COUNT),),
                wrong_answers=lambda: [_COUNT - 24, _COUNT - 12, _COUNT - 384, 1608, 9]),
    6: Exercise("31.6", _FORMAT_6, _check_6, lambda: {"post": 1, "first": 1, "example": 2},
                wrong_answers=lambda: [{"post": 2, "first": 1, "example": 2},
                                       {"post": 1, "first": 2, "example": 2},
                                       {"post": 1, "first": 1, "example": 1}]),
    7: Exercise("31.7", "функция post_norm_block(block, x) -> массив NumPy той же формы, что x.", _check_7,
                lambda: _post_reference, wrong_answers=_post_wrong_answers),
    8: Exercise("31.8", "функция block_without_attention(block, x) -> массив NumPy той же формы, что x.",
                _check_8, lambda: _silent_reference, wrong_answers=lambda: list(_SILENT_KNOWN.values())),
    9: Exercise("31.9", "функция count_parameters(d_model, heads, d_ff) -> целое число.", _check_9,
                lambda: _count_solution, wrong_answers=lambda: list(_COUNT_KNOWN.values())),
    10: Exercise("31.10", _FORMAT_10, _check_10, lambda: {"predicted": 0.5, "measured": _lab_ratios()["pre"]},
                 wrong_answers=_lab_wrong_answers),
}

check_1 = EXERCISES[1].check
check_2 = EXERCISES[2].check
check_3 = EXERCISES[3].check
check_4 = EXERCISES[4].check
check_5 = EXERCISES[5].check
check_6 = EXERCISES[6].check
check_7 = EXERCISES[7].check
check_8 = EXERCISES[8].check
check_9 = EXERCISES[9].check
check_10 = EXERCISES[10].check
