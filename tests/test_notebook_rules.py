"""The notebook checks themselves: they pass a notebook that keeps the
conventions and catch every defect of one that breaks them.

``fixtures/ch30-good.ipynb`` keeps every rule; ``fixtures/ch30-bad.ipynb``
breaks each once (a bare import as the first cell, another name for the
exercises, a shared list edited in place, a section that needs a name from
another section, an untagged error, lines wider than 76 characters).
``fixtures/feedback_prints.py`` prints its feedback, ``feedback_returns.py``
only returns it.
"""

from __future__ import annotations

import nbformat
import pytest
from notebook_rules import (
    FIXTURES,
    Habits,
    alias_problems,
    feedback_problems,
    habit_problems,
    install_message_problems,
    listing_problems,
    load,
    width_problems,
)

GOOD = load(FIXTURES / "ch30-good.ipynb")
BAD = load(FIXTURES / "ch30-bad.ipynb")


def test_static_rules_pass_the_good_notebook():
    assert width_problems(GOOD) == []
    assert alias_problems(GOOD, "30", "ex30") == []


def test_static_rules_catch_the_bad_notebook():
    widths = width_problems(BAD)
    assert len(widths) == 2, widths
    assert "code block line of 126 characters" in widths[0]
    assert "output line of 80 characters" in widths[1]
    assert alias_problems(BAD, "30", "ex30") == [
        "cell 2 ('from llm_from_scratch.ch30 import example as ch30'): "
        "`from llm_from_scratch.ch30 import exercises` binds 'exercises'; the notebook's name for it is 'ex30'",
        "the setup cells do not run `from llm_from_scratch.ch30 import exercises as ex30`",
    ]


def test_the_listing_rule_reads_the_code_as_it_is_now():
    """A ``show_source`` listing is checked by rendering it again, whatever output the notebook stores."""
    cell = nbformat.v4.new_code_cell("%matplotlib inline\nfrom llm_from_scratch.book.formats import wrap\n"
                                     "show_source(wrap)")
    problems = listing_problems(nbformat.v4.new_notebook(cells=[cell]))
    assert problems and all("listing line of" in problem for problem in problems), problems
    assert listing_problems(GOOD) == []


def test_install_message(tmp_path):
    assert install_message_problems(GOOD, tmp_path) == []
    problems = install_message_problems(BAD, tmp_path)
    assert len(problems) == 1 and "ModuleNotFoundError" in problems[0], problems


def test_sections_and_run_twice():
    assert habit_problems(GOOD, FIXTURES) == Habits([], [])
    bad = habit_problems(BAD, FIXTURES)
    assert bad.sections == [
        "section «Depends on another section»: cell 8 ('print(step * 2)') raised "
        "NameError: name 'step' is not defined",
        "section «Depends on another section»: cell 9 ('1 / 0') raised "
        "ZeroDivisionError: division by zero",
    ]
    assert bad.run_twice == [
        "cell 4 ('history.append(len(history))  # edits a shared list in place') "
        "shows other outputs when run again: output 0: '[0]\\n' then '[0, 1]\\n'",
    ]


@pytest.mark.parametrize(("module", "expected"), [
    ("feedback_prints", []),
    ("feedback_returns", ["`ex99.check_1(...);` shows the feedback 0 times (not once): ''",
                          "`_ = ex99.check_1(...)` shows the feedback 0 times (not once): ''",
                          "`answer = ...\nresult = ex99.check_1(answer)` shows the feedback 0 times (not once): ''"]),
])
def test_feedback_display(module, expected, tmp_path):
    import_code = f"import sys\nsys.path.insert(0, {str(FIXTURES)!r})\nimport {module} as ex99"
    assert feedback_problems(import_code, "ex99", ["check_1"], "Упражнение 99.", tmp_path) == expected
