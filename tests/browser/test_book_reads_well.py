"""The book reads well everywhere (issue 22), in both editions (issue 29): light
pages, icons, print and PDF, phones, offline search.

* every page at 1280 px, read to its end, loads at most 2.0 MB in at most
  20 requests (every local file it asks for, at its size on disk); the whole
  `_build/html` (both editions, both PDFs and course zips included) is at most
  48 MB;
* every Font Awesome icon the page draws is in the cut-down icon font, and
  the theme's 1.5 MB fontawesome.js is neither loaded nor shipped; the
  template override that drops it is the pinned theme's file minus that line;
* printed (print media, `beforeprint` fired as a browser does), a chapter
  shows no fold control or hint, no solution before its last exercise, and
  its folded content (the notation table, hidden cells) open;
* each edition's PDF opens, has a page for each part of the book and
  extractable text in its language (Cyrillic in the Russian one) with every
  chapter's title; its title, author, subject and language are the edition's,
  each page's footer is its page's title once, and no exercise number stands
  in parentheses;
* printed at the width an A4 page leaves for the text, no line of code or
  output wraps (a solution's code broke mid-expression), and a line too long
  would wrap at a space;
* at 390 x 844 no page scrolls sideways, the text hyphenates in its edition's
  language, and each figure links to its full-size image;
* from file://, each edition's search finds both chapters for its words
  («голов» and «внимание»; "head" and "attention") with a snippet for each
  result, an English word finds its other forms ("head" finds what "heads"
  finds), and a synonym the book does not use (its config's
  ``book_search_synonyms``, «прогрев») finds what the word it uses finds.

Each page opens once for this module (`open_offline`); print media comes
last for each page, and the phone pages have their own window.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from urllib.parse import quote, unquote, urlparse

import pydata_sphinx_theme
import pytest
from book_site import (
    EDITIONS,
    EVERY_CHAPTER_PAGE,
    EVERY_EXERCISE_PAGE,
    EVERY_PAGE,
    REPO,
    TIMEOUT_MS,
    edition_of,
    page_path,
)

sys.path.insert(0, str(REPO / "book" / "_ext"))
import book_pdf  # the PDF's page and margins: the width a printed page has

MAX_PAGE_BYTES = 2_000_000  # figures are stored at 2x (HiDPI)
MAX_REQUESTS = 20
MAX_SITE_BYTES = 48_000_000  # both editions, with their PDFs and course zips
PHONE = {"width": 390, "height": 844}
BY_EDITION = {"ids": lambda edition: edition.language}
# The width Chromium lays a page out at when it prints it on A4 (CSS px).
PRINTED_WIDTH = round((book_pdf.PAGE["width_mm"] - book_pdf.MARGINS_MM["left"] - book_pdf.MARGINS_MM["right"])
                      / 25.4 * 96)
FOLD_TEXT = ("Нажмите, чтобы", "Toggle", "Показать или скрыть", "Click to show", "Click to hide")
# What book.js heads the printed solutions with; the chapter's notation dropdown.
PRINT_WORDS = {"ru": {"solutions": "Решения упражнений", "notation": "Обозначения"},
               "en": {"solutions": "Solutions to the exercises", "notation": "Notation"}}
# Search words that both chapters use, in each edition.
SEARCH_WORDS = {"ru": ["голов", "внимание"], "en": ["head", "attention"]}

READ_TO_THE_END_JS = """async () => {
  for (let y = 0; y < document.body.scrollHeight; y += 600) {
    window.scrollTo(0, y);
    await new Promise(r => setTimeout(r, 20));
  }
  await Promise.all([...document.images].map(img => img.complete ? null :
    new Promise(done => { img.onload = img.onerror = done; })));
  window.scrollTo(0, 0);
}"""

# One entry per icon character that an element or pseudo-element draws with
# the icon font, with whether the font has it: drawn in the icon font and in
# the fallback alone, a glyph the font lacks gives the same pixels.
ICONS_JS = """async () => {
  const seen = new Map();
  for (const el of document.querySelectorAll('body *')) {
    for (const pseudo of ['::before', '::after']) {
      const style = getComputedStyle(el, pseudo);
      if (!style.fontFamily.includes('Font Awesome')) continue;
      const content = style.content;
      if (!content || content === 'none' || content === 'normal') continue;
      const text = content.replace(/^"|"$/g, '');
      if (!/[\\ue000-\\uf8ff]/.test(text)) continue;
      const key = style.fontWeight + ' ' + text;
      if (!seen.has(key)) seen.set(key, {text, weight: style.fontWeight, family: style.fontFamily,
        where: el.tagName.toLowerCase() + '.' + [...el.classList].join('.') + pseudo});
    }
  }
  const canvas = document.createElement('canvas');
  canvas.width = canvas.height = 48;
  const ctx = canvas.getContext('2d');
  const draw = (font, text) => {
    ctx.clearRect(0, 0, 48, 48);
    ctx.font = font;
    ctx.fillText(text, 4, 40);
    return ctx.getImageData(0, 0, 48, 48).data.join(',');
  };
  const out = [];
  for (const icon of seen.values()) {
    const font = `${icon.weight} 36px ${icon.family}`;
    await document.fonts.load(font, icon.text);
    const drawn = draw(`${icon.weight} 36px ${icon.family}, monospace`, icon.text);
    const fallback = draw(`${icon.weight} 36px monospace`, icon.text);
    out.push({...icon, code: icon.text.codePointAt(0).toString(16),
              shown: drawn !== fallback && /[^0,]/.test(drawn)});
  }
  return out;
}"""


def local_file(url: str) -> Path | None:
    return Path(unquote(urlparse(url).path)) if url.startswith("file:") else None


@pytest.mark.parametrize("docname", EVERY_PAGE)
def test_page_is_light(open_offline, docname):
    """Every page, read to the end: at most MAX_REQUESTS files and MAX_PAGE_BYTES bytes."""
    loaded = open_offline(docname)
    loaded.page.evaluate(READ_TO_THE_END_JS)
    files = [local_file(url) for url in loaded.local if url.startswith("file:")]
    sizes = {str(f): f.stat().st_size for f in files if f is not None and f.is_file()}
    total = sum(sizes.values())
    biggest = sorted(sizes.items(), key=lambda item: -item[1])[:5]
    assert len(loaded.local) <= MAX_REQUESTS, (
        f"{len(loaded.local)} requests (at most {MAX_REQUESTS}): {loaded.local}")
    assert total <= MAX_PAGE_BYTES, f"{total} bytes (at most {MAX_PAGE_BYTES}); biggest: {biggest}"
    loaded.assert_no_network()


def test_built_book_is_small(built_site):
    files = [f for f in built_site.rglob("*") if f.is_file()]
    total = sum(f.stat().st_size for f in files)
    for edition in EDITIONS:
        assert edition.pdf in files, f"{edition.pdf} is missing"
        zips = list((edition.html_dir / "_downloads").glob("*/*.zip"))
        assert zips, f"the {edition.language} edition's course zip is missing"
    assert total <= MAX_SITE_BYTES, (
        f"_build/html holds {total} bytes (at most {MAX_SITE_BYTES}); biggest: "
        f"{sorted((f.stat().st_size, str(f.relative_to(built_site))) for f in files)[-5:]}")


def test_fontawesome_override_is_the_pinned_themes_file():
    """book/_templates/static/webpack-macros.html = the theme's file minus fontawesome.js."""
    theme = (Path(pydata_sphinx_theme.__file__).parent / "theme" / "pydata_sphinx_theme"
             / "static" / "webpack-macros.html").read_text(encoding="utf-8").splitlines()
    ours = (REPO / "book" / "_templates" / "static" / "webpack-macros.html").read_text(
        encoding="utf-8").splitlines()
    expected = [line for line in theme if "fontawesome.js" not in line
                and "So that users can add custom icons" not in line]
    assert [line for line in ours if not line.strip().startswith("{#")] == expected
    assert len(expected) < len(theme), "the theme no longer loads fontawesome.js: drop the override"


