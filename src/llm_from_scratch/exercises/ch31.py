"""Упражнения главы 31: блок декодера с предварительной нормализацией.

Для каждого упражнения N есть три функции:

* ``describe_exercise_N()`` — условие, формат ответа, варианты и шаблон ячейки;
* ``check_exercise_N(answer)`` — проверка любого значения, всегда ``Feedback``;
* ``solution_N()`` — эталонный ответ из главы в принятом формате.

Идентификаторы шагов блока — в ``EXERCISE_1_STEPS``, этапы для форм — в
``EXERCISE_2_STAGES``; варианты выбора — в ``EXERCISE_2_OPTIONS``,
``EXERCISE_3_OPTIONS``, ``EXERCISE_4_OPTIONS`` и ``EXERCISE_6_OPTIONS``.
``EXERCISES`` связывает номер упражнения с его тремя функциями.
"""

from __future__ import annotations

from .feedback import (
    CountTerm,
    Exercise,
    ExerciseSpec,
    Feedback,
    Field,
    Text,
    Verdict,
    answer_template,
    as_bool,
    as_label,
    as_list,
    check_answer,
    choice_verdict,
    count_verdict,
    diagnose_counts,
    prefix_rows_fields,
    shape_field,
)

__all__ = [
    "EXERCISES", "EXERCISE_1_STEPS", "EXERCISE_2_OPTIONS", "EXERCISE_2_STAGES", "EXERCISE_3_OPTIONS",
    "EXERCISE_4_OPTIONS", "EXERCISE_6_OPTIONS",
    *(f"{kind}_{n}" for n in range(1, 7) for kind in ("check_exercise", "describe_exercise", "solution")),
]

_MODULE = "ch31"

# ---------------------------------------------------------------------------
# Упражнение 1: порядок шести операций блока
# ---------------------------------------------------------------------------

# Шаги перечислены в том же перемешанном порядке, что и в условии главы.
EXERCISE_1_STEPS = {
    "residual_1": "первое остаточное сложение",
    "ffn_norm": "RMSNorm перед сетью прямого распространения",
    "attention_norm": "RMSNorm перед вниманием",
    "ffn": "SwiGLU",
    "attention": "каузальное внимание",
    "residual_2": "второе остаточное сложение",
}
_ORDER = ("attention_norm", "attention", "residual_1", "ffn_norm", "ffn", "residual_2")
_NEEDS = {
    "attention": "внимание получает N_a = RMSNorm_a(x), поэтому раньше нужен attention_norm",
    "residual_1": "первое сложение x' = x + A прибавляет выход внимания, поэтому раньше нужен attention",
    "ffn_norm": "RMSNorm_f нормализует x' — поток после первого остаточного сложения residual_1",
    "ffn": "SwiGLU получает N_f = RMSNorm_f(x'), поэтому раньше нужен ffn_norm",
    "residual_2": "второе сложение y = x' + F прибавляет выход SwiGLU, поэтому раньше нужен ffn",
}
_BLOCK = "x' = x + MHA(RMSNorm_a(x)), y = x' + FFN(RMSNorm_f(x'))"
_POST_LN_HINT = ("Это порядок Post-LN: нормализация после сложения, как в исходном Transformer. В Pre-LN "
                 f"нормализатор стоит на входе своей ветви: {_BLOCK}.")
_OWN_NORM_HINT = ("У каждой ветви собственный нормализатор: Pre-LN не означает одну нормализацию в начале блока; "
                  "ffn_norm нормализует x' перед SwiGLU.")
_SPEC_1 = ExerciseSpec(
    "31.1",
    "Расположите операции по порядку: первое остаточное сложение, RMSNorm перед сетью прямого "
    "распространения, RMSNorm перед вниманием, SwiGLU, каузальное внимание, второе остаточное сложение.",
    "список из шести идентификаторов шагов в порядке вычисления (идентификаторы — в ch31.EXERCISE_1_STEPS).",
    answer_template(_MODULE, 1),
    {"Шаги (EXERCISE_1_STEPS):": EXERCISE_1_STEPS},
)


