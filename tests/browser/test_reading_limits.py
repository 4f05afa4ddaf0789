"""What a reader can take in on the built pages, at a 1280 x 900 window.

For every page of both editions' tocs (generic over chapters):

* no code block, output block or table in the article scrolls sideways
  (``scrollWidth > clientWidth``): a line of code or output is at most 76
  characters, a table fits the 672 px column;
* at most 60 six-decimal numbers (``-?\\d+\\.\\d{6}``) are visible in the
  article's text; folded content (closed dropdowns, hidden outputs) does not
  count, since ``innerText`` leaves out what is not rendered;
* nothing scrolls sideways either once every fold is open (solutions, answers,
  hidden cells): a code block inside a dropdown is narrower than in the text;
* every figure is shown at half its pixel width (stored at 2x for HiDPI
  screens), not scaled further: the figure style keeps figures within the
  column, so every text in them stays at least 11 CSS px.

* a page is read in one sitting: at most 3,500 words of prose visible (code,
  outputs, formulas, solutions and folded answers left out, as the course's
  page-length tool counts them) and, on a chapter's main page, 4,500 with
  its folded answers.

Each page opens once for this module; the test that opens every fold runs last.
"""

from __future__ import annotations

import re

import pytest
from book_site import EVERY_MAIN_PAGE, EVERY_PAGE, wait_for_images

MAX_SIX_DECIMALS = 60
# Words a reader meets on a page (issues 27 and 28): the article's prose without
# code cells and their outputs, formulas and exercise solutions; "visible" also
# without folded content (answers, dropdowns). A chapter's main page is read in
# one sitting: at most 3,500 visible words and 4,500 with its folded answers;
# every other page at most 3,500 visible.
MAX_VISIBLE_WORDS, MAX_MAIN_WORDS = 3_500, 4_500
WORDS_JS = """folded => {
  const article = document.querySelector('article') || document.querySelector('main');
  const copy = article.cloneNode(true);
  const drop = 'div.cell_input, div.cell_output, div.solution, span.math, div.math, mjx-container, script, style, nav'
    + (folded ? ', div.dropdown, details' : '');
  copy.querySelectorAll(drop).forEach(el => el.remove());
  const parts = [];
  const walker = document.createTreeWalker(copy, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) parts.push(walker.currentNode.nodeValue);
  return (parts.join(' ').match(/[\\p{L}\\p{M}]{2,}/gu) || []).length;
}"""
SIX_DECIMALS = re.compile(r"-?\d+\.\d{6}\b")

SCROLLING_JS = """() => {
  const blocks = document.querySelectorAll(
    'article pre, article div.cell_output, article div.output, article table, '
    + 'article .pst-scrollable-table-container, article .table-wrapper');
  return [...blocks]
    .filter(el => el.getClientRects().length > 0 && el.scrollWidth > el.clientWidth + 1)
    .filter(el => !el.parentElement.closest('pre'))
    .map(el => ({tag: el.tagName.toLowerCase() + '.' + [...el.classList].join('.'),
                 over: el.scrollWidth - el.clientWidth,
                 text: el.innerText.split('\\n').reduce((a, b) => a.length >= b.length ? a : b, '').slice(0, 90)}));
}"""

SCALED_JS = """() => [...document.querySelectorAll('article img')]
  .filter(img => img.getClientRects().length > 0 && img.naturalWidth > 0)
  .filter(img => Math.abs(2 * img.getBoundingClientRect().width - img.naturalWidth) > 2)
  .map(img => ({src: img.getAttribute('src'), natural: img.naturalWidth,
                shown: Math.round(img.getBoundingClientRect().width)}))"""


@pytest.mark.parametrize("docname", EVERY_PAGE)
def test_nothing_scrolls_sideways(open_offline, docname):
    page = open_offline(docname).page
    scrolling = page.evaluate(SCROLLING_JS)
    assert not scrolling, f"{len(scrolling)} blocks scroll sideways at 1280 px:\n" + "\n".join(
        f"{b['tag']}: {b['over']} px too wide, e.g. {b['text']!r}" for b in scrolling[:25]
    )


@pytest.mark.parametrize("docname", EVERY_PAGE)
def test_few_six_decimal_numbers_are_visible(open_offline, docname):
    text = open_offline(docname).page.evaluate("() => document.querySelector('article').innerText")
    numbers = SIX_DECIMALS.findall(text)
    assert len(numbers) <= MAX_SIX_DECIMALS, (
        f"{len(numbers)} six-decimal numbers visible (at most {MAX_SIX_DECIMALS}); "
        f"most frequent: {sorted(set(numbers), key=numbers.count, reverse=True)[:5]}"
    )


@pytest.mark.parametrize("docname", EVERY_PAGE)
def test_figures_are_shown_at_half_their_pixels(open_offline, docname):
    """HiDPI: every PNG has twice the pixels of the width it is shown at (so it is
    sharp on a 2x screen), and is shown at exactly that width, never scaled
    further down (the figure style keeps every text at 11 CSS px or more)."""
    page = open_offline(docname).page
    wait_for_images(page)
    scaled = page.evaluate(SCALED_JS)
    assert not scaled, "figures not shown at half their pixel width:\n" + "\n".join(
        f"{img['src']}: {img['natural']} px shown at {img['shown']} px" for img in scaled
    )


@pytest.mark.parametrize("docname", EVERY_PAGE)
def test_a_page_is_read_in_one_sitting(open_offline, docname):
    page = open_offline(docname).page
    visible, everything = page.evaluate(WORDS_JS, True), page.evaluate(WORDS_JS, False)
    assert visible >= 100 or docname not in EVERY_MAIN_PAGE, f"{visible} words: the count would pass vacuously"
    assert visible <= MAX_VISIBLE_WORDS, f"{visible} visible words (at most {MAX_VISIBLE_WORDS})"
    if docname in EVERY_MAIN_PAGE:
        assert everything <= MAX_MAIN_WORDS, f"{everything} words with the folded answers (at most {MAX_MAIN_WORDS})"


# Last: it opens every fold of the page this module shares.
OPEN_EVERY_FOLD_JS = """() => {
  document.querySelectorAll('article details').forEach(d => { d.open = true; });
  document.querySelectorAll('article .toggle-hidden').forEach(e => e.classList.remove('toggle-hidden'));
}"""


@pytest.mark.parametrize("docname", EVERY_PAGE)
def test_nothing_scrolls_sideways_with_every_fold_open(open_offline, docname):
    page = open_offline(docname).page
    page.wait_for_function("() => document.querySelectorAll('article .toggle-button').length"
                           " >= document.querySelectorAll('article .dropdown').length")
    page.evaluate(OPEN_EVERY_FOLD_JS)
    scrolling = page.evaluate(SCROLLING_JS)
    assert not scrolling, f"{len(scrolling)} blocks scroll sideways at 1280 px with every fold open:\n" + "\n".join(
        f"{b['tag']}: {b['over']} px too wide, e.g. {b['text']!r}" for b in scrolling[:25]
    )
