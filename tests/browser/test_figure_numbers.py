"""Figures are numbered by chapter: the figures of chapter 31 read «Рис. 31.1», «Рис. 31.2», ...
on its main page and on through its section pages.

Sphinx alone numbers them across the book (chapter 31 would start at «Рис. 8»);
book/_ext/russian_labels.py renumbers them. A reference in the text ({numref}) must
show the number of the caption it links to.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from book_site import CHAPTER_PAGES, MAIN_PAGES, chapter_of, page_path

FIGURE = re.compile(r'<figure[^>]*\bid="([^"]+)"[^>]*>.*?<span class="caption-number">Рис\. ([^<]+?) </span>', re.S)
REFERENCE = re.compile(
    r'<a class="reference internal" href="([^"]*#[^"]+)"><span class="std std-numref">Рис\. ([^<]+)</span>')


@pytest.mark.parametrize("main", MAIN_PAGES)
def test_figures_are_numbered_within_their_chapter(built_site, main):
    """Over the chapter's pages in reading order (main page, then its sections):
    30.1, 30.2, ... with no gap and no repeat."""
    chapter = chapter_of(main)
    pages = [docname for docname in CHAPTER_PAGES if chapter_of(docname) == chapter]
    numbers = [(docname, number) for docname in pages
               for _, number in FIGURE.findall(page_path(docname).read_text(encoding="utf-8"))]
    assert FIGURE.findall(page_path(main).read_text(encoding="utf-8")), f"{main}: no numbered figure found"
    expected = [f"{chapter}.{place}" for place in range(1, len(numbers) + 1)]
    assert [number for _, number in numbers] == expected, numbers


@pytest.mark.parametrize("docname", CHAPTER_PAGES)
def test_references_show_the_number_of_their_figure(built_site, docname):
    """A {numref} shows the number of the caption it links to, on its page or on another page of the book."""
    caption = {}
    for other in CHAPTER_PAGES:
        for target, number in FIGURE.findall(page_path(other).read_text(encoding="utf-8")):
            caption[f"{Path(other).name}.html#{target}"] = number
    html = page_path(docname).read_text(encoding="utf-8")
    references = [(href if not href.startswith("#") else f"{Path(docname).name}.html{href}", shown)
                  for href, shown in REFERENCE.findall(html)]
    wrong = [(target, shown, caption.get(target)) for target, shown in references if caption.get(target) != shown]
    assert not wrong, f"{docname}: (figure, number shown, caption number): {wrong}"