def _order_verdict(value: object) -> Verdict:
    steps = [as_label(item, _ORDER, f"шаг {index + 1}") for index, item in enumerate(as_list(value))]
    repeated = sorted({step for step in steps if steps.count(step) > 1}, key=_ORDER.index)
    if repeated:
        return Verdict(False, f"шаг \"{repeated[0]}\" указан несколько раз; каждая операция выполняется один раз.",
                       f"В блоке ровно шесть шагов: {_BLOCK}.")
    missing = [step for step in _ORDER if step not in steps]
    if missing:
        names = ", ".join(f'"{step}"' for step in missing)
        return Verdict(False, f"не хватает шагов: {names}.", _OWN_NORM_HINT if "ffn_norm" in missing else
                       f"В блоке шесть шагов: {_BLOCK}.")
    if steps == list(_ORDER):
        return Verdict(True, "норма → внимание → сложение, затем норма → SwiGLU → сложение: " + _BLOCK + ".")
    first = next(index for index, (given, want) in enumerate(zip(steps, _ORDER)) if given != want)
    placed = f"шаги 1–{first} на месте; " if first > 1 else "шаг 1 на месте; " if first == 1 else ""
    early = steps[first]
    post_ln = (steps.index("residual_1") < steps.index("attention_norm")
               or steps.index("residual_2") < steps.index("ffn_norm"))
    hint = _POST_LN_HINT if post_ln else f"Каждая ветвь: нормализация → преобразование → сложение; {_BLOCK}."
    return Verdict(False, f"{placed}шаг {first + 1} — \"{early}\" стоит слишком рано: {_NEEDS[early]}.", hint)


def check_exercise_1(answer: object) -> Feedback:
    """Проверить список из шести идентификаторов ``EXERCISE_1_STEPS`` в порядке вычисления."""
    return check_answer(_SPEC_1, answer, [Field(None, "порядок", _order_verdict)],
                        default_hint=f"Блок Pre-LN: {_BLOCK}.")


def solution_1() -> list[str]:
    return list(_ORDER)


def describe_exercise_1() -> Text:
    return _SPEC_1.describe()


# ---------------------------------------------------------------------------
# Упражнение 2: формы остаточного потока и ось, которую может изменить сложение
# ---------------------------------------------------------------------------

EXERCISE_2_STAGES = {
    "input": "вход блока x",
    "attention_norm": "после RMSNorm перед вниманием (N_a)",
    "attention": "выход ветви внимания (A)",
    "residual_1": "после первого остаточного сложения (x')",
    "ffn_norm": "после RMSNorm перед SwiGLU (N_f)",
    "ffn": "выход ветви SwiGLU (F)",
    "residual_2": "после второго остаточного сложения (y)",
}
EXERCISE_2_OPTIONS = {
    "A": "Ось батча B.",
    "B": "Ось токенов T.",
    "C": "Ось признаков d_model, если ветвь вернёт другую ширину.",
    "D": "Никакую: остаточное сложение определено только для операндов одинаковой формы.",
}
_LOST_AXES = {(5, 12): "потеряна ось батча B.", (2, 12): "потеряна ось токенов T."}
_PROBS = ("это форма вероятностей внимания; выход ветви — строки ширины модели после W_O, "
          "иначе сложение с потоком не определено.")
_SPEC_2 = ExerciseSpec(
    "31.2",
    "При B = 2, T = 5 и d_model = 12 запишите форму остаточного потока после каждого этапа. "
    "Какую ось может изменить остаточное сложение?",
    "словарь: для каждого этапа из ch31.EXERCISE_2_STAGES — форма (список или кортеж целых чисел), "
    'и "axis" — буква варианта из ch31.EXERCISE_2_OPTIONS.',
    answer_template(_MODULE, 2, (*EXERCISE_2_STAGES, "axis")),
    {"Этапы — ключи словаря (EXERCISE_2_STAGES):": EXERCISE_2_STAGES,
     'Варианты для "axis" (EXERCISE_2_OPTIONS):': EXERCISE_2_OPTIONS},
)


