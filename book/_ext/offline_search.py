"""The search page works from ``file://`` and finds word forms, in either edition.

Sphinx's search page shows a snippet of each result by fetching the result
page, which browsers refuse from ``file://``: only titles showed. This
extension writes ``_static/search-pages.js``, the text of every page's main
column (its sections kept, for the anchors Sphinx looks up), and adds it to
``search.html`` with ``book/_static/search-offline.js``, which answers those
fetches from it and lets a query word find the pages indexed under the word
itself as well as under its stem («голов» → «гол», but «головы» → «голов»).
The stemmer is the edition's ``language``'s, the same in the index and in
the page: Sphinx's Snowball Russian stemmer in the Russian edition, Porter's
in the English one («heads» is indexed as «head», so «head» finds it).

Synonyms: ``book_search_synonyms`` (the book's config, one list an edition)
maps a word a reader may search for, which the book does not use, to the
word it does: «прогрев» finds the pages about «разогрев» (without it, the
query found two unrelated pages through «программ»). The build checks both
sides against the pages' text: a synonym for a word the book uses would hide
its own pages, and one for a word the book lacks finds nothing.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from bs4 import BeautifulSoup
from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)
PAGES_JS = "_static/search-pages.js"


def add_scripts(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    if pagename == "search" and app.builder.name == "html":
        app.add_js_file("search-pages.js")
        app.add_js_file("search-offline.js")


# A typeset formula: its hidden MathML holds the symbols a snippet can show.
FORMULA = re.compile(r"<mjx-container\b.*?(?:<mjx-assistive-mml[^>]*>(.*?)</mjx-assistive-mml>)?"
                     r"</mjx-container>", re.S)
TAG = re.compile(r"<[^>]+>")


def page_text(html: str) -> str:
    """The main column as sections of plain text: what Sphinx's snippet code reads."""
    # Half a chapter's markup is typeset math: flatten it before parsing.
    html = FORMULA.sub(lambda m: TAG.sub("", m[1] or ""), html)
    soup = BeautifulSoup(html, "html.parser")
    # The article itself: the theme's role="main" also holds the page's
    # buttons and its table of contents.
    main = soup.select_one("article.bd-article") or soup.select_one('[role="main"]')
    if main is None:
        return ""
    for junk in main.select("script, style, .headerlink, .toggle-button, button"):
        junk.decompose()
    for tag in main.find_all(True):
        if tag.name == "section" and tag.get("id"):
            tag.attrs = {"id": tag["id"]}
        else:
            tag.unwrap()
    main.attrs = {"role": "main"}
    main.name = "div"
    return re.sub(r"\s+", " ", str(main))


def synonym_problems(synonyms: dict[str, str], text: str, stem) -> list[str]:
    """Why a synonym would mislead (empty when the book lacks each word and has
    its target), words compared by their stems as the search compares them."""
    stems = {stem(word) for word in re.findall(r"\w+", TAG.sub(" ", text).lower())}
    problems = []
    for word, target in synonyms.items():
        if stem(word.lower()) in stems:
            problems.append(f"«{word}» is in the book: a synonym would hide its own pages")
        if not all(stem(part) in stems for part in target.lower().split()):
            problems.append(f"«{target}» (for «{word}») is not in the book: the synonym finds nothing")
    return problems


def write_pages(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.name != "html":
        return
    pages = {}
    for docname in sorted(app.env.found_docs):
        path = Path(app.builder.get_outfilename(docname))
        if path.is_file():
            pages[f"{docname}.html"] = page_text(path.read_text(encoding="utf-8"))
    synonyms = app.config.book_search_synonyms
    stem = app.builder.indexer.lang.stem if app.builder.indexer else str
    for problem in synonym_problems(synonyms, " ".join(pages.values()), stem):
        logger.warning("offline_search: book_search_synonyms: %s", problem)
    target = Path(app.outdir) / PAGES_JS
    target.write_text("window.BOOK_SEARCH_PAGES = " + json.dumps(pages, ensure_ascii=False) + ";\n"
                      + "window.BOOK_SEARCH_SYNONYMS = " + json.dumps(synonyms, ensure_ascii=False) + ";\n",
                      encoding="utf-8")
    logger.info("offline_search: the text of %d pages and %d synonyms for the search page",
                len(pages), len(synonyms))


def setup(app: Sphinx) -> dict:
    app.add_config_value("book_search_synonyms", {}, "html", types=[dict])
    app.connect("html-page-context", add_scripts)
    # Before page_assets bundles the search page's scripts (priority 900).
    app.connect("build-finished", write_pages, priority=800)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
