"""The contract every exercise of both chapters keeps: one test module over every (chapter, exercise).

* the reference answer and the notebook's solution are accepted; the stubs ask to be filled in;
* every known mistake of a table gets its message, and the typical wrong answers of
  ``exercise_checks.WRONG`` theirs; derandomised junk of any type gets feedback, never a traceback
  or the internal fallback, and the same answer the same text;
* a learner's function that loops, swallows the time limit, exits, raises, prints, mutates its
  inputs or returns nonsense gets feedback within the limit and is called once per hidden case;
* a package function patched and restored is reported while patched and forgotten after;
* near misses show the gap, the pass counter counts hidden cases, a wrong call prints how to call;
* no wrong answer's feedback names the right one, and it does not change with the right one; a blind
  table (30.1) tells no more than "not right" whatever the right answer;
* numbers and labels are read by one rule in every checker (``SPELLED``, ``test_one_rule_for_numbers``);
* each exercise cell runs alone in a kernel, after the setup cells and after nothing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import re
import string
import subprocess
import sys
import threading
import time
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from notebook_rules import CHAPTER_PAGES, MAIN_PAGES, Kernel, code_indices, errors, load, setup_cells, visible_text

from llm_from_scratch import MultiHeadAttention, Parameter, RotaryEmbedding, Tensor
from llm_from_scratch.book import exercises as checking
from llm_from_scratch.book.exercises import (
    COMMON,
    WIDTH,
    Code,
    Feedback,
    Questions,
    Unreadable,
    labels,
    read_int,
    read_number,
    read_option,
    short,
    word,
)
from llm_from_scratch.ch31 import depth_lab
from llm_from_scratch.heads import split_heads
from llm_from_scratch.tensor import causal_softmax

from exercise_checks import (
    BLIND,
    MHA_SLIPS,
    PROBES,
    ROUNDED,
    SECRETS,
    SPELLED,
    WRONG,
    broken,
    catches_all,
    learner_mha,
    loops,
    sleeps,
    swallows,
)

CHAPTERS = {"30": "ex30", "31": "ex31"}  # chapter -> the alias the notebook imports
MODULES = {chapter: importlib.import_module(f"llm_from_scratch.ch{chapter}.exercises") for chapter in CHAPTERS}
CASES = [(chapter, number) for chapter, module in MODULES.items() for number in sorted(module.EXERCISES)]
CODE = [case for case in CASES if isinstance(MODULES[case[0]].EXERCISES[case[1]], Code)]
QUESTIONS = [case for case in CASES if case not in CODE]
BOOK = Path(__file__).resolve().parents[1] / "book"
NOTEBOOKS = {chapter: CHAPTER_PAGES[chapter] for chapter in CHAPTERS}  # the main page and the sections
SOLUTION = re.compile(r"\{solution\} ch(\d\d)-ex(\d+)\n.*?```python\n(.*?)```", re.S)

junk = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.integers(10**300, 10**400)
    | st.floats(allow_nan=True) | st.text(max_size=12) | st.just(...) | st.just(np.zeros((2, 3)))
    | st.just(np.array("x")) | st.just(np.float32(0.5)) | st.sampled_from([len, object(), str, range(3)]),
    lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
    | st.dictionaries(st.integers(0, 6) | st.text(max_size=6), inner, max_size=4)
    | st.frozensets(st.integers(0, 6), max_size=4),
    max_leaves=8,
)


def exercise(chapter: str, number: int):
    return MODULES[chapter].EXERCISES[number]


def feedback(chapter: str, number: int, answer: object) -> Feedback:
    result = exercise(chapter, number).feedback(answer)
    text = str(result)
    assert isinstance(result, Feedback)
    assert COMMON["failed"].split("(")[0] not in text, text           # the safety net stays unused
    assert not re.search(r"0x[0-9a-f]{6,}", text), f"a memory address in feedback:\n{text}"
    assert text.startswith(f"Упражнение {chapter}.{number}: "), text
    return result


def literal(item, key: str) -> str:
    """The longest literal piece of a text key's text: what its message shows whatever the arguments."""
    text = item.text.get(key, COMMON.get(key))
    assert text is not None, f"no text {key!r} for {item.number}"
    text = text[0] if isinstance(text, tuple) else text
    return max((part for part, *_ in string.Formatter().parse(text)), key=len).strip()


def raw_answer(item: Questions, field, value: object) -> object:
    return value if field.key is None else {**item.solution(), field.key: value}