def check_exercise_2(answer: object) -> Feedback:
    """Проверить словарь форм по этапам блока и букву ``"axis"``."""
    stream = ("B", "T", "d_model")
    special = {
        "attention": {(2, 5, 5): _PROBS, **{(2, heads, 5, 5): _PROBS for heads in (2, 3, 4, 6)}},
        "ffn": {(2, 5, 32): "d_ff — скрытая ширина внутри SwiGLU; проекция сжатия возвращает d_model, "
                            "иначе второе сложение не определено."},
    }
    fields = [shape_field(stage, f'"{stage}"', (2, 5, 12), stream, {**_LOST_AXES, **special.get(stage, {})})
              for stage in EXERCISE_2_STAGES]
    fields.append(Field("axis", '"axis"', lambda value: choice_verdict(
        value, EXERCISE_2_OPTIONS, "D", "верно: формы обоих слагаемых должны совпадать полностью.", {
            "A": "сложение поэлементное: оно не объединяет примеры батча и не меняет их число.",
            "B": "сложение идёт позиция к позиции; число токенов у обоих слагаемых одинаково.",
            "C": "если ветвь вернёт другую ширину, сложение просто не определено — поэтому каждая ветвь "
                 "возвращает d_model.",
        })))
    return check_answer(_SPEC_2, answer, fields, default_hint=(
        "Каждая ветвь возвращает ширину модели, а сложение поэлементное: поток всё время [B, T, d_model]."))


def solution_2() -> dict[str, object]:
    return {**{stage: [2, 5, 12] for stage in EXERCISE_2_STAGES}, "axis": "D"}


def describe_exercise_2() -> Text:
    return _SPEC_2.describe()


# ---------------------------------------------------------------------------
# Упражнение 3: ветвь внимания возвращает ноль
# ---------------------------------------------------------------------------

EXERCISE_3_OPTIONS = {
    "A": "x' = 0",
    "B": "x' = RMSNorm(x)",
    "C": "x' = x",
    "D": "x' = x + RMSNorm(x)",
}
_SECOND_BRANCH = ("ветвь SwiGLU по-прежнему прибавляет F = FFN(RMSNorm_f(x')), поэтому y = x + FFN(RMSNorm_f(x)) "
                  "в общем случае не равно x")
_SPEC_3 = ExerciseSpec(
    "31.3",
    "Если ветвь внимания возвращает ноль, выведите x'. Становится ли весь блок тождественной функцией?",
    '"x_prime" — буква варианта из ch31.EXERCISE_3_OPTIONS; "block_is_identity" — True или False.',
    answer_template(_MODULE, 3, ("x_prime", "block_is_identity")),
    {'Варианты для "x_prime" (EXERCISE_3_OPTIONS):': EXERCISE_3_OPTIONS},
)


def _identity_verdict(value: object) -> Verdict:
    if not as_bool(value):
        return Verdict(True, f"False: {_SECOND_BRANCH}.")
    return Verdict(False, f"True не подходит: {_SECOND_BRANCH}.",
                   "Нулевая ветвь внимания выключает только первую ветвь; вторая ветвь остаётся.")


def check_exercise_3(answer: object) -> Feedback:
    """Проверить ``{"x_prime": буква, "block_is_identity": bool}``."""
    fields = [
        Field("x_prime", '"x_prime"', lambda value: choice_verdict(
            value, EXERCISE_3_OPTIONS, "C", "верно: x' = x + 0, тождественный путь переносит x без изменений.", {
                "A": "ноль возвращает только ветвь; тождественный путь всё равно переносит x, и x' = x + 0.",
                "B": "нормализованная копия уходит только во вход ветви; в остаточный поток RMSNorm не попадает.",
                "D": "к потоку прибавляется выход ветви (здесь 0), а не её нормализованный вход.",
            })),
        Field("block_is_identity", '"block_is_identity"', _identity_verdict),
    ]
    return check_answer(_SPEC_3, answer, fields, default_hint=f"Запишите блок целиком: {_BLOCK}.")


def solution_3() -> dict[str, object]:
    return {"x_prime": "C", "block_is_identity": False}


def describe_exercise_3() -> Text:
    return _SPEC_3.describe()


# ---------------------------------------------------------------------------
# Упражнение 4: меняется только последний из пяти токенов
# ---------------------------------------------------------------------------

