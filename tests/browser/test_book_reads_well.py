"""The book reads well everywhere (issue 22): light pages, icons, print and
PDF, phones, offline search.

* a chapter page at 1280 px, read to its end, loads at most 1.5 MB in at most
  20 requests (every local file it asks for, at its size on disk); the whole
  `_build/html` (PDF and course zip included) is at most 16 MB;
* every Font Awesome icon the page draws is in the cut-down icon font, and
  the theme's 1.5 MB fontawesome.js is neither loaded nor shipped; the
  template override that drops it is the pinned theme's file minus that line;
* printed (print media, `beforeprint` fired as a browser does), a chapter
  shows no fold control or hint, no solution before its last exercise, and
  its folded content (the notation table, hidden cells) open;
* the PDF opens, has a page for each part of the book and extractable
  Cyrillic text with every chapter's title;
* at 390 x 844 no page scrolls sideways, the text hyphenates in Russian, and
  each figure links to its full-size image;
* from file://, search finds both chapters for «голов» and «внимание» with a
  snippet for each result.

Each page opens once for this module (`open_offline`); print media comes
last for each page, and the phone pages have their own window.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote, unquote, urlparse

import pydata_sphinx_theme
import pytest
from book_site import ALL_PAGES, CHAPTER_PAGES, HTML_DIR, REPO, TIMEOUT_MS, page_path

MAX_PAGE_BYTES = 1_500_000
MAX_REQUESTS = 20
MAX_SITE_BYTES = 16_000_000
PHONE = {"width": 390, "height": 844}
PDF = HTML_DIR / "llm-from-scratch-ch30-31.pdf"
FOLD_TEXT = ("Нажмите, чтобы", "Toggle", "Показать или скрыть")

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


@pytest.mark.parametrize("docname", CHAPTER_PAGES)
def test_chapter_page_is_light(open_offline, docname):
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
    assert PDF in files, f"{PDF} is missing"
    assert any(f.suffix == ".zip" for f in files), "the course zip is missing"
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


@pytest.mark.parametrize("docname", ALL_PAGES)
def test_every_icon_shows(open_offline, docname):
    loaded = open_offline(docname)
    page = loaded.page
    assert not page.locator("script[src*='fontawesome']").count(), "fontawesome.js is loaded"
    assert not (HTML_DIR / "_static" / "scripts" / "fontawesome.js").exists()
    icons = page.evaluate(ICONS_JS)
    assert icons, "no icon found: the check would pass vacuously"
    missing = [f"{i['where']} U+{i['code']} ({i['weight']})" for i in icons if not i["shown"]]
    assert not missing, "icons the cut-down font does not draw: " + ", ".join(missing)


@pytest.mark.parametrize("docname", ALL_PAGES)
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
    assert style == {"lang": "ru", "hyphens": "auto"}, style
    # A figure shrinks to the phone's width; a tap opens it at full size.
    unlinked = page.evaluate("""() => [...document.querySelectorAll('article figure img')]
        .filter(img => { const a = img.closest('a.figure-full');
                         return !a || a.getAttribute('href') !== img.getAttribute('src'); })
        .map(img => img.getAttribute('src'))""")
    assert not unlinked, f"figures without a link to their full-size image: {unlinked}"


@pytest.mark.parametrize("query", ["голов", "внимание"])
def test_search_from_file_finds_both_chapters_with_snippets(open_offline, query):
    loaded = open_offline("search.html", "?q=" + quote(query))
    page = loaded.page
    wanted = [f"{name}.html" for name in CHAPTER_PAGES]
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
    assert not loaded.page_errors, f"JavaScript errors: {loaded.page_errors}"
    assert not loaded.failed_local, f"failed loads: {loaded.failed_local}"
    loaded.assert_no_network()


def test_pdf_has_the_books_pages_in_russian(built_site):
    from pypdf import PdfReader

    assert PDF.is_file(), f"{PDF} is missing: the build prints it (book/_ext/book_pdf.py)"
    intro = page_path(ALL_PAGES[0]).read_text(encoding="utf-8")
    assert PDF.name in intro, "the front page does not link the PDF"
    reader = PdfReader(PDF)
    assert len(reader.pages) >= 2 * len(CHAPTER_PAGES), len(reader.pages)
    titles = {}
    for docname in CHAPTER_PAGES:
        title = re.search(r"<h1>(.*?)<a", page_path(docname).read_text(encoding="utf-8"), re.S)
        titles[docname] = " ".join(re.sub(r"<[^>]+>", "", title[1]).split()[:3])
    # Page by page until every chapter's title and plenty of Cyrillic were seen.
    text, cyrillic = "", 0
    for page in reader.pages:
        page_text = re.sub(r"\s+", " ", page.extract_text() or "")
        text += page_text
        cyrillic += len(re.findall(r"[а-яё]", page_text, re.I))
        if cyrillic > 10_000 and all(t in text for t in titles.values()):
            break
    assert cyrillic > 10_000, f"little Cyrillic text in the PDF ({cyrillic} letters)"
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
  const early = [...article.querySelectorAll('.solution')].filter(s =>
    !(last.compareDocumentPosition(s) & Node.DOCUMENT_POSITION_FOLLOWING));
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


@pytest.mark.parametrize("docname", CHAPTER_PAGES)
def test_printed_chapter_shows_everything_once_and_in_order(open_offline, docname):
    page = open_offline(docname).page
    page.wait_for_function("() => document.querySelectorAll('.solution .toggle-button').length > 0")
    page.emulate_media(media="print")
    page.evaluate("() => window.dispatchEvent(new Event('beforeprint'))")
    printed = page.evaluate(PRINT_JS)
    assert printed["solutions"] >= 1
    assert not printed["early"], f"solutions before the last exercise: {printed['early']}"
    assert not printed["controls"], f"fold controls visible in print: {printed['controls']}"
    assert not [t for t in FOLD_TEXT if t in printed["text"]], "fold UI text in print"
    assert printed["closed"] == 0 and printed["hidden"] == 0, printed
    assert all(d["open"] and all(d["tables"]) for d in printed["notation"]), (
        f"a dropdown (or its table, such as the notation) is not printed: {printed['notation']}")
    if "Обозначения" in page.content():
        assert any(d["tables"] for d in printed["notation"]), "the chapter's notation table is not a dropdown any more"
    assert "Решения упражнений" in printed["text"]
