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


def png_size(data: str) -> tuple[int, int]:
    """Width and height from a base64 PNG's IHDR chunk."""
    import base64
    import struct

    head = base64.b64decode(data[:64])
    assert head[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", head[16:24])


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_every_figure_is_stored_at_twice_the_width_it_is_shown_at(path):
    """HiDPI: the PNG has twice the pixels of the width the page gives it (the
    output's ``width`` metadata, which myst-nb writes into the <img>); the width
    shown fits the 672 px column."""
    problems = []
    for cell in figure_cells(path):
        for output in cell["outputs"]:
            if "image/png" not in output.get("data", {}):
                continue
            width, height = png_size(output["data"]["image/png"])
            shown = output.get("metadata", {}).get("image/png", {})
            name = cell["metadata"].get("mystnb", {}).get("figure", {}).get("name", "?")
            halves = shown.get("width") is not None and shown.get("height") is not None
            if not halves or abs(2 * shown["width"] - width) > 1 or abs(2 * shown["height"] - height) > 1:
                problems.append(f"{name}: PNG {width} x {height} px, shown at {shown or 'its own size'}")
            elif shown["width"] > 672:
                problems.append(f"{name}: shown {shown['width']} px wide, wider than the 672 px column")
    assert not problems, "\n".join(problems)
