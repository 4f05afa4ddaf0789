"""The built book in a real browser with no network: formulas, images, solutions.

Run after `make html`: `make browser` (= pytest -q tests/browser).
Pages come from both editions' tocs (_toc.yml, book/en/_toc.yml): the root
page, every chapter (files named ch<number>...) and every other listed page. Each page opens once for this module (the
`open_offline` fixture); the test that clicks the solutions comes last.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from book_site import (
    CHAPTER_PAGES,
    EDITIONS,
    EVERY_CHAPTER_PAGE,
    EVERY_EXERCISE_PAGE,
    EVERY_MAIN_PAGE,
    EVERY_PAGE,
    REPO,
    ROOT_PAGES,
    TIMEOUT_MS,
    edition_of,
    page_path,
    wait_for_images,
)

IMAGE_FILE = re.compile(r"\.(png|jpe?g|gif|svg|webp)$", re.IGNORECASE)

# Pages whose text has formulas: each edition's front page and every chapter.
MATH_PAGES = ROOT_PAGES + EVERY_CHAPTER_PAGE

# Math left untypeset, or MathJax errors: each entry describes one problem.
# The formulas are typeset when the book is built (book/_ext/prerender_math.py):
# the page must carry them typeset and load no MathJax script.
MATH_PROBLEMS_JS = r"""() => {
  const problems = [];
  for (const el of document.querySelectorAll('script[src*="mathjax" i], script[src*="tex-"]'))
    problems.push('a MathJax script is loaded: ' + el.getAttribute('src'));
  if (window.MathJax) problems.push('window.MathJax exists: something typesets in the browser');
  for (const el of document.querySelectorAll('span.math, div.math')) {
    if (!el.querySelector('mjx-container mjx-math'))
      problems.push('not typeset: ' + el.textContent.trim().slice(0, 80));
  }
  // The typeset formulas need their page's style (glyph CSS and TeX fonts).
  if (document.querySelector('mjx-container') && !document.querySelector('style#mathjax-chtml'))
    problems.push('typeset formulas without the mathjax-chtml style');
  for (const el of document.querySelectorAll('mjx-merror, [data-mjx-error]'))
    problems.push('MathJax error: ' + (el.getAttribute('data-mjx-error') || el.textContent).slice(0, 80));
  // An undefined macro is shown as red text "\name" (MathJax's noundefined package).
  for (const el of document.querySelectorAll('mjx-assistive-mml mtext[mathcolor="red"]'))
    if (el.textContent.startsWith('\\'))
      problems.push('undefined TeX macro: ' + el.textContent);
  // Raw TeX delimiters in the prose mean that a formula was never recognised as math.
  const prose = 'article :is(p, li, h1, h2, h3, h4, h5, h6, dd, dt, td, th, figcaption, .math)';
  for (const el of document.querySelectorAll(prose)) {
    if (el.closest('pre, code, .highlight')) continue;
    const text = el.innerText || '';
    if (/\$\$|\\\[|\\\(|\\begin\{/.test(text))
      problems.push('raw TeX in text: ' + text.trim().slice(0, 80));
  }
  return problems;
}"""

IMAGES_JS = """() => [...document.images].map(img => ({
  src: img.getAttribute('src'),
  width: img.naturalWidth,
  alt: (img.getAttribute('alt') || '').trim(),
}))"""


def test_toc_has_chapters():
    """The page lists come from _toc.yml; without chapters the checks below would be empty."""
    assert CHAPTER_PAGES, f"no chapter files (named ch<number>...) in _toc.yml: {CHAPTER_PAGES}"
    assert any(Path(p).name.startswith("ch30") for p in CHAPTER_PAGES), CHAPTER_PAGES
    for edition in EDITIONS[1:]:
        assert [Path(p).name for p in edition.chapter_pages] == [Path(p).name for p in CHAPTER_PAGES]


@pytest.mark.parametrize("edition", EDITIONS, ids=lambda e: e.language)
def test_index_opens_the_front_page(open_offline, edition):
    loaded = open_offline(f"{edition.prefix}index.html")
    loaded.page.wait_for_url(f"**/{edition.root}.html", timeout=TIMEOUT_MS)
    loaded.assert_no_network()


@pytest.mark.parametrize("docname", EVERY_PAGE)
def test_page_works_offline(open_offline, docname):
    """A page in its edition's language, every formula typeset, every image
    loaded with alt text, no error (thrown or logged to the console), no other host."""
    loaded = open_offline(docname)
    page = loaded.page
    assert page.evaluate("() => document.documentElement.lang") == edition_of(docname).language

    problems = page.evaluate(MATH_PROBLEMS_JS)
    assert not problems, "\n".join(problems)

    wait_for_images(page)
    images = page.evaluate(IMAGES_JS)
    problems = [f"did not load: {img['src']}" for img in images if img["width"] == 0]
    # docutils fills a missing alt with the image path, so a path counts as missing.
    problems += [
        f"no alt text: {img['src']} (alt={img['alt']!r})"
        for img in images
        if not img["alt"] or img["alt"] == img["src"] or IMAGE_FILE.search(img["alt"])
    ]
    assert not problems, "images:\n" + "\n".join(problems)

    loaded.assert_no_errors()
    loaded.assert_no_network()


@pytest.mark.parametrize("docname", MATH_PAGES)
def test_formulas_are_typeset_in_the_html(built_site, docname):
    """Every formula is typeset in the file itself (no browser needed): none left as
    TeX, none with a MathJax error node, and MathJax's own fonts inline."""
    text = page_path(docname).read_text(encoding="utf-8")
    formulas = re.findall(r'<(span|div) class="math notranslate nohighlight"[^>]*>(.*?)</\1>', text, re.S)
    assert formulas, "the page has no formula"
    raw = [body[:80] for _, body in formulas if "<mjx-container" not in body]
    assert not raw, f"{len(raw)} of {len(formulas)} formulas left as TeX: {raw[:5]}"
    assert "<mjx-merror" not in text and "data-mjx-error" not in text, "a MathJax error node"
    assert "\\(" not in re.sub(r"<(pre|code)\b.*?</\1>", "", text, flags=re.S), "raw TeX"
    assert 'src: url("data:font/woff;base64,' in text, "the TeX fonts are not inline"
    assert "mathjax" not in " ".join(re.findall(r"<script[^>]*>", text)).lower()


@pytest.mark.parametrize("docname", EVERY_MAIN_PAGE)
def test_chapter_has_figures_and_exercises(open_offline, docname):
    """A chapter's main page shows at least one figure, one exercise and one solution."""
    loaded = open_offline(docname)
    page = loaded.page
    wait_for_images(page)
    assert page.locator("article img").count() >= 1, "the chapter shows no image"
    assert page.locator(".exercise").count() >= 1, "the chapter has no {exercise}"
    assert page.locator(".solution").count() >= 1, "the chapter has no {solution}"
    loaded.assert_no_network()


@pytest.mark.parametrize("docname", EVERY_EXERCISE_PAGE)
def test_solutions_are_closed_until_clicked(open_offline, docname):
    """sphinx-exercise renders a `:class: dropdown` solution as
    <div class="solution dropdown admonition">; sphinx-togglebutton then adds the
    classes `toggle toggle-hidden` and a button in the title that shows the body."""
    loaded = open_offline(docname)
    page = loaded.page
    solutions = page.locator(".solution")
    count = solutions.count()
    assert count >= 1, "the chapter has no {solution}"
    not_hidden = [
        solutions.nth(i).get_attribute("id")
        for i in range(count)
        if "dropdown" not in (solutions.nth(i).get_attribute("class") or "").split()
    ]
    assert not not_hidden, f"solutions shown open, give them `:class: dropdown`: {not_hidden}"
    # sphinx-togglebutton adds its buttons when the DOM is ready.
    page.wait_for_function(
        "n => document.querySelectorAll('.solution > .admonition-title .toggle-button').length >= n",
        arg=count,
        timeout=TIMEOUT_MS,
    )
    for i in range(count):
        solution = solutions.nth(i)
        label = f"solution {i + 1} of {count} ({solution.get_attribute('id')})"
        classes = (solution.get_attribute("class") or "").split()
        body = solution.locator(":scope > :not(.admonition-title)")
        assert body.count() >= 1, f"{label} is empty"
        assert "toggle-hidden" in classes, f"{label} is open before a click"
        shown = [body.nth(j).is_visible() for j in range(body.count())]
        assert not any(shown), f"{label} shows its body before a click"

        button = solution.locator(":scope > .admonition-title .toggle-button")
        button.scroll_into_view_if_needed()
        button.click()
        body.first.wait_for(state="visible", timeout=TIMEOUT_MS)
        assert "toggle-hidden" not in (solution.get_attribute("class") or "").split()
        assert button.get_attribute("aria-expanded") == "true", label

        button.click()
        body.first.wait_for(state="hidden", timeout=TIMEOUT_MS)
    loaded.assert_no_network()


@pytest.mark.parametrize("docname", EVERY_EXERCISE_PAGE)
def test_exercise_titles_are_the_label_and_the_chapters_number(open_offline, docname):
    """«Упражнение 30.1» (Exercise 30.1), as the checks call it: not «Упражнение
    (30.1)», the parentheses sphinx-exercise puts around a title (book/_ext/russian_labels.py)."""
    chapter = re.match(r"ch(\d+)", Path(docname).name)[1]
    titles = open_offline(docname).page.evaluate(
        "() => [...document.querySelectorAll('.exercise > .admonition-title')].map(t => t.textContent.trim())")
    assert titles, "the chapter has no exercise"
    wrong = [title for title in titles if not re.fullmatch(rf"\w+ {chapter}\.\d+", title)]
    assert not wrong, f"exercise titles not «<label> {chapter}.<n>»: {wrong}"


# What the repository's route needs (README.md, «Two commands»): the front page
# lists each where it tells a reader with a copy of the repository to run make.
REPOSITORY_NEEDS = ("Python 3.11", "make", "Node.js 18", "npm", "Chromium")


@pytest.mark.parametrize("root", ROOT_PAGES)
def test_front_page_names_every_requirement_of_the_repository(built_site, root):
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Two commands", 1)[1].split("\n## ", 1)[0]
    unlisted = [need for need in REPOSITORY_NEEDS if need not in section]
    assert not unlisted, f"README.md's «Two commands» does not name {unlisted}"
    paragraphs = re.findall(r"<p>(.*?)</p>", page_path(root).read_text(encoding="utf-8"), re.S)
    texts = [" ".join(re.sub(r"<[^>]+>", "", p).split()) for p in paragraphs]
    paragraph = next((p for p in texts if "make" in p and "Python 3.11" in p), "")
    missing = [need for need in REPOSITORY_NEEDS if need not in paragraph]
    assert paragraph and not missing, f"the front page's paragraph on make lacks {missing}:\n{paragraph}"
