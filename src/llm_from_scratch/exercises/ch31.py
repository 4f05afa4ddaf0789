"""Упражнения главы 31: блок декодера с предварительной нормализацией.

В блокноте: ``from llm_from_scratch.exercises import ch31 as ex31``, затем
``ex31.check_N(answer)``. Условия — в тексте главы; здесь только то, что нужно
для проверки: варианты ответов (``ex31.STEPS``, ``ex31.AXIS_OPTIONS``, …) и
скрытые случаи для упражнений с кодом (31.7–31.9), которых учащийся не видит.

Отзыв на неверный ответ объясняет, что не так, и не называет верный ответ;
для кода он показывает первое расхождение с библиотекой на скрытом случае.
"""

from __future__ import annotations

import dataclasses
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
    plural,
)

__all__ = [
    "AXIS_OPTIONS", "EXERCISES", "IDENTITY_OPTIONS", "ORDER_FORMULAS", "PART_OPTIONS", "PLACES", "STAGES",
    "STEPS", "X_PRIME_OPTIONS", *(f"check_{n}" for n in range(1, 10)),
]

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
    "A": "ось батча B: сложение может слить примеры",
    "B": "ось токенов T: ветвь вернёт больше позиций",
    "C": "ось признаков: ветвь вернёт иную ширину",
    "D": "никакую: формы слагаемых обязаны совпасть",
}
_STREAM = (2, 5, 12)
_FORMAT_2 = ('словарь: ключи ex31.STAGES -> форма (список или кортеж трёх целых) '
             'и "axis" -> буква варианта ex31.AXIS_OPTIONS.')


def _shape_verdict(stage: str) -> Callable[[object], Verdict]:
    def verdict(value: object) -> Verdict:
        shape = as_shape(value)
        if shape == _STREAM:
            return Verdict(True, "форма верна.")
        if len(shape) != 3:
            return Verdict(False, f"у {format_shape(shape)} {len(shape)} "
                                  f"{plural(len(shape), 'ось', 'оси', 'осей')}, а тензоры потока "
                                  "трёхмерны: [B, T, d_model].", "Поток всегда [B, T, d_model].")
        if stage == "f" and shape[2] == 32:
            return Verdict(False, "32 — скрытая ширина внутри SwiGLU; проекция down возвращает другую.",
                           "Выход ветви складывается с потоком поэлементно.")
        if shape[2] != _STREAM[2]:
            return Verdict(False, f"ширина {shape[2]} не совпадает с шириной потока.",
                           "Каждая ветвь возвращает ширину модели.")
        return Verdict(False, f"{format_shape(shape)}: проверьте, какая ось — B, а какая — T.",
                       "Порядок осей: [B, T, d_model].")
    return verdict


_AXIS_WHY = {
    "A": "поэлементное сложение не трогает число примеров в батче.",
    "B": "сложение идёт позиция к позиции; число позиций у обоих слагаемых одно.",
    "C": "если ветвь вернёт другую ширину, сложение просто не определено, а не меняет ось.",
}


def _check_2(answer: object) -> Feedback:
    fields = [Field(stage, f'"{stage}"', _shape_verdict(stage)) for stage in STAGES]
    fields.append(Field("axis", '"axis"', lambda value: choice_verdict(
        value, AXIS_OPTIONS, "D", "в сложении без растяжения осей обе формы совпадают целиком.", _AXIS_WHY,
        "Поэлементное сложение без растяжения осей требует одинаковых форм.")))
    return check_answer("31.2", _FORMAT_2, answer, fields,
                        default_hint="Блок сохраняет форму потока; внутри ветвей она может меняться.")


# ---------------------------------------------------------------------------
# 31.3 Ветвь внимания вернула ноль
# ---------------------------------------------------------------------------

IDENTITY_OPTIONS = {
    "A": "да: обе ветви тогда ничего не добавляют",
    "B": "нет: ветвь SwiGLU всё ещё добавляет F",
    "C": "да: RMSNorm_f вернёт поток без изменений",
    "D": "нет: сложение x + 0 удвоит входной поток",
}
X_PRIME_OPTIONS = {"A": "x' = 0", "B": "x' = x", "C": "x' = RMSNorm_a(x)", "D": "x' = 2x"}
_FORMAT_3 = ('словарь: "x_prime" -> буква из ex31.X_PRIME_OPTIONS, '
             '"identity" -> буква из ex31.IDENTITY_OPTIONS.')