@pytest.mark.parametrize("docname", EVERY_PAGE)
def test_every_icon_shows(open_offline, docname):
    loaded = open_offline(docname)
    page = loaded.page
    assert not page.locator("script[src*='fontawesome']").count(), "fontawesome.js is loaded"
    assert not (edition_of(docname).html_dir / "_static" / "scripts" / "fontawesome.js").exists()
    icons = page.evaluate(ICONS_JS)
    assert icons, "no icon found: the check would pass vacuously"
    missing = [f"{i['where']} U+{i['code']} ({i['weight']})" for i in icons if not i["shown"]]
    assert not missing, "icons the cut-down font does not draw: " + ", ".join(missing)


@pytest.mark.parametrize("docname", EVERY_PAGE)
def test_nothing_scrolls_sideways_on_a_phone(open_offline, docname):
    page = open_offline(docname, viewport=PHONE).page
    page.evaluate(READ_TO_THE_END_JS)
    wide = page.evaluate("""() => ({page: document.documentElement.scrollWidth,
        window: document.documentElement.clientWidth,
        culprits: [...document.querySelectorAll('body *')].filter(el => {
            const r = el.getBoundingClientRect();
            return el.getClientRects().length && r.right > document.documentElement.clientWidth + 1
                && !el.closest('.bd-sidebar-primary, .bd-sidebar-secondary, dialog')
                && getComputedStyle(el).position !== 'fixed';
        }).slice(0, 5).map(el => el.tagName + '.' + el.className + ': ' + (el.innerText || '').slice(0, 40))})""")
    assert wide["page"] <= wide["window"], f"the page scrolls sideways at 390 px: {wide}"
    style = page.evaluate("""() => { const p = document.querySelector('article p');
        return {lang: document.documentElement.lang, hyphens: getComputedStyle(p).hyphens}; }""")
    assert style == {"lang": edition_of(docname).language, "hyphens": "auto"}, style
    # A figure shrinks to the phone's width; a tap opens it at full size.
    unlinked = page.evaluate("""() => [...document.querySelectorAll('article figure img')]
        .filter(img => { const a = img.closest('a.figure-full');
                         return !a || a.getAttribute('href') !== img.getAttribute('src'); })
        .map(img => img.getAttribute('src'))""")
    assert not unlinked, f"figures without a link to their full-size image: {unlinked}"
    # ... and keeps its proportions (its style sets the width and height it has in the column).
    squashed = page.evaluate("""() => [...document.querySelectorAll('article img')]
        .filter(img => img.naturalWidth > 0 && img.getClientRects().length > 0)
        .filter(img => { const r = img.getBoundingClientRect();
                         return Math.abs(r.height / r.width - img.naturalHeight / img.naturalWidth) > 0.02; })
        .map(img => img.getAttribute('src'))""")
    assert not squashed, f"figures out of proportion at 390 px: {squashed}"


