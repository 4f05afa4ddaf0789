"""The whole book as one PDF, printed by Chromium from the built pages.

When the HTML build has finished its pages (formulas typeset, bundles,
book.css's print rules), this extension opens each page of the table of
contents in Debian's Chromium (Playwright, no network), prepares it as a
reader's Ctrl+P does (``beforeprint``: every fold open, the solutions after
the chapter's last exercise), prints it on A4 with the page's title in the
footer, and joins the pages into ``<outdir>/<book_pdf_filename>`` (pypdf),
which the front page links. (``--builder pdfhtml`` downloads a browser of its
own, and sphinx-design's dropdowns break the single-page build.)

Each page's footer is its own title, once (Chromium's ``title`` field is the
HTML title, which repeats the book's title on the front page). The PDF says
what it is: its title is ``html_title`` (Jupyter Book's ``title``), its
author and subject ``book_pdf_author`` and ``book_pdf_subject``, its language
``language``; a viewer shows the title rather than the file name. An edition
sets these in its own config: each edition prints its own PDF into its own
output folder (the Russian ``llm-from-scratch-ch30-31.pdf`` in ``_build/html``,
the English ``llm-from-scratch-ch30-31-en.pdf`` in ``_build/html/en``), and
its front page links it.
"""

from __future__ import annotations

import asyncio
import html
import io
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.util import logging

logger = logging.getLogger(__name__)

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update"]
# A4 and its margins: tests/browser/test_book_reads_well.py lays a chapter out
# at the width left for the text, as Chromium does when it prints.
PAGE = {"format": "A4", "width_mm": 210}
MARGINS_MM = {"top": 16, "bottom": 18, "left": 14, "right": 14}
PAGE_TIMEOUT_MS = 300_000
FOOTER = '<div style="width:100%;font-size:8px;color:#555;text-align:center;">{title}</div>'


def reading_order(app: Sphinx) -> list[str]:
    """The root page, then the toc's pages in order."""
    order, queue = [], [app.config.root_doc]
    while queue:
        docname = queue.pop(0)
        if docname not in order:
            order.append(docname)
            queue[:0] = app.env.toctree_includes.get(docname, [])
    return order


async def print_pages(files: list[tuple[Path, str]], locale: str) -> list[bytes]:
    """Each page printed as after Ctrl+P, all at once (Chromium renders them in parallel)."""
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            context = await browser.new_context(locale=locale)
            # Local files, all pages at once and both editions' builds side by side:
            # on a loaded 2-core machine a page took over Playwright's 30 s to load.
            context.set_default_timeout(PAGE_TIMEOUT_MS)
            await context.route("**/*", lambda route: route.continue_()
                                if route.request.url.startswith(("file:", "data:"))
                                else route.abort())

            async def print_page(path: Path, title: str) -> bytes:
                page = await context.new_page()
                await page.goto(path.as_uri(), wait_until="load")
                await page.emulate_media(media="print")
                await page.evaluate("() => window.bookPrepareForPrint()")
                await page.evaluate("() => document.fonts.ready")
                return await page.pdf(format=PAGE["format"], print_background=True,
                                      margin={side: f"{mm}mm" for side, mm in MARGINS_MM.items()},
                                      display_header_footer=True,
                                      header_template="<div></div>",
                                      footer_template=FOOTER.format(title=html.escape(title)))

            return await asyncio.gather(*(print_page(path, title) for path, title in files))
        finally:
            await browser.close()


def print_pdf(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.name != "html":
        return
    if not CHROMIUM.exists():
        raise ExtensionError(f"the book's PDF is printed by {CHROMIUM}: install the Debian "
                             "package chromium (apt-get install chromium).")
    from pypdf import PdfWriter
    from pypdf.generic import BooleanObject, NameObject, TextStringObject

    for name in ("book_pdf_filename", "book_pdf_author", "book_pdf_subject"):
        if not getattr(app.config, name):
            raise ExtensionError(f"book_pdf: set {name} in the book's config (sphinx: config:)")
    files = [(Path(app.builder.get_outfilename(name)), app.env.titles[name].astext())
             for name in reading_order(app)]
    writer = PdfWriter()
    locale = {"ru": "ru-RU", "en": "en-US"}.get(app.config.language, app.config.language)
    for pdf in asyncio.run(print_pages(files, locale)):
        writer.append(io.BytesIO(pdf))
    writer.add_metadata({"/Title": app.config.html_title, "/Author": app.config.book_pdf_author,
                         "/Subject": app.config.book_pdf_subject})
    writer.root_object[NameObject("/Lang")] = TextStringObject(app.config.language)
    writer.create_viewer_preferences()[NameObject("/DisplayDocTitle")] = BooleanObject(True)
    target = Path(app.outdir) / app.config.book_pdf_filename
    with target.open("wb") as f:
        writer.write(f)
    logger.info("book_pdf: %s, %d pages, %d KB", target, len(writer.pages),
                target.stat().st_size // 1024)


def setup(app: Sphinx) -> dict:
    app.add_config_value("book_pdf_filename", "", "html", types=[str])
    app.add_config_value("book_pdf_author", "", "html", types=[str])
    app.add_config_value("book_pdf_subject", "", "html", types=[str])
    # After prerender_math and page_assets have finished the pages.
    app.connect("build-finished", print_pdf, priority=950)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