def _check_3(answer: object) -> Feedback:
    fields = [
        Field("x_prime", '"x_prime"', lambda value: choice_verdict(
            value, X_PRIME_OPTIONS, "B", "остаточный путь переносит x, а ветвь добавила ноль.", {
                "A": "ноль вернула ветвь, а не остаточный путь; поток на входе никуда не делся.",
                "C": "нормализованная копия идёт только во вход ветви; в поток она не попадает.",
                "D": "к потоку прибавляется выход ветви, а он равен нулю.",
            }, "Сложение x' = x + A прибавляет выход ветви к потоку, который в неё вошёл.")),
        Field("identity", '"identity"', lambda value: choice_verdict(
            value, IDENTITY_OPTIONS, "B", "вторая ветвь не зависит от первой и прибавляет своё.", {
                "A": "нулём стал выход только одной ветви; вторая работает как прежде.",
                "C": "RMSNorm делит строку на её RMS; у x это не обязательно 1, да и ветвь после неё не тождественна.",
                "D": "x + 0 = x: прибавление нуля ничего не удваивает.",
            }, "Выпишите y через x, когда A = 0; упражнение 31.8 проверит это кодом.")),
    ]
    return check_answer("31.3", _FORMAT_3, answer, fields, default_hint="Запишите обе ступени блока при A = 0.")


# ---------------------------------------------------------------------------
# 31.4 Меняется только последний токен
# ---------------------------------------------------------------------------

PART_OPTIONS = {
    "A": "каузальная маска в ветви внимания",
    "B": "RMSNorm, нормирующая строку отдельно",
    "C": "проекция down внутри ветви SwiGLU",
    "D": "второе сложение, строка к строке",
}
_FORMAT_4 = ('словарь: "rows" -> множество номеров строк выхода, которые обязаны остаться '
             'побитово прежними; "part" -> буква из ex31.PART_OPTIONS.')
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
    "B": "норма работает с каждой строкой отдельно и не проводит границы между токенами.",
    "C": "проекция down применяется к каждой строке отдельно; токены здесь не встречаются.",
    "D": "сложение поэлементное; оно не решает, какие токены видит строка.",
}