@pytest.mark.parametrize(("edition", "query"), [(edition, query) for edition in EDITIONS
                                                 for query in SEARCH_WORDS[edition.language]],
                         ids=lambda value: getattr(value, "language", value))
def test_search_from_file_finds_both_chapters_with_snippets(open_offline, edition, query):
    loaded = open_offline(edition.search, "?q=" + quote(query))
    page = loaded.page
    wanted = [f"{name.removeprefix(edition.prefix)}.html" for name in edition.main_pages]
    page.wait_for_function(
        """wanted => { const items = [...document.querySelectorAll('#search-results ul.search li')];
          return wanted.every(w => items.some(li => {
            const a = li.querySelector('a'); const p = li.querySelector('p.context');
            return a && (a.getAttribute('href') || '').split('#')[0] === w && p && p.textContent.trim();
          })); }""",
        arg=wanted, timeout=TIMEOUT_MS)
    results = page.evaluate("""() => [...document.querySelectorAll('#search-results ul.search li')]
        .map(li => ({href: li.querySelector('a').getAttribute('href'),
                     snippet: (li.querySelector('p.context') || {}).textContent || ''}))""")
    stem = query[:5].lower()
    for result in results:
        if result["href"].split("#")[0] in wanted:
            assert stem in result["snippet"].lower(), result
    loaded.assert_no_errors()
    loaded.assert_no_network()


