"""Static rules of every chapter notebook in book/ and book/en/ (README.md, «Rules for the notebooks»).

* Widths: every line of code, of a code block in markdown and of a stored
  text output (stream, ``text/plain``, an error's traceback) is at most 76
  characters: a code block of the book holds 77 at a 1280 px window. So is
  every line of the listings ``show_source`` displays, as the code is now,
  and of the flat core (``src/llm_from_scratch/*.py``), which the book shows:
  this is the book's width rule, while ruff holds all code to 120.
* Names: the setup cells import the chapter module as ``chNN``, the figures
  as ``plotsNN`` and the exercises under the alias the exercise contract test
  uses (``ex30``, ``ex31``: ``tests/test_exercises.py``), so that the checks'
  hints name objects as the notebook knows them; no cell imports them under
  another name.
* No run times: a cell's metadata does not record when it ran (nbconvert's
  ``record_timing``), so re-running a notebook changes only what it printed.

``test_notebook_rules.py`` shows these checks failing on a broken notebook.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from notebook_rules import (
    CHAPTERS,
    MAX_COLUMNS,
    alias_problems,
    chapter_number,
    exercise_alias,
    listing_problems,
    load,
    width_problems,
)

CORE = sorted((Path(__file__).resolve().parents[1] / "src" / "llm_from_scratch").glob("*.py"))
# Both editions' notebooks: the English ones (book/en/, written from book/sources/) keep the same rules.
EDITIONS = CHAPTERS + sorted((Path(__file__).resolve().parents[1] / "book" / "en").glob("ch[0-9]*.ipynb"))

by_name = {"ids": lambda path: path.stem}
by_edition = {"ids": lambda path: f"{path.parent.name}/{path.stem}" if path.parent.name == "en" else path.stem}


def test_there_are_chapters():
    assert len(CHAPTERS) >= 2, f"chapter notebooks book/ch*.ipynb: {CHAPTERS}"


@pytest.mark.parametrize("path", EDITIONS, **by_edition)
def test_lines_fit_a_code_block(path):
    problems = width_problems(load(path))
    assert not problems, f"{len(problems)} lines wider than 76 characters:\n" + "\n".join(problems[:30])


@pytest.mark.parametrize("path", EDITIONS, **by_edition)
def test_the_listings_fit_a_code_block_as_the_code_is_now(path):
    problems = listing_problems(load(path))
    assert not problems, f"{len(problems)} lines wider than 76 characters:\n" + "\n".join(problems[:30])


@pytest.mark.parametrize("path", CORE, **by_name)
def test_the_core_fits_a_code_block(path):
    wide = [f"{path.name}:{number}: {len(line)} characters"
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if len(line) > MAX_COLUMNS]
    assert not wide, "\n".join(wide)


@pytest.mark.parametrize("path", EDITIONS, **by_edition)
def test_setup_imports_the_chapter_under_its_fixed_names(path):
    chapter = chapter_number(path)
    problems = alias_problems(load(path), chapter, exercise_alias(chapter))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", EDITIONS, **by_edition)
def test_cells_do_not_record_when_they_ran(path):
    timed = [index for index, cell in enumerate(load(path)["cells"]) if "execution" in cell.get("metadata", {})]
    assert not timed, (f"cells {timed} carry run times: re-run with "
                       "--ExecutePreprocessor.record_timing=False (README)")