def wrong_answers(chapter: str, number: int) -> list[object]:
    item = exercise(chapter, number)
    if isinstance(item, Code):
        return [*item.mistakes.values(), *broken(len(item.cases()[0]))]
    answers = [answer for answer, _ in WRONG.get((chapter, number), [])] + PROBES.get((chapter, number), [])
    return answers + [raw_answer(item, field, value) for field in item.fields for value in field.mistakes]


# --- the registry, the stubs, the right answers ------------------------------------------------------

@pytest.mark.parametrize(("chapter", "number"), CASES)
def test_registry_is_consistent(chapter, number):
    item = exercise(chapter, number)
    assert item.number == f"{chapter}.{number}"
    assert getattr(MODULES[chapter], f"check_{number}") == item.check


@pytest.mark.parametrize(("chapter", "number"), CASES)
def test_placeholders_and_stubs_ask_to_be_filled_in(chapter, number):
    answers = [None, ...] + ([lambda *args: ...] if (chapter, number) in CODE else [])
    for answer in answers:
        result = feedback(chapter, number, answer)
        assert result.placeholder and not result.correct
        assert str(result).startswith(f"Упражнение {chapter}.{number}: ответ ещё не заполнен.")
        assert "замените заглушку" in str(result)


@pytest.mark.parametrize(("chapter", "number"), CASES)
def test_reference_answer_is_accepted(chapter, number):
    result = feedback(chapter, number, exercise(chapter, number).solution())
    assert result.correct and result.hint == "", str(result)
    assert str(result).startswith(f"Упражнение {chapter}.{number}: верно.")


def notebook_solutions(chapter: str) -> dict[int, str]:
    return {int(number): code for page in NOTEBOOKS[chapter] for cell in load(page).cells
            if cell.cell_type == "markdown" for ch, number, code in SOLUTION.findall(cell.source) if ch == chapter}


def page_of(chapter: str, number: int) -> Path:
    """The page whose cell calls the exercise's check: the main page, or a section page."""
    pattern = re.compile(rf"\b{CHAPTERS[chapter]}\.check_{number}\(")
    return next(page for page in NOTEBOOKS[chapter] for cell in load(page).cells
                if cell.cell_type == "code" and pattern.search(cell.source))


def setup_namespace(page: Path) -> dict:
    nb = load(page)
    namespace: dict = {}
    for index in code_indices(nb, setup_cells(nb)):
        exec(re.sub(r"^\s*%.*$", "", nb.cells[index].source, flags=re.M), namespace)
    return namespace


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_solution_of_the_notebook_passes_its_checker(chapter):
    """The code of each {solution} dropdown, run after the setup cells, is accepted."""
    solutions, cells = notebook_solutions(chapter), exercise_cells(chapter)
    assert set(solutions) == set(cells) == set(MODULES[chapter].EXERCISES)
    for number, code in solutions.items():
        namespace = setup_namespace(page_of(chapter, number))
        exec(code, namespace)
        name = re.search(r"check_\d+\((\w+)\)", cells[number].splitlines()[-1])[1]   # what the cell passes
        result = feedback(chapter, number, namespace[name])
        assert result.correct, f"solution {chapter}.{number}:\n{result}"


# --- known mistakes, typical wrong answers, junk --------------------------------------------------------

@pytest.mark.parametrize(("chapter", "number"), CASES)
def test_every_known_mistake_gets_its_message(chapter, number):
    item = exercise(chapter, number)
    if isinstance(item, Code):
        for key, mistake in item.mistakes.items():
            result = feedback(chapter, number, mistake)
            assert not result.correct and result.hint == item.say(key), f"{key}:\n{result}"
        return
    for field in item.fields:
        for value, key in field.mistakes.items():
            result = feedback(chapter, number, raw_answer(item, field, value))
            line = next(line for line in result.items if line.label == item.label(field.key))
            assert line.status == "wrong" and literal(item, key) in line.message, f"{value!r}:\n{result}"


@pytest.mark.parametrize(("chapter", "number"), sorted(WRONG))
def test_typical_wrong_answers_get_their_message(chapter, number):
    for answer, key in WRONG[(chapter, number)]:
        result = feedback(chapter, number, answer)
        assert not result.correct and result.hint, f"{answer!r}:\n{result}"
        assert literal(exercise(chapter, number), key) in str(result), f"{answer!r} wants {key!r}:\n{result}"