def search_results(open_offline, query: str, edition=EDITIONS[0]) -> dict[str, str]:
    """The pages an edition's search.html finds for ``query`` from file://, each with its snippet."""
    loaded = open_offline(edition.search, "?q=" + quote(query))
    # Finished: Sphinx replaces the heading's text, and the pulsing dots in it.
    loaded.page.wait_for_function(
        "() => { const h = document.querySelector('#search-results h2'); return h && !h.querySelector('span'); }",
        timeout=TIMEOUT_MS)
    loaded.assert_no_errors()
    loaded.assert_no_network()
    return dict(loaded.page.evaluate("""() => [...document.querySelectorAll('#search-results ul.search li')]
        .map(li => [li.querySelector('a').getAttribute('href').split('#')[0],
                    (li.querySelector('p.context') || {}).textContent || ''])"""))


def test_an_english_word_finds_its_other_forms(open_offline):
    """Porter's stemmer in the English edition's index and search page: "head"
    and "heads" find the same pages, both chapters among them, and a snippet
    shows the form the page uses."""
    english = next(edition for edition in EDITIONS if edition.language == "en")
    head, heads = search_results(open_offline, "head", english), search_results(open_offline, "heads", english)
    wanted = {f"{name.removeprefix(english.prefix)}.html" for name in english.main_pages}
    assert wanted <= set(head), f"«head» finds {sorted(head)}"
    assert sorted(head) == sorted(heads), f"«head» finds {sorted(head)}, «heads» {sorted(heads)}"
    assert any("heads" in snippet.lower() for snippet in head.values()), head


@pytest.mark.parametrize(("edition", "word"), [(edition, word) for edition in EDITIONS
                                                for word in sorted(edition.sphinx.get("book_search_synonyms", {}))],
                         ids=lambda value: getattr(value, "language", value))
def test_a_synonym_finds_what_the_word_of_the_book_finds(open_offline, edition, word):
    """«прогрев» finds the pages about «разогрев» (it found two unrelated pages
    through «программ»), each with a snippet showing the book's word."""
    said = edition.sphinx["book_search_synonyms"][word]
    wanted = search_results(open_offline, said, edition)
    found = search_results(open_offline, word, edition)
    assert wanted, f"«{said}» finds nothing"
    assert sorted(found) == sorted(wanted), f"«{word}» finds {sorted(found)}, «{said}» finds {sorted(wanted)}"
    stem = said.lower()[:5]
    assert all(stem in snippet.lower() for snippet in found.values()), found


def pdf_footers(page) -> str:
    """The text a PDF page has below its text area (in the bottom margin)."""
    bottom, width = book_pdf.MARGINS_MM["bottom"] / 25.4 * 72, float(page.mediabox.width)
    parts = []

    def visit(text, cm, tm, font, size):
        x, y = tm[4] * cm[0] + tm[5] * cm[2] + cm[4], tm[4] * cm[1] + tm[5] * cm[3] + cm[5]
        # (A formula's stretched glyphs come with matrices that put them off the page; the pieces
        # of a tall bracket, U+239B-U+23B3, can land in the margin the same way: never footer text.)
        text = re.sub("[\u239b-\u23b3]", "", text)
        if 0 < x < width and 0 < y < bottom and text.strip():
            parts.append(text.strip())

    page.extract_text(visitor_text=visit)
    return " ".join(parts)


def page_title(docname: str) -> str:
    """The page's heading (the article's first h1, without its # link)."""
    article = page_path(docname).read_text(encoding="utf-8").split("<article", 1)[1]
    heading = re.search(r"<h1>(.*?)</h1>", re.sub(r'<a class="headerlink".*?</a>', "", article), re.S)
    return " ".join(re.sub(r"<[^>]+>", "", heading[1]).split())