EXERCISE_4_OPTIONS = {
    "A": "RMSNorm: она нормализует каждую строку отдельно.",
    "B": "Каузальная маска в многоголовом внимании — единственном преобразовании блока, смешивающем токены.",
    "C": "SwiGLU: вентиль применяется к каждому токену отдельно.",
    "D": "Остаточные сложения: они складывают только строки с одинаковыми номерами.",
}
_SPEC_4 = ExerciseSpec(
    "31.4",
    "Измените только последний входной токен (T = 5, позиции 0…4). Какие строки выхода обязаны остаться "
    "прежними и какое преобразование устанавливает эту границу?",
    '"unchanged" и "may_change" — множества номеров строк выхода (подходят и списки); '
    '"boundary" — буква варианта из ch31.EXERCISE_4_OPTIONS.',
    answer_template(_MODULE, 4, ("unchanged", "may_change", "boundary")),
    {'Варианты для "boundary" (EXERCISE_4_OPTIONS):': EXERCISE_4_OPTIONS},
)


def check_exercise_4(answer: object) -> Feedback:
    """Проверить ``{"unchanged": {...}, "may_change": {...}, "boundary": буква}``."""
    per_row = ("преобразует признаки каждого токена по отдельности и не смешивает позиции, поэтому границу не "
               "ставит; её задаёт единственное преобразование, смешивающее токены")
    fields = prefix_rows_fields(5, 4, "RMSNorm, SwiGLU и остаточные сложения")
    fields.append(Field("boundary", '"boundary"', lambda value: choice_verdict(
        value, EXERCISE_4_OPTIONS, "B",
        "верно: маска не пропускает суффикс к более ранним строкам, а остальные шаги работают внутри строки.", {
            "A": f"RMSNorm {per_row}.",
            "C": f"SwiGLU {per_row}.",
            "D": "сложения работают внутри позиции и лишь сохраняют границу; задаёт её маска внимания.",
        })))
    return check_answer(_SPEC_4, answer, fields,
                        default_hint="Найдите единственное преобразование блока, которое смешивает токены.")


def solution_4() -> dict[str, object]:
    return {"unchanged": {0, 1, 2, 3}, "may_change": {4}, "boundary": "B"}


def describe_exercise_4() -> Text:
    return _SPEC_4.describe()


# ---------------------------------------------------------------------------
# Упражнение 5: число параметров при d_model = 12, d_ff = 32
# ---------------------------------------------------------------------------

_D_5, _FF_5 = 12, 32
_DIAGNOSES_5 = diagnose_counts([
    CountTerm(2 * _D_5, (
        (0, "не учтены оба вектора масштабов RMSNorm"),
        (_D_5, "учтён один вектор масштабов RMSNorm, а их два — у каждой ветви свой"),
        (4 * _D_5, "RMSNorm посчитана как LayerNorm со сдвигом, а у RMSNorm только вектор масштабов"),
    )),
    CountTerm(4 * _D_5**2, ((3 * _D_5**2, "не учтена выходная матрица внимания W_O"),)),
    CountTerm(3 * _D_5 * _FF_5, (
        (2 * _D_5 * _FF_5, "у SwiGLU три матрицы — gate, up и down, а не две"),
        (3 * _D_5**2, "матрицы SwiGLU посчитаны как d_model × d_model, а их формы d_model × d_ff и d_ff × d_model"),
    )),
    CountTerm(0, (
        (4 * _D_5, "добавлены смещения проекций внимания, а в блоке их нет"),
        (2 * _FF_5 + _D_5, "добавлены смещения проекций SwiGLU, а в блоке их нет"),
        (4 * _D_5 + 2 * _FF_5 + _D_5, "добавлены смещения всех проекций, а в блоке их нет"),
    )),
])
_SPEC_5 = ExerciseSpec(
    "31.5",
    "При d_model = 12 и d_ff = 32 вычислите полное число параметров без смещений, включая оба вектора "
    "масштабов RMSNorm.",
    "целое число (int); float с целым значением, например 10.0, тоже принимается.",
    answer_template(_MODULE, 5),
)


def check_exercise_5(answer: object) -> Feedback:
    """Проверить число параметров: ``int`` (или ``float`` с целым значением)."""
    hint = ("N = 2·d_model + 4·d_model² + 3·d_model·d_ff: два вектора масштабов RMSNorm, четыре матрицы "
            "внимания и три матрицы SwiGLU, без смещений.")
    expected = 2 * _D_5 + 4 * _D_5**2 + 3 * _D_5 * _FF_5
    field = Field(None, "число параметров", lambda value: count_verdict(
        value, expected, _DIAGNOSES_5, "2·12 + 4·12² + 3·12·32 = 24 + 576 + 1152", hint))
    return check_answer(_SPEC_5, answer, [field], default_hint=hint)


