"""Figure cells of the chapter notebooks: caption, unique name, and alt text in sync with the plot module."""

import json
from pathlib import Path

import pytest

from llm_from_scratch.notebook import figure_alt_texts

NOTEBOOKS = sorted((Path(__file__).parents[1] / "book").glob("ch*.ipynb"))


def load(path):
    return json.loads(path.read_text(encoding="utf-8"))


def test_there_are_chapter_notebooks():
    assert [p.name for p in NOTEBOOKS] == ["ch30-multi-head-attention.ipynb", "ch31-decoder-block.ipynb"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_figure_has_caption_name_and_current_alt_text(path):
    notebook = load(path)
    figures = figure_alt_texts(notebook)
    assert len(figures) == 6  # figures a-f of each chapter
    names = [name for _, name, _ in figures]
    assert len(set(names)) == len(names) and all(n.startswith(f"fig-{path.stem[:4]}-") for n in names)
    for index, name, expected in figures:
        metadata = notebook["cells"][index]["metadata"]["mystnb"]
        assert metadata["figure"]["caption"].strip(), name
        assert metadata["image"]["alt"] == expected, (
            f"{name}: stored alt text differs from the plot module's; run "
            f"`python -m llm_from_scratch.notebook {path.relative_to(path.parents[1])}`")
