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

import asyncio
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


async def print_pages(files: list[Path]) -> list[bytes]:
    """Each page printed as after Ctrl+P, all at once (Chromium renders them in parallel)."""
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            context = await browser.new_context(locale="ru-RU")
            await context.route("**/*", lambda route: route.continue_()
                                if route.request.url.startswith(("file:", "data:"))
                                else route.abort())

            async def print_page(path: Path) -> bytes:
                page = await context.new_page()
                await page.goto(path.as_uri(), wait_until="load")
                await page.emulate_media(media="print")
                await page.evaluate("() => window.bookPrepareForPrint()")
                await page.evaluate("() => document.fonts.ready")
                return await page.pdf(format="A4", print_background=True,
                                      margin={"top": "16mm", "bottom": "18mm",
                                              "left": "14mm", "right": "14mm"},
                                      display_header_footer=True,
                                      header_template="<div></div>", footer_template=FOOTER)

            return await asyncio.gather(*(print_page(path) for path in files))
        finally:
            await browser.close()


def print_pdf(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.name != "html":
        return
    if not CHROMIUM.exists():
        raise ExtensionError(f"the book's PDF is printed by {CHROMIUM}: install the Debian "
                             "package chromium (apt-get install chromium).")
    from pypdf import PdfWriter

    files = [Path(app.builder.get_outfilename(name)) for name in reading_order(app)]
    writer = PdfWriter()
    for pdf in asyncio.run(print_pages(files)):
        writer.append(io.BytesIO(pdf))
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