@pytest.mark.parametrize("edition", EDITIONS, **BY_EDITION)
def test_pdf_says_what_it_is_and_each_footer_names_its_page_once(built_site, edition):
    """Metadata from the edition's config (the title was «Project name not set»),
    each page's footer its page's title (the front page's repeated the book's
    title twice), and «Упражнение 30.1» without parentheses."""
    from pypdf import PdfReader
    from pypdf.generic import BooleanObject

    reader = PdfReader(edition.pdf)
    info = reader.metadata
    assert (info.title, info.author, info.subject) == (
        edition.config["title"], edition.sphinx["book_pdf_author"], edition.sphinx["book_pdf_subject"]), info
    assert reader.trailer["/Root"].get("/Lang") == edition.sphinx["language"]
    assert reader.trailer["/Root"]["/ViewerPreferences"].get("/DisplayDocTitle") == BooleanObject(True)
    titles = {page_title(docname) for docname in edition.pages}
    footers = [pdf_footers(page) for page in reader.pages]
    assert footers[0] == page_title(edition.root), f"page 1's footer: {footers[0]!r}"
    wrong = sorted({footer for footer in footers if footer not in titles})
    assert not wrong, f"footers that are not a page's title once: {wrong[:5]}"
    chapters = "|".join(re.match(r"ch(\d+)", Path(d).name)[1] for d in edition.chapter_pages)
    text = " ".join(page.extract_text() for page in reader.pages)
    numbered = re.findall(rf".{{0,20}}\((?:{chapters})\.\d+\)", text)
    assert not numbered, f"exercise numbers in parentheses: {numbered[:5]}"


# Each code or output block of a printed chapter, as high as its lines
# unwrapped (white-space: pre) or not.
PRINTED_CODE_JS = """() => [...document.querySelectorAll('article.bd-article pre')].map(pre => {
    const wrapped = pre.getBoundingClientRect().height;
    const style = pre.style.whiteSpace;
    pre.style.whiteSpace = 'pre';
    const unwrapped = pre.getBoundingClientRect().height;
    pre.style.whiteSpace = style;
    const lines = pre.textContent.split('\\n');
    return {wraps: wrapped > unwrapped + 1, wrap: getComputedStyle(pre).overflowWrap,
            longest: lines.reduce((a, b) => b.length > a.length ? b : a, '')};
})"""


@pytest.mark.parametrize("docname", EVERY_CHAPTER_PAGE)
def test_printed_code_fits_an_a4_page_unwrapped(open_offline, docname):
    page = open_offline(docname, viewport={"width": PRINTED_WIDTH, "height": 900}).page
    page.emulate_media(media="print")
    page.evaluate("() => window.dispatchEvent(new Event('beforeprint'))")
    blocks = page.evaluate(PRINTED_CODE_JS)
    assert blocks, "the chapter has no code"
    wrapped = [block["longest"] for block in blocks if block["wraps"]]
    assert not wrapped, f"{len(wrapped)} code blocks wrap at {PRINTED_WIDTH} px, e.g. {wrapped[:3]}"
    anywhere = {block["wrap"] for block in blocks} - {"break-word", "normal"}
    assert not anywhere, f"a too long line would break inside a word (overflow-wrap: {anywhere})"


# Letters of each edition's language, and how many a PDF must have at least.
LETTERS = {"ru": r"[а-яё]", "en": r"[a-z]"}


@pytest.mark.parametrize("edition", EDITIONS, **BY_EDITION)
def test_pdf_has_the_books_pages_in_its_language(built_site, edition):
    from pypdf import PdfReader

    pdf = edition.pdf
    assert pdf.is_file(), f"{pdf} is missing: the build prints it (book/_ext/book_pdf.py)"
    intro = page_path(edition.root).read_text(encoding="utf-8")
    assert re.search(rf'href="{re.escape(pdf.name)}"|href="\.\./{re.escape(pdf.name)}"', intro), (
        f"the front page does not link its own PDF, {pdf.name}")
    others = [other.pdf.name for other in EDITIONS if other != edition]
    assert not [name for name in others if name in intro], "the front page links the other edition's PDF"
    reader = PdfReader(pdf)
    assert len(reader.pages) >= 2 * len(edition.chapter_pages), len(reader.pages)
    titles = {}
    for docname in edition.chapter_pages:
        title = re.search(r"<h1>(.*?)<a", page_path(docname).read_text(encoding="utf-8"), re.S)
        titles[docname] = " ".join(re.sub(r"<[^>]+>", "", title[1]).split()[:3])
    # Page by page until every chapter's title and plenty of Cyrillic were seen.
    text, letters = "", 0
    for page in reader.pages:
        page_text = re.sub(r"\s+", " ", page.extract_text() or "")
        text += page_text
        letters += len(re.findall(LETTERS[edition.language], page_text, re.I))
        if letters > 10_000 and all(t in text for t in titles.values()):
            break
    assert letters > 10_000, f"little {edition.language} text in the PDF ({letters} letters)"
    missing = [f"{d}: {t!r}" for d, t in titles.items() if t not in text]
    assert not missing, f"chapter titles not in the PDF: {missing}"