def _check_4(answer: object) -> Feedback:
    fields = [
        Field("rows", '"rows"', _rows_verdict),
        Field("part", '"part"', lambda value: choice_verdict(
            value, PART_OPTIONS, "A", "только здесь строки читают друг друга, и маска закрывает будущее.",
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
    "A": "x' = Norm(x + MHA(x))",
    "B": "x' = x + MHA(Norm(x))",
    "C": "x' = Norm(x) + MHA(x)",
    "D": "x' = x + Norm(MHA(x))",
}
PLACES = {
    "A": "на входе внимания: Norm(x) против x",
    "B": "только после сложения, в самом x'",
    "C": "только во второй ветви, внутри SwiGLU",
    "D": "нигде: при единичных масштабах всё равно",
}
_FORMAT_6 = ('словарь: "post" -> буква из ex31.ORDER_FORMULAS; "first" и "example" -> '
             "буквы из ex31.PLACES.")
_FORMULA_WHY = {
    "B": "так выглядит порядок Pre, где норма стоит на входе ветви.",
    "C": "здесь норма срезает масштаб у самого потока ещё до сложения; в Post она идёт после суммы.",
    "D": "нормировать выход ветви — ни Pre, ни Post: в Post нормируется сумма.",
}
_PLACE_WHY_GENERAL = {
    "B": "различие возможно ещё до суммы, ведь внимание в двух порядках может читать разные строки.",
    "C": "первый этап кончается сложением; SwiGLU сюда не входит.",
    "D": "единичные масштабы не делают RMS каждой строки равным 1.",
}
_PLACE_WHY_EXAMPLE = {
    "A": "в примере RMS каждой строки X равно 1, так что Norm(x) = x и внимание читает одно и то же.",
    "C": "первый этап кончается сложением; SwiGLU сюда не входит.",
    "D": "в примере порядки дают разные x'; сравните строки в главе.",
}


def _check_6(answer: object) -> Feedback:
    fields = [
        Field("post", '"post"', lambda value: choice_verdict(
            value, ORDER_FORMULAS, "A", "в Post норма стоит на потоке после суммы.", _FORMULA_WHY,
            "В Post норма следует за сложением.")),
        Field("first", '"first"', lambda value: choice_verdict(
            value, PLACES, "A", "Pre подаёт во внимание Norm(x), Post — сам x.", _PLACE_WHY_GENERAL,
            "Сравните, что читает внимание в двух формулах.")),
        Field("example", '"example"', lambda value: choice_verdict(
            value, PLACES, "B", "в примере Norm(x) = x, и разница видна только после сложения.",
            _PLACE_WHY_EXAMPLE, "Вспомните, чему равно RMS строк X в примере главы.")),
    ]
    return check_answer("31.6", _FORMAT_6, answer, fields, default_hint="Сравните две формулы этапа по шагам.")


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
        if feedback.correct:
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
# Реестр
# ---------------------------------------------------------------------------

EXERCISES: dict[int, Exercise] = {
    1: Exercise("31.1", _FORMAT_1, _check_1, lambda: list(_ORDER), secrets=(", ".join(_ORDER),),
                wrong_answers=lambda: [
                    ["attention", "attention_norm", "residual_1", "ffn_norm", "ffn", "residual_2"],
                    ["attention", "residual_1", "attention_norm", "ffn", "residual_2", "ffn_norm"],
                    ["attention_norm", "attention", "residual_1", "ffn", "residual_2"],
                    ["attention_norm", "attention", "attention", "ffn_norm", "ffn", "residual_2"]]),
    2: Exercise("31.2", _FORMAT_2, _check_2, lambda: {**{s: [2, 5, 12] for s in STAGES}, "axis": "D"},
                wrong_answers=lambda: [
                    {**{s: [2, 5, 12] for s in STAGES}, "axis": "C"},
                    {**{s: [2, 5, 12] for s in STAGES}, "f": [2, 5, 32], "axis": "D"},
                    {**{s: [5, 2, 12] for s in STAGES}, "axis": "D"}]),
    3: Exercise("31.3", _FORMAT_3, _check_3, lambda: {"x_prime": "B", "identity": "B"},
                wrong_answers=lambda: [{"x_prime": "B", "identity": "A"}, {"x_prime": "A", "identity": "B"},
                                       {"x_prime": "C", "identity": "C"}]),
    4: Exercise("31.4", _FORMAT_4, _check_4, lambda: {"rows": {0, 1, 2, 3}, "part": "A"},
                wrong_answers=lambda: [{"rows": {0, 1, 2, 3, 4}, "part": "A"}, {"rows": {0, 1, 2}, "part": "A"},
                                       {"rows": {0, 1, 2, 3}, "part": "B"}]),
    5: Exercise("31.5", "целое число.", _check_5, lambda: _COUNT, secrets=(str(_COUNT),),
                wrong_answers=lambda: [_COUNT - 24, _COUNT - 12, _COUNT - 384, 1608, 9]),
    6: Exercise("31.6", _FORMAT_6, _check_6, lambda: {"post": "A", "first": "A", "example": "B"},
                wrong_answers=lambda: [{"post": "B", "first": "A", "example": "B"},
                                       {"post": "A", "first": "B", "example": "B"},
                                       {"post": "A", "first": "A", "example": "A"}]),
    7: Exercise("31.7", "функция post_norm_block(block, x) -> массив NumPy той же формы, что x.", _check_7,
                lambda: _post_reference, wrong_answers=_post_wrong_answers),
    8: Exercise("31.8", "функция block_without_attention(block, x) -> массив NumPy той же формы, что x.",
                _check_8, lambda: _silent_reference, wrong_answers=lambda: list(_SILENT_KNOWN.values())),
    9: Exercise("31.9", "функция count_parameters(d_model, heads, d_ff) -> целое число.", _check_9,
                lambda: _count_solution, wrong_answers=lambda: list(_COUNT_KNOWN.values())),
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
