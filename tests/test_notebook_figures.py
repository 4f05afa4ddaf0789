"""Every figure in the chapter notebooks has a name, a caption and an alt text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted(Path(__file__).resolve().parents[1].glob("book/ch*.ipynb"))


def figure_cells(path: Path) -> list[dict]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [cell for cell in cells if any("image/png" in output.get("data", {})
                                          for output in cell.get("outputs", []))]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_every_figure_has_name_caption_and_alt_text(path):
    cells = figure_cells(path)
    assert len(cells) >= 6, f"{path.name}: the chapter needs at least six figures"
    names = []
    for cell in cells:
        mystnb = cell["metadata"].get("mystnb", {})
        source = "".join(cell["source"])[:60]
        assert mystnb.get("figure", {}).get("caption", "").strip(), f"no caption: {source}"
        assert mystnb["figure"].get("name", "").startswith(f"fig-{path.name[:4]}-"), f"bad name: {source}"
        assert len(mystnb.get("image", {}).get("alt", "").strip()) >= 40, f"alt text too short: {source}"
        names.append(mystnb["figure"]["name"])
    assert len(names) == len(set(names)), f"{path.name}: figure names repeat"
