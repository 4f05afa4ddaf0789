"""Every page links to the same page of the other edition.

The site holds two editions: the Russian one in ``_build/html`` (its pages in
``book/``) and the English one in ``_build/html/en`` (its pages at its root).
``book_other_edition`` in an edition's config says where the other one is:
``root``, its site root seen from this edition's root (``en/``, ``../``),
``folder``, the folder of its pages there (``""``, ``book/``), and the
``label``, ``title`` and ``language`` of the link. A page of the table of
contents links to the page of the same name there; a page Sphinx makes
(``search``, ``genindex``) to the other edition's own.

``book/_templates/edition-switch.html`` draws the link in the article's
header, on every page and at every width; the page's ``<head>`` names the
counterpart as ``<link rel="alternate" hreflang=...>``.
"""

from __future__ import annotations

import html
import posixpath

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError

KEYS = ("language", "label", "title", "root", "folder")


def counterpart(pagename: str, is_doc: bool, root_doc: str, other: dict) -> str:
    """The other edition's page, as a URL relative to this page."""
    folder = posixpath.dirname(root_doc)
    folder = f"{folder}/" if folder else ""
    if is_doc:
        if not pagename.startswith(folder):
            raise ExtensionError(f"edition_links: {pagename} is not in {folder}, the root page's folder")
        target = other["folder"] + pagename[len(folder):]
    else:
        target = pagename  # search, genindex: the other edition's own, at its root
    return "../" * pagename.count("/") + other["root"] + target + ".html"


def check_config(app: Sphinx, config) -> None:
    other = config.book_other_edition
    missing = [key for key in KEYS if not isinstance(other.get(key), str)]
    if missing:
        raise ExtensionError(f"edition_links: book_other_edition needs {', '.join(missing)} "
                             "(the book's config, sphinx: config:)")


def add_link(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    if app.builder.format != "html":
        return
    other = app.config.book_other_edition
    href = counterpart(pagename, pagename in app.env.all_docs, app.config.root_doc, other)
    context["other_edition"] = {**other, "href": href}
    context["metatags"] = context.get("metatags", "") + (
        f'\n<link rel="alternate" hreflang="{html.escape(other["language"])}" href="{html.escape(href)}" />')


def setup(app: Sphinx) -> dict:
    app.add_config_value("book_other_edition", {}, "html", types=[dict])
    app.connect("config-inited", check_config)
    app.connect("html-page-context", add_link)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
