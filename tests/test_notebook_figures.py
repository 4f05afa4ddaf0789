"""Every figure in the chapter notebooks has a name, a caption and an alt text."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = sorted(Path(__file__).resolve().parents[1].glob("book/ch*.ipynb"))
# A chapter is its main page and its section pages: book/ch30-*.ipynb.
CHAPTERS = sorted({re.match(r"ch(\d+)-", path.name)[1] for path in NOTEBOOKS})


def figure_cells(path: Path) -> list[dict]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [cell for cell in cells if any("image/png" in output.get("data", {})
                                          for output in cell.get("outputs", []))]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_every_figure_has_name_caption_and_alt_text(path):
    for cell in figure_cells(path):
        mystnb = cell["metadata"].get("mystnb", {})
        source = "".join(cell["source"])[:60]
        assert mystnb.get("figure", {}).get("caption", "").strip(), f"no caption: {source}"
        assert mystnb["figure"].get("name", "").startswith(f"fig-{path.name[:4]}-"), f"bad name: {source}"
        assert len(mystnb.get("image", {}).get("alt", "").strip()) >= 40, f"alt text too short: {source}"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_a_chapter_has_figures_with_names_of_its_own(chapter):
    names = [cell["metadata"]["mystnb"]["figure"]["name"]
             for path in NOTEBOOKS if path.name.startswith(f"ch{chapter}-") for cell in figure_cells(path)]
    assert len(names) >= 6, f"chapter {chapter} needs at least six figures over its pages: {names}"
    assert len(names) == len(set(names)), f"chapter {chapter}: figure names repeat (a {{numref}} needs one target)"
