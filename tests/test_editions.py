"""Every word a reader sees lives in an edition's text modules (``text/<edition>/``), chosen by one switch,
``LLM_FROM_SCRATCH_EDITION``: the code that computes, draws or checks holds no prose of its own, every edition
defines the same texts as the Russian one, and an unknown edition is one clear error."""

import ast
import importlib.util
import os
import re
import string
import subprocess
import sys
from pathlib import Path

import pytest

from llm_from_scratch import text

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "llm_from_scratch"
TEXT = PACKAGE / "text"
CYRILLIC = re.compile("[\u0400-\u04ff]")


def code_modules() -> list[Path]:
    """Every module of the package but the editions' text modules (``text/<edition>/*.py``)."""
    return [path for path in sorted(PACKAGE.rglob("*.py")) if path.parent.parent != TEXT]


def cyrillic_lines(path: Path) -> list[int]:
    """The lines of the string constants (docstrings and f-string parts too) that hold a Cyrillic letter."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return sorted(node.lineno for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and isinstance(node.value, str) and CYRILLIC.search(node.value))


def tables(folder: Path) -> dict[str, dict]:
    """The ``TEXT`` table of every module of an edition's folder, by module name (``__init__`` included)."""
    found = {}
    for path in sorted(folder.glob("*.py")):
        spec = importlib.util.spec_from_file_location(f"edition_{folder.name}_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        found[path.stem] = module.TEXT
    return found


def fields(entry: str | tuple[str, ...]) -> list[tuple[int, str]]:
    """The ``{fields}`` a text (or each part of a ``(text, hint)`` pair) has ``format`` fill."""
    parts = entry if isinstance(entry, tuple) else (entry,)
    return sorted({(index, name) for index, part in enumerate(parts)
                   for _, name, _, _ in string.Formatter().parse(part) if name is not None})


def differences(reference: dict[str, dict], edition: dict[str, dict]) -> list[str]:
    """What an edition's tables lack, add or fill differently from the reference edition's."""
    found = [f"no module {name}" for name in sorted(reference.keys() - edition.keys())]
    found += [f"module {name} is not in the reference" for name in sorted(edition.keys() - reference.keys())]
    for name in sorted(reference.keys() & edition.keys()):
        ours, theirs = reference[name], edition[name]
        found += [f"{name}: no key {key!r}" for key in sorted(ours.keys() - theirs.keys())]
        found += [f"{name}: key {key!r} is not in the reference" for key in sorted(theirs.keys() - ours.keys())]
        found += [f"{name}: {key!r} fills {fields(theirs[key])}, the reference {fields(ours[key])}"
                  for key in sorted(ours.keys() & theirs.keys())
                  if (fields(ours[key]), isinstance(ours[key], tuple)) != (fields(theirs[key]),
                                                                          isinstance(theirs[key], tuple))]
    return found


# --- no words in the code ------------------------------------------------------------------

def test_no_module_outside_the_editions_holds_a_cyrillic_string():
    found = {str(path.relative_to(PACKAGE)): lines for path in code_modules() if (lines := cyrillic_lines(path))}
    assert not found, "Cyrillic string constants outside text/<edition>/: " + "; ".join(
        f"{name}: {len(lines)} (lines {', '.join(map(str, lines))})" for name, lines in found.items())


def test_the_walk_reads_every_code_module_and_finds_cyrillic_where_it_is():
    walked = {str(path.relative_to(PACKAGE)) for path in code_modules()}
    assert {"tensor.py", "ch30/figures.py", "ch31/figures.py", "book/figure_style.py", "text/__init__.py"} <= walked
    assert not any(name.startswith("text/ru/") for name in walked)
    assert cyrillic_lines(TEXT / "ru" / "ch30_figures.py")      # docstrings and values alike
    assert cyrillic_lines(TEXT / "ru" / "ch31.py")


# --- every edition has the same texts ------------------------------------------------------

@pytest.mark.parametrize("edition", text.EDITIONS)
def test_every_edition_defines_the_texts_of_the_russian_one(edition):
    assert differences(tables(TEXT / "ru"), tables(TEXT / edition)) == []


def test_a_text_an_edition_lacks_or_fills_differently_is_named():
    russian = tables(TEXT / "ru")
    edition = {name: dict(table) for name, table in russian.items() if name != "figure_style"}
    del edition["ch30_figures"]["head"]
    edition["ch31_figures"]["training_curves.loss"] = "running loss"      # without its {window}
    edition["ch31"]["1.repeated"] = "a step given twice"                  # without its hint
    edition["ch31_figures"]["extra"] = "!"
    assert differences(russian, edition) == [
        "no module figure_style",
        "ch30_figures: no key 'head'",
        "ch31: '1.repeated' fills [], the reference [(0, 'step')]",
        "ch31_figures: key 'extra' is not in the reference",
        "ch31_figures: 'training_curves.loss' fills [], the reference [(0, 'window')]",
    ]


def test_the_editions_are_the_folders_of_text():
    folders = tuple(sorted(path.name for path in TEXT.iterdir() if (path / "__init__.py").exists()))
    assert (text.EDITIONS, "ru" in folders) == (folders, True)


def test_exercise_30_5_reads_the_letters_the_edition_types_for_a_b_c_d():
    from llm_from_scratch.ch30 import exercises

    typed = dict(zip("abcd", text.texts("ch30")["5.lookalikes"], strict=True))
    answer = {**exercises.EXERCISES[5].solution(), "y2": f"{typed['a']} + {typed['c'].upper()}",
              "concat": [typed[letter] for letter in "abcd"]}
    assert exercises.EXERCISES[5].feedback(answer).correct
    assert not exercises.EXERCISES[5].feedback({**answer, "y2": f"{typed['b']} + {typed['d']}"}).correct


# --- an unknown edition: one typed error, one line from the command line --------------------

def run(edition: str, *arguments: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, "LLM_FROM_SCRATCH_EDITION": edition}
    return subprocess.run([sys.executable, *arguments], env=environment, capture_output=True, text=True,
                          timeout=120)


EXPECTED = "LLM_FROM_SCRATCH_EDITION must name an edition of the book ({}), got 'xx'".format(", ".join(text.EDITIONS))


def test_an_unknown_edition_is_an_edition_error_naming_the_editions():
    reading = ("from llm_from_scratch.errors import EditionError\nfrom llm_from_scratch.text import texts\n"
               "try:\n    texts('ch30_figures')\nexcept EditionError as error:\n    print(error)\n")
    result = run("xx", "-c", reading)
    assert (result.returncode, result.stdout, result.stderr) == (0, EXPECTED + "\n", "")


def test_a_figure_drawn_in_an_unknown_edition_raises_the_edition_error():
    drawing = ("from llm_from_scratch.ch31 import figures\nfigures.attention_maps([[[1.0]]])\n")
    result = run("xx", "-c", drawing)
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1] == f"llm_from_scratch.errors.EditionError: {EXPECTED}"


@pytest.mark.parametrize("chapter", ["30", "31"])
@pytest.mark.parametrize("flags", [[], ["--trace"]])
def test_the_command_line_in_an_unknown_edition_ends_with_one_line(chapter, flags):
    result = run("xx", "-m", f"llm_from_scratch.ch{chapter}", *flags)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr.splitlines() == [f"python -m llm_from_scratch.ch{chapter}: {EXPECTED}"]
