"""Проверки упражнений главы 31: эталон принимается, типичные ошибки получают адресную подсказку,
любой ввод даёт Feedback без исключений, текст детерминирован."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from llm_from_scratch.exercises import ch31
from llm_from_scratch.exercises.feedback import Text

import exercise_checks
from exercise_checks import assert_rejected

NUMBERS = sorted(ch31.EXERCISES)
DICT_NUMBERS = [number for number in NUMBERS if isinstance(ch31.EXERCISES[number].solution(), dict)]
ORDER = ["attention_norm", "attention", "residual_1", "ffn_norm", "ffn", "residual_2"]
check = functools.partial(exercise_checks.check, ch31)
with_value = functools.partial(exercise_checks.with_value, ch31)
INTERNAL_ERROR = exercise_checks.INTERNAL_ERROR


# --- эталонные ответы ------------------------------------------------------------


def test_solutions_are_the_answers_of_the_chapter():
    assert ch31.solution_1() == ORDER
    assert set(ch31.EXERCISE_1_STEPS) == set(ORDER)
    shapes = {key: value for key, value in ch31.solution_2().items() if key != "axis"}
    assert shapes == {stage: [2, 5, 12] for stage in ["input", *ORDER]}
    assert ch31.EXERCISE_2_OPTIONS[ch31.solution_2()["axis"]].startswith("Никакую")
    assert ch31.EXERCISE_3_OPTIONS[ch31.solution_3()["x_prime"]] == "x' = x"
    assert ch31.solution_3()["block_is_identity"] is False
    assert ch31.solution_4()["unchanged"] == {0, 1, 2, 3} and ch31.solution_4()["may_change"] == {4}
    assert "Каузальная маска" in ch31.EXERCISE_4_OPTIONS[ch31.solution_4()["boundary"]]
    assert ch31.solution_5() == 1752 == 2 * 12 + 4 * 12**2 + 3 * 12 * 32
    assert ch31.EXERCISE_6_OPTIONS["post_ln"][ch31.solution_6()["post_ln"]] == "LayerNorm(x + MHA(x))"
    assert "на входе внимания" in ch31.EXERCISE_6_OPTIONS["first_difference"][ch31.solution_6()["first_difference"]]


@pytest.mark.parametrize("number", NUMBERS)
def test_solution_is_accepted(number):
    feedback = check(number, ch31.EXERCISES[number].solution())
    assert feedback.correct is True, str(feedback)
    assert bool(feedback) is True
    assert feedback.hint == ""
    assert str(feedback).startswith(f"Упражнение 31.{number}: верно.")


@pytest.mark.parametrize("number", DICT_NUMBERS)
def test_key_order_does_not_change_the_text(number):
    solution = ch31.EXERCISES[number].solution()
    reordered = dict(reversed(list(solution.items())))
    assert str(check(number, reordered)) == str(check(number, solution))


# --- заглушки и произвольный мусор ----------------------------------------------


@pytest.mark.parametrize("number", NUMBERS)
@pytest.mark.parametrize("placeholder", [None, ...])
def test_placeholder_asks_to_replace_it(number, placeholder):
    feedback = check(number, placeholder)
    assert feedback.placeholder is True and feedback.correct is False
    assert "Замените заглушку ... (или None) своим ответом" in str(feedback) and "ошибка" not in str(feedback)


@pytest.mark.parametrize("number", NUMBERS)
def test_template_of_the_description_runs_and_is_a_placeholder(number):
    description = ch31.EXERCISES[number].describe()
    assert isinstance(description, Text) and repr(description) == str(description)
    template = description.split("Шаблон ячейки (замените каждое ... своим значением):\n", 1)[1]
    *code, call = template.split("\n")
    assert call == f"ch31.check_exercise_{number}(answer)"
    namespace: dict = {}
    exec("\n".join(code), namespace)
    assert check(number, namespace["answer"]).placeholder is True


JUNK = [
    "", " ", "attention", 42, 0, -7, 2.5, math.nan, -math.inf, True, False, [], (), {}, set(), [None], [[None]],
    {None: None}, {"axis": [None]}, np.zeros((2, 2)), np.zeros(7), np.array("x"), object(), b"",
    [ORDER], {"unchanged": {"may_change": None}}, 10**5000, [10**5000] * 3,
]


@pytest.mark.parametrize("number", NUMBERS)
@pytest.mark.parametrize("junk", JUNK, ids=lambda value: type(value).__name__)
def test_junk_is_rejected_without_raising(number, junk):
    feedback = check(number, junk)
    assert feedback.correct is False
    text = str(feedback)
    assert "0x" not in text
    assert text == str(check(number, junk)) == repr(feedback)


@pytest.mark.parametrize("number", DICT_NUMBERS)
def test_partial_and_extra_keys_are_rejected(number):
    solution = ch31.EXERCISES[number].solution()
    last = list(solution)[-1]
    partial = {key: value for key, value in solution.items() if key != last}
    assert_rejected(check(number, partial), "ключа нет в словаре", "Заполните все ключи")
    assert_rejected(check(number, {**solution, last: ...}), "замените заглушку своим значением")
    assert_rejected(check(number, {**solution, "Extra": 0}), 'ключ "Extra"')
    assert_rejected(check(number, {**solution, 5: None}), "ключ 5")
    assert check(number, {key: ... for key in solution}).placeholder is True


def test_string_keys_ignore_case_and_spaces_but_not_duplicates():
    assert check(3, {" X_Prime ": "C", "block-is-identity": False}).correct is True
    assert_rejected(check(3, {"x_prime": "C", "X_PRIME": "C", "block_is_identity": False}), "несколько раз")


# --- упражнение 1 --------------------------------------------------------------


def test_exercise_1_accepts_tuples_arrays_and_any_spelling():
    assert check(1, tuple(ORDER)).correct is True
    assert check(1, np.array(ORDER)).correct is True
    assert check(1, [step.upper().replace("_", "-") for step in ORDER]).correct is True


@pytest.mark.parametrize(("order", "fragments"), [
    (["attention", "residual_1", "attention_norm", "ffn", "residual_2", "ffn_norm"],
     ['шаг 1 — "attention" стоит слишком рано', "Это порядок Post-LN"]),
    (["attention_norm", "residual_1", "attention", "ffn_norm", "ffn", "residual_2"],
     ['шаг 1 на месте; шаг 2 — "residual_1"', "прибавляет выход внимания"]),
    (["attention_norm", "attention", "ffn_norm", "residual_1", "ffn", "residual_2"],
     ['шаги 1–2 на месте; шаг 3 — "ffn_norm"', "поток после первого остаточного сложения"]),
    (["attention_norm", "attention", "residual_1", "ffn", "ffn_norm", "residual_2"],
     ['шаг 4 — "ffn"', "поэтому раньше нужен ffn_norm"]),
    (["ffn_norm", "ffn", "residual_2", "attention_norm", "attention", "residual_1"],
     ['шаг 1 — "ffn_norm"', "нормализация → преобразование → сложение"]),
    (["attention_norm", "attention", "residual_1", "ffn", "residual_2"],
     ['не хватает шагов: "ffn_norm"', "Pre-LN не означает одну нормализацию"]),
    (["attention_norm", "attention", "residual_1", "ffn_norm", "ffn", "residual_2", "ffn"],
     ['шаг "ffn" указан несколько раз']),
    (["attention_norm", "attention", "residual_1", "ffn_norm", "ffn", "norm"],
     ["шаг 6: 'norm' не распознано", '"residual_2"']),
    (set(ORDER), ["нет порядка"]),
    ("attention_norm, attention", ["получена строка"]),
    ([1, 2, 3, 4, 5, 6], ["шаг 1: нужна строка"]),
])
def test_exercise_1_points_at_the_first_misplaced_step(order, fragments):
    assert_rejected(check(1, order), *fragments)


def test_exercise_1_post_ln_text_is_exactly_this():
    post_ln = ["attention", "residual_1", "attention_norm", "ffn", "residual_2", "ffn_norm"]
    assert str(check(1, post_ln)) == (
        "Упражнение 31.1: пока не верно.\n"
        '  ✗ ошибка · порядок: шаг 1 — "attention" стоит слишком рано: внимание получает N_a = RMSNorm_a(x), '
        "поэтому раньше нужен attention_norm.\n"
        "Подсказка: Это порядок Post-LN: нормализация после сложения, как в исходном Transformer. В Pre-LN "
        "нормализатор стоит на входе своей ветви: x' = x + MHA(RMSNorm_a(x)), y = x' + FFN(RMSNorm_f(x'))."
    )


# --- упражнение 2 --------------------------------------------------------------


@pytest.mark.parametrize(("stage", "shape", "fragment"), [
    ("attention", [2, 5, 5], "форма вероятностей внимания"),
    ("attention", (2, 3, 5, 5), "форма вероятностей внимания"),
    ("ffn", [2, 5, 32], "d_ff — скрытая ширина внутри SwiGLU"),
    ("input", [5, 12], "потеряна ось батча B"),
    ("residual_1", [2, 12], "потеряна ось токенов T"),
    ("residual_2", [2, 5, 24], "не совпадает размер: d_model"),
    ("ffn_norm", [2, 5, 12.0], "а не 12.0"),
])
def test_exercise_2_explains_the_wrong_shape(stage, shape, fragment):
    feedback = check(2, with_value(2, stage, shape))
    assert_rejected(feedback, f'"{stage}"', fragment)
    assert [item.label for item in feedback.wrong] == [f'"{stage}"']


@pytest.mark.parametrize(("letter", "fragment"), [
    ("A", "не объединяет примеры батча"),
    ("B", "позиция к позиции"),
    ("C", "сложение просто не определено"),
])
def test_exercise_2_explains_each_wrong_axis(letter, fragment):
    assert_rejected(check(2, with_value(2, "axis", letter)), '"axis"', f"{letter} не подходит", fragment)


# --- упражнение 3 --------------------------------------------------------------


@pytest.mark.parametrize(("letter", "fragment"), [
    ("A", "тождественный путь всё равно переносит x"),
    ("B", "в остаточный поток RMSNorm не попадает"),
    ("D", "а не её нормализованный вход"),
])
def test_exercise_3_explains_each_wrong_x_prime(letter, fragment):
    assert_rejected(check(3, with_value(3, "x_prime", letter)), '"x_prime"', fragment)


@pytest.mark.parametrize(("value", "fragment"), [
    (True, "ветвь SwiGLU по-прежнему прибавляет"),
    ("False", "без кавычек"),
    ("нет", "без кавычек"),
    (0, "нужно True или False"),
])
def test_exercise_3_explains_the_identity_question(value, fragment):
    assert_rejected(check(3, with_value(3, "block_is_identity", value)), '"block_is_identity"', fragment)


def test_exercise_3_accepts_numpy_bool_and_cyrillic_letter():
    assert check(3, {"x_prime": "с", "block_is_identity": np.bool_(False)}).correct is True


# --- упражнение 4 --------------------------------------------------------------


@pytest.mark.parametrize(("key", "value", "fragment"), [
    ("unchanged", {0, 1, 2, 3, 4}, "лишние {4}: в строке 4 стоит сам изменённый токен"),
    ("unchanged", {0, 1, 2}, "не хватает {3}: строки {0, 1, 2, 3} не видят токен 4"),
    ("may_change", {3, 4}, "лишние {3}"),
    ("may_change", [5], "вне диапазона: в примере позиции 0…4"),
])
def test_exercise_4_explains_the_prefix_rows(key, value, fragment):
    assert_rejected(check(4, with_value(4, key, value)), f'"{key}"', fragment)


@pytest.mark.parametrize(("letter", "fragment"), [
    ("A", "RMSNorm преобразует признаки каждого токена по отдельности"),
    ("C", "SwiGLU преобразует признаки каждого токена по отдельности"),
    ("D", "лишь сохраняют границу"),
])
def test_exercise_4_explains_each_wrong_boundary(letter, fragment):
    assert_rejected(check(4, with_value(4, "boundary", letter)), '"boundary"', fragment)


def test_exercise_4_accepts_ranges_and_lists():
    assert check(4, {"unchanged": range(4), "may_change": [4], "boundary": "b"}).correct is True


# --- упражнение 5 --------------------------------------------------------------


@pytest.mark.parametrize(("count", "fragment"), [
    (1728, "не учтены оба вектора масштабов RMSNorm"),
    (1740, "учтён один вектор масштабов RMSNorm, а их два"),
    (1776, "LayerNorm со сдвигом"),
    (1368, "у SwiGLU три матрицы"),
    (1608, "не учтена выходная матрица внимания W_O"),
    (1032, "d_model × d_model"),
    (1800, "смещения проекций внимания"),
    (1828, "смещения проекций SwiGLU"),
    (1876, "смещения всех проекций"),
    (1344, "не учтены оба вектора масштабов RMSNorm; у SwiGLU три матрицы"),
    (1000, "такую ошибку не удалось узнать"),
    (1752.5, "не целое число"),
    ("1752", "уберите кавычки"),
    (np.bool_(True), "логическое значение"),
    (math.inf, "не конечное"),
])
def test_exercise_5_explains_the_typical_counts(count, fragment):
    assert_rejected(check(5, count), fragment)


def test_exercise_5_accepts_numerically_equal_numbers_and_says_so():
    assert check(5, np.int16(1752)).correct is True
    feedback = check(5, 1752.0)
    assert feedback.correct is True and "1752.0 принято как целое 1752" in str(feedback)
    assert check(5, np.array(1752)).correct is True


# --- упражнение 6 --------------------------------------------------------------


@pytest.mark.parametrize(("part", "letter", "fragment"), [
    ("post_ln", "A", "это Pre-LN"),
    ("post_ln", "B", "нормализуется только выход ветви"),
    ("post_ln", "D", "нормализованы и тождественный путь"),
    ("first_difference", "A", "различаются уже входы внимания"),
    ("first_difference", "C", "уже на входе внимания"),
    ("first_difference", "D", "[-0.573144, 1.732042, -0.579449, -0.579449]"),
])
def test_exercise_6_explains_each_wrong_option(part, letter, fragment):
    feedback = check(6, with_value(6, part, letter))
    assert_rejected(feedback, f'"{part}"', fragment)
    assert len(feedback.wrong) == 1


def test_option_constants_are_letters_and_each_wrong_letter_has_its_own_explanation():
    groups = {
        (2, "axis"): ch31.EXERCISE_2_OPTIONS, (3, "x_prime"): ch31.EXERCISE_3_OPTIONS,
        (4, "boundary"): ch31.EXERCISE_4_OPTIONS,
        **{(6, part): options for part, options in ch31.EXERCISE_6_OPTIONS.items()},
    }
    for (number, key), options in groups.items():
        assert list(options) == ["A", "B", "C", "D"]
        messages = {str(check(number, with_value(number, key, letter))) for letter in options}
        assert len(messages) == 4
        assert sum(check(number, with_value(number, key, letter)).correct for letter in options) == 1


def test_notebook_display_is_the_plain_text():
    pretty = pytest.importorskip("IPython.lib.pretty")
    feedback = check(1, list(reversed(ORDER)))
    assert pretty.pretty(feedback) == str(feedback) == repr(feedback)
    assert pretty.pretty(ch31.describe_exercise_1()) == str(ch31.describe_exercise_1())


# --- fuzz: любое значение даёт Feedback ------------------------------------------

scalars = st.one_of(
    st.none(), st.just(...), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12), st.sampled_from([*ORDER, "A", "d", "input", "axis", "x_prime", "post_ln", "True"]),
    st.integers(0, 6).map(np.int64), st.booleans().map(np.bool_),
)
keys = st.one_of(st.none(), st.booleans(), st.integers(-2, 8), st.text(max_size=8), st.floats(allow_nan=True),
                 st.sampled_from([*ORDER, "input", "axis", "x_prime", "block_is_identity", "boundary", "post_ln"]))
junk = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=7), st.lists(children, max_size=7).map(tuple),
        st.dictionaries(keys, children, max_size=5), st.frozensets(st.integers(-2, 8), max_size=5),
        st.lists(st.sampled_from(ORDER), max_size=7).map(np.array),
        st.lists(st.integers(-3, 14), max_size=5).map(np.array),
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(number=st.sampled_from(NUMBERS), answer=junk)
def test_fuzz_any_value_gives_feedback(number, answer):
    feedback = check(number, answer)
    text = str(feedback)
    assert text == str(check(number, answer)) and "0x" not in text
    assert isinstance(feedback.correct, bool)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(number=st.sampled_from(NUMBERS), data=st.data())
def test_fuzz_one_damaged_field_of_the_solution(number, data):
    solution = ch31.EXERCISES[number].solution()
    if isinstance(solution, dict):
        key = data.draw(st.sampled_from(sorted(solution)))
        answer = {**solution, key: data.draw(junk)}
    else:
        answer = data.draw(junk)
    feedback = check(number, answer)
    assert feedback.correct or feedback.hint
