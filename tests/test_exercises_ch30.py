"""Проверки упражнений главы 30: эталон принимается, типичные ошибки получают адресную подсказку,
любой ввод даёт Feedback без исключений, текст детерминирован."""

from __future__ import annotations

import functools
import math
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from llm_from_scratch.exercises import ch30
from llm_from_scratch.exercises.feedback import Text

import exercise_checks
from exercise_checks import assert_rejected

NUMBERS = sorted(ch30.EXERCISES)
DICT_NUMBERS = [number for number in NUMBERS if isinstance(ch30.EXERCISES[number].solution(), dict)]
check = functools.partial(exercise_checks.check, ch30)
with_value = functools.partial(exercise_checks.with_value, ch30)
INTERNAL_ERROR = exercise_checks.INTERNAL_ERROR


# --- эталонные ответы ------------------------------------------------------------


def test_solutions_are_the_answers_of_the_chapter():
    assert ch30.solution_1() == {1: "valid", 2: "odd_head_width", 3: "valid", 4: "indivisible", 6: "odd_head_width"}
    assert ch30.solution_2() == {
        "qkv": [2, 5, 12], "split": [2, 3, 5, 4], "probs_one_head": [2, 5, 5], "probs_all_heads": [2, 3, 5, 5],
        "head_outputs": [2, 3, 5, 4], "merged": [2, 5, 12], "output": [2, 5, 12],
    }
    lower = [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    assert ch30.solution_3() == {0: lower, 1: lower}
    assert "общую для всех признаков" in ch30.EXERCISE_4_OPTIONS[ch30.solution_4()]
    assert ch30.solution_5() == {"concat": ["a", "b", "c", "d"], "swapped": ["c", "d", "a", "b"], "y2": "a + c"}
    assert ch30.solution_6() == {"unchanged": {0, 1}, "may_change": {2}}
    assert "W_O" in ch30.EXERCISE_7_OPTIONS["ends"][ch30.solution_7()["ends"]]
    assert "все координаты входной строки" in ch30.EXERCISE_7_OPTIONS["why"][ch30.solution_7()["why"]]
    assert ch30.solution_8() == 65536 == 4 * 128**2


@pytest.mark.parametrize("number", NUMBERS)
def test_solution_is_accepted(number):
    feedback = check(number, ch30.EXERCISES[number].solution())
    assert feedback.correct is True, str(feedback)
    assert bool(feedback) is True
    assert feedback.hint == ""
    assert all(item.ok for item in feedback.items)
    assert str(feedback).startswith(f"Упражнение 30.{number}: верно.")


@pytest.mark.parametrize("number", DICT_NUMBERS)
def test_key_order_does_not_change_the_text(number):
    solution = ch30.EXERCISES[number].solution()
    reordered = dict(reversed(list(solution.items())))
    assert str(check(number, reordered)) == str(check(number, solution))


# --- заглушки и произвольный мусор ----------------------------------------------


@pytest.mark.parametrize("number", NUMBERS)
@pytest.mark.parametrize("placeholder", [None, ...])
def test_placeholder_asks_to_replace_it(number, placeholder):
    feedback = check(number, placeholder)
    assert feedback.correct is False
    assert feedback.placeholder is True
    assert "не заполнен" in str(feedback) and "Замените заглушку ... (или None) своим ответом" in str(feedback)
    assert "ошибка" not in str(feedback)


@pytest.mark.parametrize("number", NUMBERS)
def test_template_of_the_description_runs_and_is_a_placeholder(number):
    description = ch30.EXERCISES[number].describe()
    assert isinstance(description, Text) and repr(description) == str(description)
    template = description.split("Шаблон ячейки (замените каждое ... своим значением):\n", 1)[1]
    *code, call = template.split("\n")
    assert call == f"ch30.check_exercise_{number}(answer)"
    namespace: dict = {}
    exec("\n".join(code), namespace)
    feedback = eval(call, {"ch30": ch30, "answer": namespace["answer"]})
    assert feedback.placeholder is True and feedback.correct is False


JUNK = [
    "", "   ", "abc", 42, -1, 0, 3.5, math.nan, math.inf, True, False, [], (), {}, set(), [None], [[None]],
    {None: None}, {"x": [None]}, np.zeros((2, 2)), np.zeros(7), np.array(5), np.array([]), object(), b"bytes",
    {1: {2: {3: None}}}, [[1, 2], [3]], {"": ""}, 10**5000,
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
    solution = ch30.EXERCISES[number].solution()
    first = next(iter(solution))
    partial = {key: value for key, value in solution.items() if key != first}
    assert_rejected(check(number, partial), "ключа нет в словаре", "Заполните все ключи")
    with_placeholder = {**solution, first: ...}
    assert_rejected(check(number, with_placeholder), "замените заглушку своим значением")
    assert_rejected(check(number, {**solution, "extra": 1}), 'ключ "extra"', "такого ключа в ответе нет")
    assert_rejected(check(number, {**solution, first: None, 99: None}), "ключ 99")
    assert check(number, {key: None for key in solution}).placeholder is True


# --- упражнение 1 --------------------------------------------------------------


@pytest.mark.parametrize(("heads", "label", "fragment"), [
    (6, "valid", "единственная координата головы остаётся без пары"),
    (2, "valid", "одна координата головы остаётся без пары"),
    (4, "valid", "6 / 4 = 1.5 — не целое"),
    (4, "odd_head_width", "до проверки чётности дело не доходит"),
    (3, "odd_head_width", "d_h = 6 / 3 = 2, чётная"),
    (1, "indivisible", "6 делится на 1 без остатка"),
    (2, "indivisible", "6 делится на 2 без остатка"),
])
def test_exercise_1_names_the_wrong_head_count(heads, label, fragment):
    feedback = check(1, with_value(1, heads, label))
    assert_rejected(feedback, f"h={heads}", fragment)
    assert [item.label for item in feedback.wrong] == [f"h={heads}"]


def test_exercise_1_labels_ignore_case_spaces_and_hyphens():
    answer = {1: " VALID ", 2: "odd-head-width", 3: "Valid", 4: "INDIVISIBLE", 6: "odd head width"}
    assert check(1, answer).correct is True
    assert check(1, {np.int64(key): value for key, value in ch30.solution_1().items()}).correct is True


def test_exercise_1_rejects_unknown_labels_and_non_int_keys():
    assert_rejected(check(1, with_value(1, 1, "ok")), '"valid", "indivisible", "odd_head_width"')
    assert_rejected(check(1, with_value(1, 1, 1)), "нужна строка")
    as_strings = {str(key): value for key, value in ch30.solution_1().items()}
    assert_rejected(check(1, as_strings), 'ключ "1"')
    without_one = {key: value for key, value in ch30.solution_1().items() if key != 1}
    assert_rejected(check(1, {True: "valid", **without_one}), "ключ True", "h=1: ключа нет в словаре")


# --- упражнение 2 --------------------------------------------------------------


@pytest.mark.parametrize(("stage", "shape", "fragment"), [
    ("split", [2, 5, 3, 4], "до перестановки осей"),
    ("split", [2, 3, 5, 12], "ширина не разделена"),
    ("qkv", [2, 3, 5, 4], "на полной ширине d_model"),
    ("probs_one_head", [2, 3, 5, 5], "всех голов сразу"),
    ("probs_all_heads", [2, 5, 5], "это одна голова"),
    ("probs_all_heads", [2, 3, 5, 4], "ширина головы d_h в ней не участвует"),
    ("head_outputs", [2, 3, 5, 5], "это вероятности A"),
    ("merged", [2, 5, 4], "h · d_h = d_model"),
    ("output", [2, 5, 11], "не совпадает размер: d_model"),
    ("probs_one_head", [2, 5, 5, 1], "здесь 3 оси [B, T, T], а в ответе 4"),
    ("merged", [2.0, 5, 12], "а не 2.0"),
    ("merged", [True, 5, 12], "логическое значение"),
    ("output", "2,5,12", "получена строка"),
    ("output", {2, 5, 12}, "нет порядка"),
    ("output", np.zeros((2, 5)), "одномерный"),
])
def test_exercise_2_explains_the_typical_shape_mistakes(stage, shape, fragment):
    feedback = check(2, with_value(2, stage, shape))
    assert_rejected(feedback, f'"{stage}"', fragment)
    assert [item.label for item in feedback.wrong] == [f'"{stage}"']
    assert "[B, T, d_model] → split_heads" in feedback.hint or "Формат ответа" in feedback.hint


def test_exercise_2_accepts_tuples_arrays_and_numpy_ints():
    solution = ch30.solution_2()
    assert check(2, {key: tuple(value) for key, value in solution.items()}).correct is True
    assert check(2, {key: np.array(value) for key, value in solution.items()}).correct is True
    assert check(2, {key: [np.int32(size) for size in value] for key, value in solution.items()}).correct is True


# --- упражнение 3 --------------------------------------------------------------

ONES = np.ones((3, 3), dtype=int)


@pytest.mark.parametrize(("matrix", "fragment"), [
    (np.triu(ONES), "выше диагонали"),
    (np.tril(ONES, -1), "забыта диагональ"),
    (np.triu(ONES, 1), "закрытые ключи"),
    (ONES, "без каузальной маски"),
    (np.eye(3, dtype=int), "прошлые ключи k < q остаются видимыми"),
    (np.zeros((3, 3), dtype=int), "всё закрыто"),
    ([[1, 1, 0], [1, 1, 0], [1, 1, 1]], "(0, 1) — будущий ключ закрыт"),
    ([[1, 0, 0], [0.5, 0.5, 0], [1 / 3, 1 / 3, 1 / 3]], "похоже на вероятности"),
    ([[1, 0], [1, 1]], "матрица 3 × 3"),
    ([[1, 0, 0], [1, 1, 0], [1, 1, 2]], "только 0 и 1"),
    ([[1, 0, 0], [1, 1, 0], [1, 1, "1"]], "числа 0 или 1"),
])
def test_exercise_3_explains_the_wrong_triangle(matrix, fragment):
    feedback = check(3, {0: np.tril(ONES), 1: matrix})
    assert_rejected(feedback, "голова 1", fragment)
    assert "одинаков во всех головах" in feedback.hint


def test_exercise_3_accepts_bool_and_float_triangles_but_wants_a_dict():
    assert check(3, {0: np.tril(np.ones((3, 3))), 1: np.tril(np.ones((3, 3), dtype=bool))}).correct is True
    assert check(3, {0: ((1, 0, 0), (1, 1, 0), (1, 1, 1)), 1: [[True, False, False]] + [[1, 1, 0], [1, 1, 1]]}).correct
    assert_rejected(check(3, np.tril(ONES)), "словарём {0: матрица, 1: матрица}", "сама матрица верна")
    assert_rejected(check(3, np.triu(ONES)), "словарём", "выше диагонали")


# --- упражнения 4 и 7: выбор варианта -------------------------------------------


def test_exercise_4_accepts_the_letter_in_any_case_and_cyrillic_lookalike():
    for answer in ("C", " c ", "C)", "(c)", "С"):  # последний — кириллическая «С»
        assert check(4, answer).correct is True, answer


@pytest.mark.parametrize(("letter", "fragment"), [
    ("A", "могут совпасть"),
    ("B", "может использовать весь вход X"),
    ("D", "между головами вероятности не нормализуются"),
])
def test_exercise_4_explains_each_wrong_option(letter, fragment):
    assert_rejected(check(4, letter), f"{letter} не подходит", fragment)


def test_exercise_4_rejects_malformed_letters():
    assert_rejected(check(4, "E"), "варианта 'E' нет")
    assert_rejected(check(4, "CD"), "одну букву")
    assert_rejected(check(4, 3), "строка с буквой варианта")
    assert_rejected(check(4, ["C"]), "строка с буквой варианта")


def test_option_constants_are_letters_with_one_right_answer():
    assert list(ch30.EXERCISE_4_OPTIONS) == ["A", "B", "C", "D"]
    assert list(ch30.EXERCISE_7_OPTIONS) == ["ends", "why"]
    for options in ch30.EXERCISE_7_OPTIONS.values():
        assert list(options) == ["A", "B", "C", "D"]
    messages = [str(check(4, letter)) for letter in ch30.EXERCISE_4_OPTIONS]
    assert sum("4: верно." in message for message in messages) == 1
    assert len(set(messages)) == 4


@pytest.mark.parametrize(("part", "letter", "fragment"), [
    ("ends", "A", "у неё нет параметров"),
    ("ends", "C", "между головами вероятности не нормализуются"),
    ("ends", "D", "y_2 = a + c"),
    ("why", "B", "только пример с единичными"),
    ("why", "C", "сначала полноразмерные проекции"),
    ("why", "D", "внутри одной головы"),
])
def test_exercise_7_explains_each_wrong_option(part, letter, fragment):
    feedback = check(7, with_value(7, part, letter))
    assert_rejected(feedback, f'"{part}"', fragment)
    assert len(feedback.wrong) == 1


# --- упражнение 5 --------------------------------------------------------------


@pytest.mark.parametrize("y2", ["a + c", "c+a", " A + C ", "y_2 = a + c", "y2=c+a", "1*a + c", "а + с", "a+c+0*b"])
def test_exercise_5_normalises_the_expression(y2):
    assert check(5, with_value(5, "y2", y2)).correct is True, y2


@pytest.mark.parametrize(("key", "value", "fragment"), [
    ("concat", ["c", "d", "a", "b"], "уже результат после W_O"),
    ("concat", ["a", "c", "b", "d"], "не чередует"),
    ("swapped", ["a", "b", "c", "d"], "конкатенация до W_O"),
    ("swapped", ["b", "a", "d", "c"], "внутри каждой головы"),
    ("swapped", ["d", "c", "b", "a"], "разворот всех координат"),
    ("swapped", ["c", "d"], "нужно 4: две головы"),
    ("swapped", "cdab", "нужен список из четырёх строк"),
    ("swapped", ["c", "d", "a", 1], "нужна строка-выражение"),
    ("y2", "c", "(W_O)_{0,2} = 1 переносит в выход 2 ещё координату 0"),
    ("y2", "a", "начните с единичной W_O"),
    ("y2", "2a - c", "y_2 = 2*a - c"),
    ("y2", "a + e", "используйте буквы a, b, c, d"),
    ("y2", "a +", "не удалось разобрать"),
])
def test_exercise_5_explains_the_typical_mistakes(key, value, fragment):
    assert_rejected(check(5, with_value(5, key, value)), f'"{key}"', fragment)


# --- упражнение 6 --------------------------------------------------------------


@pytest.mark.parametrize("unchanged", [{0, 1}, [1, 0], (0, 1), range(2), np.array([0, 1]), frozenset({1, 0})])
def test_exercise_6_accepts_any_collection_of_rows(unchanged):
    assert check(6, with_value(6, "unchanged", unchanged)).correct is True


def test_exercise_6_set_order_does_not_change_the_text():
    assert str(check(6, {"unchanged": [2, 1, 0], "may_change": []})) == str(
        check(6, {"unchanged": {0, 1, 2}, "may_change": set()}))


@pytest.mark.parametrize(("key", "value", "fragment"), [
    ("unchanged", {0, 1, 2}, "лишние {2}: в строке 2 стоит сам изменённый токен"),
    ("unchanged", {0}, "не хватает {1}: строки {0, 1} не видят токен 2: каузальная маска"),
    ("may_change", {1, 2}, "лишние {1}: строки {0, 1} не видят токен 2"),
    ("may_change", set(), "set() — не хватает {2}"),
])
def test_exercise_6_explains_which_rows_see_the_changed_token(key, value, fragment):
    feedback = check(6, with_value(6, key, value))
    assert_rejected(feedback, fragment)
    assert "Строка q видит только ключи k ≤ q" in feedback.hint


@pytest.mark.parametrize(("key", "value", "fragment"), [
    ("may_change", {2, 7}, "номера {7} вне диапазона"),
    ("may_change", 2, "например {2}, а не одно число"),
    ("unchanged", [0.0, 1.0], "а не 0.0"),
    ("unchanged", "01", "получена строка"),
    ("unchanged", [[0], [1]], "ожидалось целое число"),
])
def test_exercise_6_rejects_malformed_rows(key, value, fragment):
    assert_rejected(check(6, with_value(6, key, value)), f'"{key}"', fragment)


# --- упражнение 8 --------------------------------------------------------------


@pytest.mark.parametrize(("count", "fragment"), [
    (49152, "не учтена выходная матрица W_O"),
    (66048, "смещения четырёх проекций"),
    (65920, "смещения W_Q, W_K, W_V"),
    (16384, "посчитана одна матрица"),
    (32768, "матрицы одной головы"),
    (8192, "матрицы одной головы"),
    (131072, "ровно один раз"),
    (512, "векторы длины d_model"),
    (12345, "такую ошибку не удалось узнать"),
    (65536.5, "не целое число"),
    ("65536", "уберите кавычки"),
    (True, "логическое значение"),
    (math.nan, "не конечное"),
])
def test_exercise_8_explains_the_typical_counts(count, fragment):
    feedback = check(8, count)
    assert_rejected(feedback, fragment)
    if isinstance(count, int) and not isinstance(count, bool):
        assert "4·d_model²" in feedback.hint


def test_exercise_8_accepts_numerically_equal_numbers_and_says_so():
    assert check(8, np.int64(65536)).correct is True
    feedback = check(8, 65536.0)
    assert feedback.correct is True and "65536.0 принято как целое 65536" in str(feedback)
    assert check(8, np.float32(65536)).correct is True


def test_exercise_8_text_is_exactly_this():
    assert str(check(8, 49152)) == (
        "Упражнение 30.8: пока не верно.\n"
        "  ✗ ошибка · число параметров: 49152: похоже, не учтена выходная матрица W_O.\n"
        "Подсказка: N = 4·d_model²: четыре матрицы d_model × d_model (W_Q, W_K, W_V, W_O) без смещений; "
        "число голов на это не влияет."
    )


# --- отображение в блокноте ----------------------------------------------------


def test_notebook_display_is_the_plain_text():
    pretty = pytest.importorskip("IPython.lib.pretty")
    feedback = check(2, with_value(2, "split", [2, 5, 3, 4]))
    assert pretty.pretty(feedback) == str(feedback) == repr(feedback)
    description = ch30.describe_exercise_4()
    assert pretty.pretty(description) == str(description)
    for letter, text in ch30.EXERCISE_4_OPTIONS.items():
        assert f"  {letter}) {text}" in description


HASH_SCRIPT = """
from llm_from_scratch.exercises import ch30
answers = [{"x", "y", "z"}, {"unchanged": {"a", "b", "c"}, "may_change": frozenset({"q", "r"})},
           {frozenset({"k1", "k2"}): 1, "ends": {"B", "A"}}, {0: {"a", "b", "c"}, 1: [{"s", "t"}] * 3}]
for number, exercise in sorted(ch30.EXERCISES.items()):
    for answer in answers:
        print(exercise.check(answer))
"""


def test_text_does_not_depend_on_the_hash_seed():
    """Множества строк перебираются в порядке хешей; текст отзыва от него не зависит."""
    outputs = {
        subprocess.run([sys.executable, "-c", HASH_SCRIPT], capture_output=True, text=True, check=True,
                       env={**os.environ, "PYTHONHASHSEED": seed}).stdout
        for seed in ("1", "2", "3")
    }
    assert len(outputs) == 1 and "элемент" in outputs.pop()


# --- fuzz: любое значение даёт Feedback ------------------------------------------

scalars = st.one_of(
    st.none(), st.just(...), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12), st.sampled_from(["A", "c", "valid", "a + c", "qkv", "ends", "y2", "1", ""]),
    st.integers(0, 6).map(np.int64), st.floats(0, 2).map(np.float64),
)
keys = st.one_of(st.none(), st.booleans(), st.integers(-2, 8), st.text(max_size=8), st.floats(allow_nan=True),
                 st.sampled_from(["qkv", "split", "y2", "concat", "ends", "why", "unchanged", "may_change"]))
junk = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=5), st.lists(children, max_size=5).map(tuple),
        st.dictionaries(keys, children, max_size=5), st.frozensets(st.integers(-2, 8), max_size=4),
        st.lists(st.integers(-3, 3), min_size=0, max_size=9).map(np.array),
        st.lists(st.floats(allow_nan=True), max_size=9).map(lambda xs: np.array(xs).reshape(-1, 1)),
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
    solution = ch30.EXERCISES[number].solution()
    if isinstance(solution, dict):
        key = data.draw(st.sampled_from(sorted(solution, key=str)))
        answer = {**solution, key: data.draw(junk)}
    else:
        answer = data.draw(junk)
    feedback = check(number, answer)
    if feedback.correct:
        assert check(number, answer).correct
    else:
        assert feedback.hint
