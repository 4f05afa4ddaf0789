"""Figures are numbered by chapter: the figures of chapter 31 read «Рис. 31.1», «Рис. 31.2», ...

Sphinx alone numbers them across the book (chapter 31 would start at «Рис. 8»);
book/_ext/russian_labels.py renumbers them. A reference in the text ({numref}) must
show the number of the caption it links to.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from book_site import CHAPTER_PAGES, page_path

FIGURE = re.compile(r'<figure[^>]*\bid="([^"]+)"[^>]*>.*?<span class="caption-number">Рис\. ([^<]+?) </span>', re.S)
REFERENCE = re.compile(
    r'<a class="reference internal" href="#([^"]+)"><span class="std std-numref">Рис\. ([^<]+)</span>')


@pytest.mark.parametrize("docname", CHAPTER_PAGES)
def test_figures_are_numbered_within_their_chapter(built_site, docname):
    html = page_path(docname).read_text(encoding="utf-8")
    chapter = re.match(r"ch(\d+)", Path(docname).name)[1]
    figures = FIGURE.findall(html)
    assert figures, f"{docname}: no numbered figure found"
    numbers = [number for _, number in figures]
    assert numbers == [f"{chapter}.{place}" for place in range(1, len(figures) + 1)], numbers


@pytest.mark.parametrize("docname", CHAPTER_PAGES)
def test_references_show_the_number_of_their_figure(built_site, docname):
    html = page_path(docname).read_text(encoding="utf-8")
    caption = dict(FIGURE.findall(html))
    references = REFERENCE.findall(html)
    wrong = [(target, shown, caption.get(target)) for target, shown in references
             if caption.get(target) != shown]
    assert not wrong, f"{docname}: (figure, number shown, caption number): {wrong}"
