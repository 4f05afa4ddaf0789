"""Figures are numbered by chapter: the figures of chapter 31 read «Рис. 31.1», «Рис. 31.2», ...
(«Figure 31.1» in the English edition) on its main page and on through its section pages.

Sphinx alone numbers them across the book (chapter 31 would start at «Рис. 8»);
book/_ext/russian_labels.py renumbers them and gives the English edition its word. A
reference in the text ({numref}) must show the number of the caption it links to.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from book_site import EVERY_CHAPTER_PAGE, EVERY_MAIN_PAGE, chapter_of, edition_of, page_path

# A figure's label in each edition (Sphinx's Russian «Рис.», the book's English «Figure»).
LABELS = {"ru": r"Рис\.", "en": "Figure"}


def figure(docname: str) -> re.Pattern:
    label = LABELS[edition_of(docname).language]
    return re.compile(rf'<figure[^>]*\bid="([^"]+)"[^>]*>.*?<span class="caption-number">{label} ([^<]+?) </span>',
                      re.S)


def reference(docname: str) -> re.Pattern:
    label = LABELS[edition_of(docname).language]
    return re.compile(rf'<a class="reference internal" href="([^"]*#[^"]+)"><span class="std std-numref">'
                      rf'{label} ([^<]+)</span>')


def edition_pages(docname: str) -> list[str]:
    """The chapter pages of the page's edition."""
    return [other for other in EVERY_CHAPTER_PAGE if edition_of(other) == edition_of(docname)]


@pytest.mark.parametrize("main", EVERY_MAIN_PAGE)
def test_figures_are_numbered_within_their_chapter(built_site, main):
    """Over the chapter's pages in reading order (main page, then its sections):
    30.1, 30.2, ... with no gap and no repeat."""
    chapter = chapter_of(main)
    pages = [docname for docname in edition_pages(main) if chapter_of(docname) == chapter]
    numbers = [(docname, number) for docname in pages
               for _, number in figure(docname).findall(page_path(docname).read_text(encoding="utf-8"))]
    assert figure(main).findall(page_path(main).read_text(encoding="utf-8")), f"{main}: no numbered figure found"
    expected = [f"{chapter}.{place}" for place in range(1, len(numbers) + 1)]
    assert [number for _, number in numbers] == expected, numbers


@pytest.mark.parametrize("docname", EVERY_CHAPTER_PAGE)
def test_references_show_the_number_of_their_figure(built_site, docname):
    """A {numref} shows the number of the caption it links to, on its page or on another page of the book."""
    caption = {}
    for other in edition_pages(docname):
        for target, number in figure(other).findall(page_path(other).read_text(encoding="utf-8")):
            caption[f"{Path(other).name}.html#{target}"] = number
    html = page_path(docname).read_text(encoding="utf-8")
    references = [(href if not href.startswith("#") else f"{Path(docname).name}.html{href}", shown)
                  for href, shown in reference(docname).findall(html)]
    wrong = [(target, shown, caption.get(target)) for target, shown in references if caption.get(target) != shown]
    assert not wrong, f"{docname}: (figure, number shown, caption number): {wrong}"
