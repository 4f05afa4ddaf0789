"""One site, two editions (issue 29): every page links to the same page of the
other edition, and each edition's front page offers both.

The links are checked in the built HTML (book/_ext/edition_links.py writes
them, book/_templates/edition-switch.html draws them): on every page of both
editions, search and index pages included, one link in the article's header
and one ``<link rel="alternate">`` to the counterpart, which exists and links
back; a page of the table of contents leads to the page of the same name.
In Chromium the link is visible at 1280 px and on a 390 px phone, and a click
opens the counterpart.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlparse

import pytest
from book_site import EDITIONS, EVERY_PAGE, HTML_DIR, ROOT_PAGES, TIMEOUT_MS, edition_of

PHONE = {"width": 390, "height": 844}
SWITCH = re.compile(r'<a class="btn btn-sm edition-switch" href="([^"]+)" hreflang="(\w+)"[^>]*>([^<]+)</a>')
ALTERNATE = re.compile(r'<link rel="alternate" hreflang="(\w+)" href="([^"]+)" />')
# Pages Sphinx makes in each edition besides the toc's: the counterpart is the other edition's own.
GENERATED = ("search", "genindex")


def other(edition):
    return next(e for e in EDITIONS if e != edition)


def counterpart_file(name: str) -> Path:
    """Where the same page is in the other edition: a toc page in its pages' folder,
    a generated page at its root."""
    counterpart, page = other(edition_of(name)), Path(name).name
    folder = HTML_DIR / counterpart.prefix if page in GENERATED else (HTML_DIR / counterpart.root).parent
    return (folder / f"{page}.html").resolve()


def site_name(path: Path) -> str:
    return path.relative_to(HTML_DIR).with_suffix("").as_posix()


def switch_of(name: str) -> tuple[str, str, Path]:
    """The page's link to the other edition: its language, label and the file it leads to."""
    path = HTML_DIR / f"{name}.html"
    html = path.read_text(encoding="utf-8")
    switches = SWITCH.findall(html)
    assert len(switches) == 1, f"{name}: {len(switches)} links to the other edition"
    href, language, label = switches[0]
    alternates = ALTERNATE.findall(html)
    assert alternates == [(language, href)], f"{name}: <link rel=alternate> {alternates}, the switch {href}"
    assert not urlparse(href).scheme and not href.startswith("/"), f"{name}: {href} is not relative"
    return language, label, (path.parent / href).resolve()


PAGES = EVERY_PAGE + [edition.prefix + page for edition in EDITIONS for page in GENERATED]


@pytest.mark.parametrize("name", PAGES)
def test_every_page_links_to_the_same_page_of_the_other_edition(built_site, name):
    edition = edition_of(name)
    language, label, target = switch_of(name)
    counterpart = other(edition)
    assert (language, label) == (counterpart.language, edition.sphinx["book_other_edition"]["label"])
    assert target.is_file(), f"{name} links to {target}, which the build does not have"
    assert target == counterpart_file(name), f"{name} links to {target}, not to {counterpart_file(name)}"
    back = switch_of(site_name(target))[2]
    assert back == (HTML_DIR / f"{name}.html").resolve(), f"{site_name(target)} links back to {back}, not {name}"


def test_both_editions_have_the_same_pages(built_site):
    names = [[Path(name).name for name in edition.pages] for edition in EDITIONS]
    assert all(found == names[0] for found in names), names


@pytest.mark.parametrize("root", ROOT_PAGES)
def test_each_front_page_offers_both_editions(open_offline, root):
    """The front page says in its text that there are two editions and links the other one's front page."""
    edition = edition_of(root)
    page = open_offline(root).page
    offer = page.locator("article .book-editions")
    assert offer.count() == 1 and offer.is_visible(), "the front page does not offer both editions"
    links = offer.locator("a")
    assert links.count() == 1
    href = links.first.get_attribute("href")
    target = (HTML_DIR / f"{root}.html").parent.joinpath(href).resolve()
    assert target == (HTML_DIR / f"{other(edition).root}.html").resolve(), href


@pytest.mark.parametrize("viewport", [None, PHONE], ids=["desktop", "phone"])
@pytest.mark.parametrize("name", [EDITIONS[0].main_pages[0], EDITIONS[1].main_pages[0]])
def test_the_link_is_visible_and_opens_the_counterpart(open_offline, name, viewport):
    loaded = open_offline(name, viewport=viewport)
    page = loaded.page
    switch = page.locator(".bd-header-article a.edition-switch")
    assert switch.count() == 1 and switch.is_visible(), "the link to the other edition is not visible"
    box = switch.bounding_box()
    width = page.evaluate("() => document.documentElement.clientWidth")
    assert box and box["x"] >= 0 and box["x"] + box["width"] <= width, box
    switch.click()
    page.wait_for_url(counterpart_file(name).as_uri(), timeout=TIMEOUT_MS)
    assert page.evaluate("() => document.documentElement.lang") == other(edition_of(name)).language
    loaded.assert_no_network()
