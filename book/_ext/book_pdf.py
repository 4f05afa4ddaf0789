"""The whole book as one PDF, printed by Chromium from the built pages.

When the HTML build has finished its pages (formulas typeset, bundles,
book.css's print rules), this extension opens each page of the table of
contents in Debian's Chromium (Playwright, no network), prepares it as a
reader's Ctrl+P does (``beforeprint``: every fold open, the solutions after
the chapter's last exercise), prints it on A4 with the page's title in the
footer, and joins the pages into ``<outdir>/<PDF_NAME>`` (pypdf), which the
front page links. (``--builder pdfhtml`` downloads a browser of its own, and
sphinx-design's dropdowns break the single-page build.)
"""

from __future__ import annotations

import io
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.util import logging

logger = logging.getLogger(__name__)

PDF_NAME = "llm-from-scratch-ch30-31.pdf"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update"]
FOOTER = ('<div style="width:100%;font-size:8px;color:#555;text-align:center;">'
          '<span class="title"></span></div>')


def reading_order(app: Sphinx) -> list[str]:
    """The root page, then the toc's pages in order."""
    order, queue = [], [app.config.root_doc]
    while queue:
        docname = queue.pop(0)
        if docname not in order:
            order.append(docname)
            queue[:0] = app.env.toctree_includes.get(docname, [])
    return order


def print_pdf(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.name != "html":
        return
    if not CHROMIUM.exists():
        raise ExtensionError(f"the book's PDF is printed by {CHROMIUM}: install the Debian "
                             "package chromium (apt-get install chromium).")
    from playwright.sync_api import sync_playwright
    from pypdf import PdfWriter

    writer = PdfWriter()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(locale="ru-RU")
            context.route("**/*", lambda route: route.continue_()
                          if route.request.url.startswith(("file:", "data:")) else route.abort())
            page = context.new_page()
            for docname in reading_order(app):
                page.goto(Path(app.builder.get_outfilename(docname)).as_uri(), wait_until="load")
                page.emulate_media(media="print")
                page.evaluate("() => window.bookPrepareForPrint()")
                page.evaluate("() => document.fonts.ready")
                pdf = page.pdf(format="A4", print_background=True,
                               margin={"top": "16mm", "bottom": "18mm",
                                       "left": "14mm", "right": "14mm"},
                               display_header_footer=True, header_template="<div></div>",
                               footer_template=FOOTER)
                writer.append(io.BytesIO(pdf))
        finally:
            browser.close()
    writer.add_metadata({"/Title": app.config.project})
    target = Path(app.outdir) / PDF_NAME
    with target.open("wb") as f:
        writer.write(f)
    logger.info("book_pdf: %s, %d pages, %d KB", target, len(writer.pages),
                target.stat().st_size // 1024)


def setup(app: Sphinx) -> dict:
    # After prerender_math and page_assets have finished the pages.
    app.connect("build-finished", print_pdf, priority=950)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
