"""The contract every exercise of both chapters keeps (one test module for all of them).

* the reference answer is accepted; placeholders ask to be filled in;
* any input - junk of any type, a typical mistake, a broken learner function -
  gets feedback, never an exception, and never the internal fallback;
* feedback to a wrong answer never contains the exercise's secrets (the answer);
* ``check_N`` prints the feedback (so ``;`` or an assignment cannot hide it)
  in lines of at most 75 characters (what a book output block holds);
* hints name objects as the notebook imports them (``ex30.X``), and X exists.
"""

from __future__ import annotations

import importlib
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from llm_from_scratch.exercises.checking import WIDTH, Exercise, Feedback

CHAPTERS = {"30": "ex30", "31": "ex31"}  # chapter -> the alias the notebook imports
MODULES = {chapter: importlib.import_module(f"llm_from_scratch.exercises.ch{chapter}") for chapter in CHAPTERS}
CASES = [(chapter, number) for chapter, module in MODULES.items() for number in sorted(module.EXERCISES)]
FALLBACK = "проверка не смогла разобрать ответ"

junk = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=True)
    | st.text(max_size=12) | st.just(...) | st.just(np.zeros((2, 3))) | st.just(np.array("x")),
    lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
    | st.dictionaries(st.integers(0, 6) | st.text(max_size=6), inner, max_size=4)
    | st.frozensets(st.integers(0, 6), max_size=4),
    max_leaves=8,
)


def broken_functions():
    """Learner functions that fail in every way a function can."""

    def raises(*args):
        raise ValueError("учащийся ошибся")

    def wrong_shape(*args):
        return np.zeros(3)

    def nan(*args):
        return np.full(np.shape(args[0]), np.nan)

    return [raises, wrong_shape, nan, lambda *args: None, lambda *args: "строка", lambda *args: args[0]]


def exercise(chapter: str, number: int) -> Exercise:
    return MODULES[chapter].EXERCISES[number]


def feedback(chapter: str, number: int, answer: object) -> Feedback:
    result = exercise(chapter, number).feedback(answer)
    assert isinstance(result, Feedback)
    assert FALLBACK not in str(result), str(result)
    assert not re.search(r"0x[0-9a-f]{6,}", str(result)), "a memory address in feedback"
    return result


def assert_no_leak(chapter: str, number: int, result: Feedback) -> None:
    if result.correct:
        return
    for secret in exercise(chapter, number).secrets:
        assert secret not in str(result), f"wrong answer shown the secret {secret!r}:\n{result}"


@pytest.mark.parametrize(("chapter", "number"), CASES)
def test_registry_is_consistent(chapter, number):
    module, item = MODULES[chapter], exercise(chapter, number)
    assert item.number == f"{chapter}.{number}"
    check = getattr(module, f"check_{number}")
    assert check.__self__ is item and check.__func__ is Exercise.check


@pytest.mark.parametrize(("chapter", "number"), CASES)
def test_reference_answer_is_accepted(chapter, number):
    result = feedback(chapter, number, exercise(chapter, number).solution())
    assert result.correct, str(result)
    assert result.hint == ""
    assert str(result).startswith(f"Упражнение {chapter}.{number}: верно.")


@pytest.mark.parametrize(("chapter", "number"), CASES)
@pytest.mark.parametrize("placeholder", [None, ...])
def test_placeholder_asks_to_fill_in(chapter, number, placeholder):
    result = feedback(chapter, number, placeholder)
    assert result.placeholder and not result.correct
    assert "замените заглушку" in str(result)


@pytest.mark.parametrize(("chapter", "number"), CASES)
def test_typical_mistakes_get_feedback_without_the_answer(chapter, number):
    mistakes = list(exercise(chapter, number).wrong_answers())
    if callable(exercise(chapter, number).solution()):
        mistakes += broken_functions()
    assert mistakes, "every exercise lists typical mistakes (wrong_answers)"
    for answer in mistakes:
        result = feedback(chapter, number, answer)
        assert not result.correct and not result.placeholder, f"{answer!r} accepted:\n{result}"
        assert result.hint, f"no hint for {answer!r}:\n{result}"
        assert_no_leak(chapter, number, result)


@pytest.mark.parametrize(("chapter", "number"), CASES)
@settings(max_examples=60, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(answer=junk)
def test_any_input_gets_feedback(chapter, number, answer):
    result = feedback(chapter, number, answer)
    assert_no_leak(chapter, number, result)
    assert str(result) == str(feedback(chapter, number, answer)), "the same answer, other text"


@pytest.mark.parametrize(("chapter", "number"), CASES)
def test_check_prints_and_returns_nothing(chapter, number, capsys):
    check = getattr(MODULES[chapter], f"check_{number}")
    assert check(...) is None
    assert capsys.readouterr().out.startswith(f"Упражнение {chapter}.{number}: ответ ещё не заполнен.")


@pytest.mark.parametrize(("chapter", "number"), CASES)
def test_printed_lines_fit_the_book_column(chapter, number, capsys):
    check = getattr(MODULES[chapter], f"check_{number}")
    for answer in [None, exercise(chapter, number).solution(), *exercise(chapter, number).wrong_answers()]:
        check(answer)
        for line in capsys.readouterr().out.splitlines():
            assert len(line) <= 75, line   # an output block holds 75 characters


@pytest.mark.parametrize(("chapter", "number"), CASES)
def test_hints_name_what_the_notebook_imports(chapter, number):
    alias, module = CHAPTERS[chapter], MODULES[chapter]
    answers = [None, exercise(chapter, number).solution(), *exercise(chapter, number).wrong_answers()]
    for answer in answers:
        text = str(feedback(chapter, number, answer))
        for prefix, name in re.findall(r"\b((?:ch|ex)\d\d)\.([A-Za-z_]\w*)", text):
            assert prefix == alias, f"hint says {prefix}.{name}; the notebook imports {alias}"
            assert hasattr(module, name), f"hint names {alias}.{name}, which does not exist"


@pytest.mark.parametrize(("chapter", "number"), CASES)
def test_printed_feedback_fits_the_page_width(chapter, number, capsys):
    check = getattr(MODULES[chapter], f"check_{number}")
    answers = [None, exercise(chapter, number).solution(), *exercise(chapter, number).wrong_answers()]
    for answer in answers:
        check(answer)
        for line in capsys.readouterr().out.splitlines():
            assert len(line) <= WIDTH, line
