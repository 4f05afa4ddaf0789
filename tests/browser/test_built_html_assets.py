"""Static check of the built HTML: no page or stylesheet loads anything from another host.

Links to papers (<a href="https://...">) are fine: a reader follows them on purpose.
Scripts, stylesheets, fonts, images and frames must all come from _build/html.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from book_site import HTML_DIR

REMOTE = re.compile(r"^\s*(https?:)?//", re.IGNORECASE)
# Attributes that make the browser fetch something, per tag.
FETCHING = {
    "script": ("src",),
    "img": ("src", "srcset"),
    "iframe": ("src",),
    "embed": ("src",),
    "object": ("data",),
    "source": ("src", "srcset"),
    "audio": ("src",),
    "video": ("src", "poster"),
    "track": ("src",),
    "input": ("src",),
}
# <link rel=...> values that fetch their href.
FETCHING_LINK_RELS = {"stylesheet", "preload", "prefetch", "modulepreload", "icon", "manifest", "font"}
CSS_URL = re.compile(r"""url\(\s*['"]?([^'")]+)""")
CSS_IMPORT = re.compile(r"""@import\s+(?:url\()?\s*['"]?([^'");\s]+)""")
# XML namespace names look like URLs but are never fetched.
NAMESPACE = re.compile(r"xmlns(:\w+)?=['\"]https?://", re.IGNORECASE)


class _RemoteAssets(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for name in FETCHING.get(tag, ()):
            value = attrs.get(name) or ""
            if any(REMOTE.match(part) for part in value.split(",")):
                self.found.append(f"<{tag} {name}={value!r}>")
        if tag == "link":
            rels = set((attrs.get("rel") or "").lower().split())
            if rels & FETCHING_LINK_RELS and REMOTE.match(attrs.get("href") or ""):
                self.found.append(f"<link rel={attrs.get('rel')!r} href={attrs.get('href')!r}>")
        style = attrs.get("style") or ""
        self.found += [f"style url({u})" for u in CSS_URL.findall(style) if REMOTE.match(u)]
        self._in_script = tag == "script" and not attrs.get("src")

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = False

    def handle_data(self, data):
        # An inline script that names a remote URL may load it (e.g. a CDN fallback).
        if self._in_script and re.search(r"https?://", NAMESPACE.sub("", data)):
            self.found.append(f"inline <script> mentions a URL: {data.strip()[:120]!r}")


def _pages():
    for path in sorted(HTML_DIR.rglob("*.html")):
        rel = path.relative_to(HTML_DIR)
        # _static/*.html are theme templates and _sources holds page sources (in
        # each edition: en/_static too).
        if {"_static", "_sources"} & set(rel.parts[:-1]):
            continue
        yield path


def test_html_loads_nothing_from_another_host(built_site):
    pages = list(_pages())
    assert pages, f"no HTML pages under {built_site}"
    problems = []
    for path in pages:
        parser = _RemoteAssets()
        parser.feed(path.read_text(encoding="utf-8"))
        problems += [f"{path.relative_to(built_site)}: {item}" for item in parser.found]
    assert not problems, "remote assets in the built HTML:\n" + "\n".join(problems)


def test_stylesheets_load_nothing_from_another_host(built_site):
    problems = []
    for path in sorted(built_site.glob("**/_static/**/*.css")):
        text = path.read_text(encoding="utf-8", errors="replace")
        for url in CSS_URL.findall(text) + CSS_IMPORT.findall(text):
            if REMOTE.match(url):
                problems.append(f"{path.relative_to(built_site)}: {url}")
    assert not problems, "stylesheets that fetch from another host:\n" + "\n".join(problems)