@pytest.mark.parametrize(("chapter", "number"), sorted(ROUNDED))
def test_answers_rounded_as_the_chapter_prints_them_are_accepted(chapter, number):
    for answer in ROUNDED[(chapter, number)]:
        assert feedback(chapter, number, answer).correct, answer


@pytest.mark.parametrize(("chapter", "number"), sorted(SPELLED))
def test_right_answers_spelled_another_way_are_accepted(chapter, number):
    for answer in SPELLED[(chapter, number)]:
        result = feedback(chapter, number, answer)
        assert result.correct, f"{answer!r}:\n{result}"


SAME_NUMBER = [2, 2.0, np.int64(2), np.float32(2.0), np.array(2), np.array(2.0), "2", " 2.0 ", "2e0", "+2",
               Fraction(4, 2), "4/2"]
NOT_A_WHOLE_NUMBER = [2.5, "2.5", "2,0", True, np.bool_(True), "два", "", None, float("nan"), "inf", float("-inf"),
                      np.array([2]), [2], "1e400", complex(2, 0)]


def test_one_rule_for_numbers_in_every_reader():
    """2, 2.0, "2", np.int64(2), a 0-d array: the same number to every reader (an option, a count, a shape,
    a numbered key); the readers refuse alike what is not a whole number (issue 27: 30.4 took "2" but not
    2.0, 30.8 took 65536.0 but not "65536")."""
    for value in SAME_NUMBER:
        assert read_int(value) == 2 and type(read_int(value)) is int, value
        assert read_number(value) == 2.0, value
        assert read_option(value) == 2, value
    for value in NOT_A_WHOLE_NUMBER:
        for reader in (read_int, read_option):
            with pytest.raises(Unreadable):
                reader(value)
    assert read_number("2.5") == 2.5 and read_number("-0.125") == -0.125 and read_number("1/4") == 0.25
    assert read_int("65 536") == read_int("65_536") == read_int("65\u202f536") == 65536
    with pytest.raises(Unreadable, match="comma"):
        read_number("0,5")
    for chapter, number in [("30", 4), ("30", 8), ("31", 5)]:   # what a checker says is one rule too
        text = {str(feedback(chapter, number, value)) for value in (2.5, "2.5", np.float32(2.5), " 2.50")}
        assert len(text) == 1, text


LATIN = "aeokpcyxijABEKMHOPCTYXIJ"


def test_a_label_in_cyrillic_look_alike_letters_reads_as_meant():
    """«ок» typed with Cyrillic о and к is "ok"; a label typed in the Russian layout, or with other
    Cyrillic letters, is told so with the letters shown, never as the same-looking text it was asked."""
    cyrillic = COMMON["lookalikes"][0]
    assert COMMON["lookalikes"][1] == LATIN and all(c != latin for c, latin in zip(cyrillic, LATIN, strict=True))
    assert word("\u043e\u043a") == "ok" and word(" \u041e\u041a ") == "ok" and word("\u043e\u0434d") != "odd"
    read = labels("ok", "odd", "indivisible")
    for typed in ("\u043e\u043a", "\u041eK", "\u043edd", "ODD"):
        assert read(typed) in ("ok", "odd"), typed
    for typed, key, shown in (("\u0449\u043b", "typed_in_layout", '"ok"'),                # the keys o, k
                              ("\u0449\u0432\u0432", "typed_in_layout", '"odd"'),
                              ("\u043e\u0434\u0434", "foreign_letters", "«\u0434»")):
        with pytest.raises(Unreadable) as caught:
            read(typed)
        message = COMMON[caught.value.key].format(**caught.value.args_)
        assert caught.value.key == key and shown in message, message
    for chapter, number in CASES:   # the rule reaches every label reader, chapter 31's too
        item = exercise(chapter, number)
        for field in getattr(item, "fields", ()):
            for label in getattr(field.read, "allowed", ()):
                assert field.read(label.translate(str.maketrans(LATIN, cyrillic))) == label