# Last for each chapter page of this module: print media changes the page.
PRINT_JS = """() => {
  // Laid out, not hidden, and neither it nor a box around it transparent.
  const visible = el => {
    if (!el.getClientRects().length || getComputedStyle(el).visibility === 'hidden') return false;
    for (let e = el; e && e !== document.body; e = e.parentElement)
      if (getComputedStyle(e).opacity === '0') return false;
    return true;
  };
  const article = document.querySelector('article.bd-article');
  const exercises = [...article.querySelectorAll('.exercise')];
  const last = exercises[exercises.length - 1];
  const early = last ? [...article.querySelectorAll('.solution')].filter(s =>
    !(last.compareDocumentPosition(s) & Node.DOCUMENT_POSITION_FOLLOWING)) : [];
  const notation = [...article.querySelectorAll('details.sd-dropdown')];
  return {
    text: article.innerText,
    solutions: article.querySelectorAll('.solution').length,
    early: early.map(s => s.id),
    controls: [...article.querySelectorAll('summary, .toggle-button, .sd-summary-state-marker')]
      .filter(visible).map(el => el.tagName + '.' + el.className),
    closed: [...article.querySelectorAll('details')].filter(d => !d.open).length,
    hidden: [...article.querySelectorAll('.toggle-hidden, details > :not(summary), .solution > section')]
      .filter(el => !visible(el)).length,
    notation: notation.map(d => ({
      open: visible(d.querySelector('.sd-summary-content')),
      tables: [...d.querySelectorAll('table')].map(visible)})),
  };
}"""


@pytest.mark.parametrize("docname", EVERY_CHAPTER_PAGE)
def test_printed_chapter_shows_everything_once_and_in_order(open_offline, docname):
    main = docname in EVERY_EXERCISE_PAGE  # a page with exercises prints their solutions at its end
    words = PRINT_WORDS[edition_of(docname).language]
    page = open_offline(docname).page
    page.wait_for_function("() => document.querySelectorAll('article .toggle-button').length"
                           " >= document.querySelectorAll('article .dropdown').length")
    page.emulate_media(media="print")
    page.evaluate("() => window.dispatchEvent(new Event('beforeprint'))")
    printed = page.evaluate(PRINT_JS)
    assert printed["solutions"] >= 1 or not main
    assert not printed["early"], f"solutions before the last exercise: {printed['early']}"
    assert not printed["controls"], f"fold controls visible in print: {printed['controls']}"
    assert not [t for t in FOLD_TEXT if t in printed["text"]], "fold UI text in print"
    assert printed["closed"] == 0 and printed["hidden"] == 0, printed
    assert all(d["open"] and all(d["tables"]) for d in printed["notation"]), (
        f"a dropdown (or its table, such as the notation) is not printed: {printed['notation']}")
    if words["notation"] in page.content():
        assert any(d["tables"] for d in printed["notation"]), "the chapter's notation table is not a dropdown any more"
    assert words["solutions"] in printed["text"] or not main
    chapter = re.match(r"ch(\d+)", Path(docname).name)[1]
    numbered = re.findall(rf".{{0,20}}\({chapter}\.\d+\)", printed["text"])
    assert not numbered, f"exercise numbers in parentheses in print: {numbered[:3]}"
