"""The chapters forgive a learner's habits: each rule runs the notebooks of book/.

* The first code cell prints how to install the package when it is missing
  (README.md, «Rules for the notebooks», fixes the message) and nothing
  when it is installed.
* Each ``##`` section runs after the setup cells alone (the cells before the
  first ``##`` heading), in a kernel emptied by ``%reset -f``: only cells
  tagged ``raises-exception`` may raise.
* Every code cell, run twice in a row, shows the same outputs (all output
  types, PNG bytes included; execution counts aside).
* Every exercise check shows its feedback once whatever the learner does with
  the result: a plain call, a trailing ``;``, an assignment. The checks are
  those the notebook calls and ``check_N`` for every exercise N of the
  chapter's ``EXERCISES``.

The second and third rules share one kernel per notebook (``habit_problems``):
each cell runs twice as its section comes, so a notebook costs two runs, not a
kernel per section. Each test starts its own kernels, so pytest-xdist can
spread them (``make habits``).
``test_notebook_rules.py`` shows every check failing on a broken notebook.
"""

from __future__ import annotations

import importlib

import pytest
from notebook_rules import (
    CHAPTERS,
    called_checks,
    chapter_number,
    exercise_alias,
    feedback_problems,
    habit_problems,
    install_message_problems,
    load,
)


def checks_of(path) -> list[str]:
    chapter = chapter_number(path)
    module = importlib.import_module(f"llm_from_scratch.ch{chapter}.exercises")
    numbered = [f"check_{number}" for number in sorted(getattr(module, "EXERCISES", {}))]
    return sorted(set(numbered) | set(called_checks(load(path), exercise_alias(chapter))))


by_name = {"ids": lambda path: path.stem}
# The English edition's notebooks (book/en/) keep the section and run-twice rules too.
EDITIONS = CHAPTERS + sorted((CHAPTERS[0].parent / "en").glob("ch[0-9]*.ipynb"))
by_edition = {"ids": lambda path: f"en/{path.stem}" if path.parent.name == "en" else path.stem}


@pytest.mark.parametrize("path", CHAPTERS, **by_name)
def test_first_cell_says_how_to_install_the_package(path, tmp_path):
    problems = install_message_problems(load(path), cwd=tmp_path)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", EDITIONS, **by_edition)
def test_sections_run_alone_and_cells_show_the_same_when_run_twice(path):
    habits = habit_problems(load(path), cwd=path.parent)
    problems = habits.sections + [f"run twice: {p}" for p in habits.run_twice]
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems)


@pytest.mark.parametrize("path", CHAPTERS, **by_name)
def test_checks_show_feedback_whatever_the_learner_does(path, tmp_path):
    chapter = chapter_number(path)
    alias = exercise_alias(chapter)
    checks = checks_of(path)
    assert checks, f"{path.name} calls no {alias}.check…(…) and its module has no EXERCISES"
    problems = feedback_problems(
        f"from llm_from_scratch.ch{chapter} import exercises as {alias}",
        alias, checks, header=f"Упражнение {chapter}.", cwd=tmp_path,
    )
    assert not problems, "\n".join(problems)