def solution_5() -> int:
    return 2 * _D_5 + 4 * _D_5**2 + 3 * _D_5 * _FF_5


def describe_exercise_5() -> Text:
    return _SPEC_5.describe()


# ---------------------------------------------------------------------------
# Упражнение 6: первый остаточный этап в порядке Post-LN
# ---------------------------------------------------------------------------

EXERCISE_6_OPTIONS = {
    "post_ln": {
        "A": "x + MHA(LayerNorm(x))",
        "B": "x + LayerNorm(MHA(x))",
        "C": "LayerNorm(x + MHA(x))",
        "D": "LayerNorm(x) + MHA(LayerNorm(x))",
    },
    "first_difference": {
        "A": "Только после остаточного сложения, когда Post-LN нормализует сумму.",
        "B": "Уже на входе внимания: Post-LN подаёт в MHA сам x, а Pre-LN — RMSNorm(x), ещё до остаточного сложения.",
        "C": "Только во второй ветви, на входе SwiGLU.",
        "D": "Нигде: при единичном масштабе и нулевом сдвиге результаты совпадают.",
    },
}
_SPEC_6 = ExerciseSpec(
    "31.6",
    "Перепишите только первый остаточный этап в порядке Post-LN и укажите, где его значение впервые может "
    "разойтись с вычислением Pre-LN.",
    '"post_ln" и "first_difference" — буквы вариантов из ch31.EXERCISE_6_OPTIONS.',
    answer_template(_MODULE, 6, ("post_ln", "first_difference")),
    {f'Варианты для "{part}" (EXERCISE_6_OPTIONS["{part}"]):': choices for part, choices in EXERCISE_6_OPTIONS.items()},
)


def check_exercise_6(answer: object) -> Feedback:
    """Проверить ``{"post_ln": буква, "first_difference": буква}``."""
    fields = [
        Field("post_ln", '"post_ln"', lambda value: choice_verdict(
            value, EXERCISE_6_OPTIONS["post_ln"], "C",
            "верно: Post-LN нормализует сумму после остаточного сложения, как в исходном Transformer.", {
                "A": "это Pre-LN (с LayerNorm вместо RMSNorm): нормализуется вход ветви, а не сумма.",
                "B": "здесь нормализуется только выход ветви, а поток остаётся ненормализованным; "
                     "Post-LN нормализует всю сумму x + MHA(x).",
                "D": "здесь нормализованы и тождественный путь, и вход ветви; в Post-LN внимание получает сам x, "
                     "а нормализуется результат сложения.",
            })),
        Field("first_difference", '"first_difference"', lambda value: choice_verdict(
            value, EXERCISE_6_OPTIONS["first_difference"], "B",
            "верно: входы внимания различаются ещё до появления результата остаточного сложения.", {
                "A": "ещё раньше: MHA в Post-LN получает x, а в Pre-LN — RMSNorm(x), так что различаются уже "
                     "входы внимания.",
                "C": "переписан только первый этап, и он различается сам — уже на входе внимания.",
                "D": "пример главы даёт для токена 1 разные строки: Post-LN — [-0.573144, 1.732042, -0.579449, "
                     "-0.579449], Pre-LN — x' = [0.010881, 3.989119, 0, 0].",
            })),
    ]
    return check_answer(_SPEC_6, answer, fields,
                        default_hint="Сравните, что получает на вход MHA и что нормализуется в каждой схеме.")


def solution_6() -> dict[str, str]:
    return {"post_ln": "C", "first_difference": "B"}


def describe_exercise_6() -> Text:
    return _SPEC_6.describe()


EXERCISES = {
    1: Exercise(check_exercise_1, solution_1, describe_exercise_1),
    2: Exercise(check_exercise_2, solution_2, describe_exercise_2),
    3: Exercise(check_exercise_3, solution_3, describe_exercise_3),
    4: Exercise(check_exercise_4, solution_4, describe_exercise_4),
    5: Exercise(check_exercise_5, solution_5, describe_exercise_5),
    6: Exercise(check_exercise_6, solution_6, describe_exercise_6),
}