@pytest.mark.parametrize(("chapter", "number"), CASES)
@settings(max_examples=40, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(answer=junk)
def test_any_input_gets_feedback(chapter, number, answer):
    first = feedback(chapter, number, answer)
    assert str(first) == str(feedback(chapter, number, answer)), "the same answer, another text"


# --- learner functions that misbehave ------------------------------------------------------------

@pytest.mark.parametrize(("chapter", "number"), CODE)
def test_broken_functions_get_feedback(chapter, number, capsys):
    for function in broken(len(exercise(chapter, number).cases()[0])):
        result = feedback(chapter, number, function)
        assert not result.correct and not result.placeholder, f"{function.__name__}:\n{result}"
        assert function.__name__ != "exits" or "sys.exit(3)" in str(result), str(result)


@pytest.mark.parametrize(("chapter", "number"), CODE)
@pytest.mark.parametrize("function", [loops, swallows, catches_all, sleeps])
def test_a_function_that_never_returns_is_stopped_within_the_limit(chapter, number, function, monkeypatch):
    monkeypatch.setattr(checking, "LIMIT", 0.5)
    started = time.perf_counter()
    result = feedback(chapter, number, function)
    assert time.perf_counter() - started < checking.LIMIT + 5   # a finite bound: without the limit it never ends
    assert literal(exercise(chapter, number), "timeout") in str(result)
    assert literal(exercise(chapter, number), "not_run") in str(result)      # the other cases are not run
    assert feedback(chapter, number, exercise(chapter, number).solution()).correct   # nothing left behind


@pytest.mark.parametrize(("chapter", "number"), CODE)
def test_the_function_runs_once_per_hidden_case_and_its_prints_show_once(chapter, number, capsys):
    item, calls = exercise(chapter, number), []

    def printing(*args):
        calls.append(args)
        print("печать учащегося")
        return item.solution()(*args)

    for answer in (printing, next(iter(item.mistakes.values()))):
        calls.clear()
        wrapped = answer if answer is printing else (lambda *a, _f=answer: calls.append(a) or _f(*a))
        item.check(wrapped)
        out = capsys.readouterr().out
        assert len(calls) == len(item.cases()), "one call per hidden case"
        assert out.count(f"Упражнение {chapter}.{number}:") == 1
    assert feedback(chapter, number, printing).correct


@pytest.mark.parametrize(("chapter", "number"), CODE)
def test_a_function_that_mutates_its_input_is_told_and_leaves_no_trace(chapter, number):
    item = exercise(chapter, number)

    def mutating(*args):
        out = np.array(item.solution()(*args))    # a copy: split_heads returns a view of x
        for argument in args:
            if isinstance(argument, np.ndarray):
                argument[...] = 0
        return out

    takes_arrays = any(isinstance(a, np.ndarray) for a in item.cases()[0])
    result = feedback(chapter, number, mutating)
    assert result.correct != takes_arrays, str(result)
    if takes_arrays:
        assert literal(item, "mutated") in str(result)
    assert feedback(chapter, number, item.solution()).correct        # the hidden cases were not changed


def test_a_learner_interrupt_still_interrupts():
    def interrupted(*args):
        raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        MODULES["30"].check_13(interrupted)


class Boom(BaseException):
    """A learner's own exception that ``except Exception`` does not catch."""


@pytest.mark.parametrize(("chapter", "number"), CODE)
def test_a_function_raising_its_own_base_exception_gets_feedback(chapter, number):
    def booms(*args):
        raise Boom("boom")
    result = feedback(chapter, number, booms)
    assert not result.correct and "Boom: boom" in str(result), str(result)


@pytest.mark.parametrize(("chapter", "number"), QUESTIONS)
def test_an_answer_raising_its_own_base_exception_gets_feedback(chapter, number):
    class Hostile(dict):
        def items(self):
            raise Boom
    result = exercise(chapter, number).feedback(Hostile(x=1))
    assert isinstance(result, Feedback) and not result.correct, str(result)


def test_the_time_limit_works_from_another_thread_too(monkeypatch):
    monkeypatch.setattr(checking, "LIMIT", 0.3)
    results = []
    worker = threading.Thread(target=lambda: results.append(feedback("30", 13, loops)))
    worker.start()
    worker.join(5)
    assert not worker.is_alive() and literal(exercise("30", 13), "timeout") in str(results[0])


# --- no hidden state: a patched package ------------------------------------------------------------

PATCHES = {"31": [(depth_lab, "top_block_gradient"), (Tensor, "__add__")], "30": [
    (importlib.import_module("llm_from_scratch.heads"), "reshape")]}


@pytest.mark.parametrize(("chapter", "number"), CASES)
def test_a_patched_then_restored_package_function(chapter, number):
    item = exercise(chapter, number)
    solution, note = item.solution(), literal(item, "patched")
    for owner, name in PATCHES[chapter]:
        original = getattr(owner, name)
        setattr(owner, name, lambda *args, **kwargs: 0)
        try:   # a patched package may break the reference itself: the note says why
            text = str(item.feedback(solution))
        finally:
            setattr(owner, name, original)
        assert name in text and note in text, text
        restored = feedback(chapter, number, solution)
        assert restored.correct and note not in str(restored), str(restored)


# --- feedback that shows the gap ----------------------------------------------------------------

def test_near_misses_show_the_gap_and_the_tolerance():
    ex30 = MODULES["30"]
    eps = feedback("30", 13, lambda s: (w := ex30.E13.solution()(s)) * w.sum(-1, keepdims=True)
                   / (w.sum(-1, keepdims=True) + 1e-8))
    assert "при допуске 1e-09" in str(eps) and "отличие" in str(eps) and "+ε" in str(eps), str(eps)
    numbers = re.findall(r"получено (\S+), у библиотеки (\S+);", str(eps))
    assert numbers and numbers[0][0] != numbers[0][1], "the two numbers differ where they are shown"
    f32 = str(feedback("30", 9, lambda x, h: ex30.E9.solution()(x, h).astype(np.float32)))
    assert "тип float32, у библиотеки float64" in f32, f32
    count = str(feedback("31", 9, lambda d, h, f: 9))   # a scalar as a scalar, without the library's count
    assert "получено 9:" in count and "у библиотеки" not in count, count


def test_the_numbers_the_solution_of_30_10_quotes_are_the_checkers():
    """The folded solution quotes the reference at the precision it prints; the checker computes it."""
    ex30 = MODULES["30"]
    cell = next(cell.source for cell in load(MAIN_PAGES["30"]).cells if "{solution} ch30-ex10" in cell.source)
    prose = cell.split("```python")[0]
    right = ex30.E10.solution()
    for quoted in (f"в среднем {right['top_dh']:.3f}", f"— {right['top_dmodel']:.3f}:",
                   f"\\approx{right['std_dmodel']:.3f}", f"1/8={1 / 8:.3f}"):
        assert quoted in prose, quoted


def test_the_pass_counter_counts_hidden_cases():
    text = str(feedback("30", 14, MODULES["30"].E14.mistakes["no_offset"]))   # right at offset 0 only
    assert "верных случаев: 1 из 4" in text, text


def test_huge_values_are_shortened_everywhere():
    for chapter, number in CASES:
        text = str(feedback(chapter, number, 10**400)) + str(feedback(chapter, number, {"x": 10**400}))
        assert "0" * 30 not in text, text


@pytest.mark.parametrize(("chapter", "number"), CASES)
def test_a_wrong_call_prints_a_usage_line(chapter, number, capsys):
    check = getattr(MODULES[chapter], f"check_{number}")
    for call in (lambda: check(), lambda: check(1, 2), lambda: check(answer=1)):
        assert call() is None
        out = capsys.readouterr().out
        assert out.startswith(f"Упражнение {chapter}.{number}: вызов — ex{chapter}.check_{number}(answer)"), out


@pytest.mark.parametrize(("chapter", "number"), CASES)
def test_check_prints_lines_that_fit_the_book_and_returns_nothing(chapter, number, capsys):
    check = getattr(MODULES[chapter], f"check_{number}")
    for answer in [None, exercise(chapter, number).solution(), *wrong_answers(chapter, number)]:
        assert check(answer) is None
        out = capsys.readouterr().out
        assert out.count(f"Упражнение {chapter}.{number}: ") == 1
        assert all(len(line) <= WIDTH for line in out.splitlines()), out


@pytest.mark.parametrize(("chapter", "number"), CASES)
def test_hints_name_what_the_notebook_imports(chapter, number):
    alias, module = CHAPTERS[chapter], MODULES[chapter]
    for answer in [None, exercise(chapter, number).solution(), *wrong_answers(chapter, number)]:
        for prefix, name in re.findall(r"\b((?:ch|ex)\d\d)\.([A-Za-z_]\w*)", str(feedback(chapter, number, answer))):
            assert prefix == alias and hasattr(module, name), f"{prefix}.{name}"


# --- no answer by elimination ----------------------------------------------------------------------

@pytest.mark.parametrize(("chapter", "number"), QUESTIONS)
def test_no_wrong_answer_names_the_right_one(chapter, number):
    """Whatever a learner tries, one answer after another, no wrong field's message states its
    right value, and no feedback says what once gave the answer away (``SECRETS``)."""
    item = exercise(chapter, number)
    for answer in wrong_answers(chapter, number):
        result, given = feedback(chapter, number, answer), short(answer, 10**4)
        told = str(result)
        for echo in sorted(echoes(answer), key=len, reverse=True):   # the learner's own values are no secret
            told = told.replace(echo, "")
        for secret in SECRETS.get((chapter, number), []):
            assert not re.search(secret, told), f"{answer!r} tells {secret!r}:\n{result}"
        for field in item.fields:
            right = short(field.expected())
            for line in result.items:
                if line.label == item.label(field.key) and line.status != "ok" and len(right) > 3 \
                        and right not in given:   # the learner's own value echoed is no secret
                    assert right not in line.message, f"{answer!r}:\n{result}"


def echoes(answer: object) -> set[str]:
    """How feedback shows the values an answer holds."""
    if isinstance(answer, dict):
        return set().union(*(echoes(value) for value in answer.values())) if answer else set()
    if isinstance(answer, (list, tuple, set, frozenset)):
        return set().union({short(answer)}, *(echoes(value) for value in answer))
    return {short(answer), str(answer)}


BLIND_TABLES = [case for case in QUESTIONS if exercise(*case).blind]


@pytest.mark.parametrize(("chapter", "number"), BLIND_TABLES)
def test_a_blind_table_tells_only_whether_the_answer_is_right(chapter, number):
    """Whatever the right labels, a wrong answer gets the same feedback, word for word: no field is marked,
    nothing is counted (one try tells one bit, not one bit a field)."""
    item, answers = exercise(chapter, number), wrong_answers(chapter, number)
    domains = [getattr(field.read, "allowed", ()) for field in item.fields]
    assert all(domains), "a blind table is one of labels"
    twins = []
    for shift in range(1, max(map(len, domains))):
        moved = [dataclasses.replace(field, right=domain[(domain.index(field.right) + shift) % len(domain)])
                 for field, domain in zip(item.fields, domains, strict=True)]
        twins.append(dataclasses.replace(item, fields=tuple(moved)))
    for answer in answers:
        result = feedback(chapter, number, answer)
        assert not any(line.status == "ok" for line in result.items) or result.correct, str(result)
        assert "верных пунктов" not in str(result), str(result)
        for twin in twins:
            other = twin.feedback(answer)
            if not (result.correct or other.correct):
                assert str(other) == str(result), f"{answer!r}:\n{result}\n---\n{other}"


def test_a_blind_wrong_answer_restates_every_label_as_its_claim():
    all_ok = feedback("30", 1, dict.fromkeys((1, 2, 3, 4, 6), "ok"))
    assert [line.status for line in all_ok.items] == ["claim"] * 5, str(all_ok)
    assert all_ok.status == COMMON["claims"] and "6 / 4" in str(all_ok), str(all_ok)


@pytest.mark.parametrize(("chapter", "number"), QUESTIONS)
def test_a_wrong_choice_is_answered_alike_whatever_the_right_one(chapter, number):
    """For a field of few possible values (options, labels), the message for a wrong value does not
    change when another value is made the right one: trying values tells only which are wrong."""
    item = exercise(chapter, number)
    for index, field in enumerate(item.fields):
        domain = [1, 2, 3, 4] if field.read is read_option else getattr(
            field.read, "numbers", getattr(field.read, "allowed", ()))     # options 1-5 (31.13, 31.14) or labels
        for other in (value for value in domain if value != field.right):
            moved = dataclasses.replace(field, right=other)
            twin = dataclasses.replace(item, fields=(*item.fields[:index], moved, *item.fields[index + 1:]))
            for value in (v for v in domain if v not in (field.right, other)):
                assert item.judge(field, value) == twin.judge(moved, value), (field.key, value, other)


@pytest.mark.parametrize(("chapter", "number"), sorted(BLIND))
def test_a_blind_function_is_not_told_the_reference(chapter, number):
    """31.9 once printed the library's count for every hidden case (0 everywhere showed 120, 752, 336,
    2976: enough to fit the formula 31.5 asks for); 31.12's feedback must not show the Jacobian. Those
    feedbacks name the failing cases, never a value of the reference."""
    item = exercise(chapter, number)
    values = {value for arguments in item.cases() for value in np.ravel(item.reference(*arguments))}
    shown = {f"{value:.4g}" for value in values if abs(value) >= 1e-3} - {"0", "1", "-1"}
    for answer in BLIND[(chapter, number)]:
        text = str(feedback(chapter, number, answer))
        leaked = [value for value in shown if re.search(rf"(?<![\d.]){re.escape(value)}(?![\d])", text)]
        assert not leaked and "у библиотеки" not in text, f"{leaked}:\n{text}"


def test_the_elimination_checks_catch_a_leaky_field():
    """The two tests above fail on what chapter 30's checker said before (issue 18)."""
    leaky = dataclasses.replace(exercise("30", 1).fields[3], rules=(
        lambda v, right: v == "odd" and right == "indivisible" and "leak",))
    item = dataclasses.replace(exercise("30", 1), fields=(leaky,), blind=False)
    moved = dataclasses.replace(leaky, right="ok")
    twin = dataclasses.replace(item, fields=(moved,))
    assert item.judge(leaky, "odd") != twin.judge(moved, "odd")


# --- the tables against the package and the notebooks --------------------------------------------

def test_the_references_of_chapter_30_are_the_library():
    ex30 = MODULES["30"]
    for x, heads in ex30.E9.cases():
        assert np.array_equal(ex30.E9.reference(x, heads), split_heads(Tensor(x), heads).value)
    for (scores,) in ex30.E13.cases():
        assert np.allclose(ex30.E13.reference(scores), causal_softmax(Tensor(scores)).value, rtol=0, atol=1e-15)
    for x, offset, base in ex30.E14.cases():
        rope = RotaryEmbedding(x.shape[1], offset + x.shape[0], base)
        assert np.allclose(ex30.E14.reference(x, offset, base), rope.rotate(Tensor(x), offset).value, atol=1e-14)
    for x, *weights, heads, base in ex30.E12.cases():
        layer = MultiHeadAttention(*(Parameter(f"w{i}", w) for i, w in enumerate(weights)), heads, x.shape[1], base)
        assert np.allclose(ex30.E12.reference(x, *weights, heads, base), layer.forward(Tensor(x)).output.value,
                           rtol=0, atol=1e-14)


def test_each_slip_of_the_whole_layer_gets_its_message():
    """30.12, written as a learner writes it (apart from the reference): right, then with each named slip
    (no 1/sqrt(d_h), sqrt(d_model), reshape without transpose, RoPE on V, no mask, softmax over the queries,
    no W_O) told by that slip's message; NaN is told too, and no wrong feedback shows a reference value."""
    item = exercise("30", 12)
    assert set(item.mistakes) == set(MHA_SLIPS)
    assert feedback("30", 12, learner_mha).correct
    for slip in MHA_SLIPS:
        result = feedback("30", 12, lambda *args, _slip=slip: learner_mha(*args, slip=_slip))
        assert not result.correct and result.hint == item.say(slip), f"{slip}:\n{result}"
        assert "у библиотеки" not in str(result), str(result)
    nan = feedback("30", 12, lambda *args: learner_mha(*args) * np.nan)
    assert nan.hint == item.say("not_finite"), str(nan)


@pytest.mark.parametrize(("chapter", "number"), CODE)
def test_the_setup_names_a_feedback_may_ask_for_are_the_setup_cells(chapter, number):
    """A code exercise's checker may ask for the names of the setup cells: the page it is on defines them."""
    namespace = setup_namespace(page_of(chapter, number))
    assert set(MODULES[chapter].SETUP) <= set(namespace)


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_text_a_table_names_exists_and_every_text_is_named(chapter):
    source = Path(MODULES[chapter].__file__).read_text(encoding="utf-8")
    used = set(re.findall(r'"([a-z_0-9]+(?:\.[a-z_0-9]+)?)"', source))
    made = set(re.findall(r'f"([a-z_0-9]+)\.\{', source))      # keys made as f"early.{step}"
    for number, item in MODULES[chapter].EXERCISES.items():
        keys = set(item.text)
        named = {key for key in keys if key in used
                 or key in ("hint", "ok", "wrong", "label", "cases", "right", "same", "also_wrong")
                 or (getattr(item, "blind", False) and key.startswith("claim."))
                 or key.rsplit(".", 1)[-1] in ("ok", "wrong", "hint") or key.split(".")[-1].isdigit()
                 or key.split(".")[0] in made}
        assert keys == named, f"{chapter}.{number}: texts no table names: {sorted(keys - named)}"
        wanted = [key for field in getattr(item, "fields", ()) for key in field.mistakes.values()]
        wanted += list(getattr(item, "mistakes", {}))
        assert not [key for key in wanted if key not in keys], f"{chapter}.{number}: missing texts"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_module_runs_without_a_warning(chapter):
    done = subprocess.run([sys.executable, "-m", f"llm_from_scratch.ch{chapter}.exercises"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0 and done.stderr == "" and done.stdout == ""


# --- each exercise cell alone in a kernel, as a learner runs it ----------------------------------

def exercise_cells(chapter: str) -> dict[int, str]:
    pattern = re.compile(rf"\b{CHAPTERS[chapter]}\.check_(\d+)\(")
    return {int(match[1]): cell.source for page in NOTEBOOKS[chapter] for cell in load(page).cells
            if cell.cell_type == "code" and (match := pattern.search(cell.source))}


def with_solution(source: str, solution: str) -> str:
    """The exercise cell with its stub lines replaced by the solution, as a learner fills it in."""
    lines = source.splitlines()
    imports = [line for line in lines if line.startswith("from llm_from_scratch")]
    return "\n".join([*imports, solution.rstrip(), lines[-1]])


@pytest.fixture(scope="module")
def kernels():
    """Per page with exercises a kernel that ran the setup cells; one kernel that ran nothing (reset before
    every cell) serves every page."""
    with contextlib.ExitStack() as stack:
        started = {"after nothing": stack.enter_context(Kernel(BOOK))}
        for page in sorted({page_of(chapter, number) for chapter, number in CASES}):
            setup = stack.enter_context(Kernel(BOOK))
            nb = load(page)
            for index in code_indices(nb, setup_cells(nb)):
                assert not errors(setup.run(nb.cells[index].source))
            started[page] = setup
        yield started


@pytest.mark.parametrize("state", ["after nothing", "after the setup cells"])
@pytest.mark.parametrize(("chapter", "number"), CASES)
def test_the_exercise_cell_runs_alone(chapter, number, state, kernels):
    kernel = kernels[state] if state == "after nothing" else kernels[page_of(chapter, number)]
    source = exercise_cells(chapter)[number]
    header = f"Упражнение {chapter}.{number}: "
    for code, wanted in ((source, "ответ ещё не заполнен."), (with_solution(
            source, notebook_solutions(chapter)[number]), "верно.")):
        if state == "after nothing":
            kernel.run("%reset -f")
        outputs = kernel.run(code)
        text = visible_text(outputs)
        assert not errors(outputs), f"{state}: {errors(outputs)}"
        setup_asked = state == "after nothing" and literal(exercise(chapter, number), "setup")[:30] in text
        assert text.startswith(header + wanted) or (setup_asked and text.count("\n") <= 2), f"{state}:\n{text}"


def test_a_kernel_stays_usable_after_the_time_limit_and_an_interrupt(kernels):
    kernel = kernels["after nothing"]
    kernel.run("%reset -f")
    started = time.perf_counter()
    text = visible_text(kernel.run("from llm_from_scratch.ch30 import exercises as ex30\n"
                                   "def my_causal_softmax(scores):\n    while True:\n        pass\n"
                                   "ex30.check_13(my_causal_softmax)"))
    assert time.perf_counter() - started < checking.LIMIT + 5
    assert "не завершилась за 3 с" in text, text
    assert visible_text(kernel.run("import time\nt = time.time()\nwhile time.time() - t < 1:\n    pass\n"
                                   "print(sum(range(10)))")) == "45\n"        # no late exception
    timer = threading.Timer(1.0, kernel.manager.interrupt_kernel)
    timer.start()
    outputs = kernel.run("def slow(scores):\n    for _ in range(200):\n        time.sleep(0.01)\n"
                         "ex30.check_13(slow)")
    timer.join()
    assert [o["ename"] for o in outputs if o["output_type"] == "error"] == ["KeyboardInterrupt"]
    assert visible_text(kernel.run("print('ядро работает')")) == "ядро работает\n"


def test_a_huge_set_or_an_unreadable_fraction_gets_feedback_quickly(capsys):
    """A million row numbers: told there are too many, at once (the list is not printed); a fraction
    with more digits than int() reads: told it is not a number."""
    ex31 = importlib.import_module("llm_from_scratch.ch31.exercises")
    start = time.perf_counter()
    ex31.check_4({"rows": range(10**6), "part": 1})
    ex31.check_4({"rows": list(range(20)), "part": 1})
    ex31.check_5("1/" + "9" * 5000)
    out = capsys.readouterr().out
    assert time.perf_counter() - start < 5
    assert "(1000000)" in out and "999998" not in out
    assert "[5, 6, 7, 8, 9, 10, 11, 12, …]" in out
    assert "ValueError" not in out and len(out) < 2000
