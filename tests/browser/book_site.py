"""Where the built book is and which pages it has, plus browser helpers.

The tests read the pages listed in ``_toc.yml`` from ``_build/html`` (built by
``make html``) and open them in Debian's Chromium through Playwright, with the
network cut off: every request that is not a ``file://`` URL is recorded and
aborted, so a page that needs another host shows up as a failure. Pages open
in a 1280 x 900 window, where the book's text column is 672 CSS px wide.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
HTML_DIR = REPO / "_build" / "html"
TOC_PATH = REPO / "_toc.yml"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # Docker's /dev/shm is 64 MB: use /tmp for shared memory instead.
    "--disable-dev-shm-usage",
]
# A chapter is a toc entry whose file name starts with "ch<number>".
CHAPTER_NAME = re.compile(r"^ch\d+")
# URL schemes that never leave the machine.
LOCAL_SCHEMES = ("file:", "data:", "blob:", "about:")
TIMEOUT_MS = 30_000
VIEWPORT = {"width": 1280, "height": 900}
# On CI a missing browser fails the run instead of skipping the tests.
ON_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _toc_docnames(toc: dict) -> list[str]:
    """Every file of a jb-book toc, in reading order: root, then parts/chapters/sections."""
    names = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                names.append(entry["file"])
            walk(entry.get("sections"))
            walk(entry.get("chapters"))

    walk(toc.get("chapters"))
    for part in toc.get("parts") or []:
        walk(part.get("chapters"))
    # A toc entry may carry its extension; the HTML page drops it.
    return [re.sub(r"\.(ipynb|md)$", "", name) for name in names]


def _load_toc() -> dict:
    with TOC_PATH.open(encoding="utf-8") as f:
        return yaml.safe_load(f)


TOC = _load_toc()
# The book's own settings (_config.yml): what an edition configures.
with (REPO / "_config.yml").open(encoding="utf-8") as _config:
    BOOK_CONFIG = yaml.safe_load(_config)
SPHINX_CONFIG = BOOK_CONFIG["sphinx"]["config"]
ALL_PAGES = _toc_docnames(TOC)
ROOT_PAGE = ALL_PAGES[0]
CHAPTER_PAGES = [name for name in ALL_PAGES if CHAPTER_NAME.match(Path(name).name)]
# A chapter's main page is its entry in the toc; its section pages (the deep
# dives and the checks) hang below it.
MAIN_PAGES = [re.sub(r"\.(ipynb|md)$", "", entry["file"]) for entry in TOC.get("chapters", [])
              if CHAPTER_NAME.match(Path(entry.get("file", "")).name)]
# The pages with checked exercises: every main page, and the section pages whose
# notebook has an {exercise} of its own (the labs' exercises sit with the labs).
EXERCISE_PAGES = [name for name in CHAPTER_PAGES
                  if name in MAIN_PAGES or "{exercise}" in (REPO / f"{name}.ipynb").read_text(encoding="utf-8")]


def chapter_of(docname: str) -> str:
    """The chapter number of a chapter page: «30» for book/ch30-learned-heads."""
    return CHAPTER_NAME.match(Path(docname).name)[0][2:]


def page_path(docname: str) -> Path:
    return HTML_DIR / f"{docname}.html"


@dataclass
class OfflinePage:
    """A page opened with the network blocked, and what happened while it ran."""

    page: object
    # URLs on another host: aborted by the route, or seen as a request at all.
    blocked: list[str] = field(default_factory=list)
    requested: list[str] = field(default_factory=list)
    # Every local request (file:, data:, ...), in order.
    local: list[str] = field(default_factory=list)
    # Uncaught JavaScript errors, errors logged to the console and local
    # files that failed to load.
    page_errors: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    failed_local: list[str] = field(default_factory=list)

    def assert_no_errors(self) -> None:
        """No uncaught error, nothing logged as an error, no local file missing."""
        assert not self.page_errors, f"JavaScript errors: {self.page_errors}"
        assert not self.console_errors, f"errors logged to the console: {self.console_errors}"
        assert not self.failed_local, f"local files that failed to load: {self.failed_local}"

    def assert_no_network(self) -> None:
        external = sorted(set(self.blocked) | set(self.requested))
        assert not external, (
            "the page tried to load resources from another host (blocked): "
            + ", ".join(external)
        )


def wait_for_images(page) -> None:
    """Wait until every <img> finished loading or failed."""
    page.evaluate(
        """() => Promise.all([...document.images].map(img => {
            img.loading = 'eager';
            return img.complete ? null : new Promise(done => {
                img.addEventListener('load', done, {once: true});
                img.addEventListener('error', done, {once: true});
            });
        }))"""
    )
