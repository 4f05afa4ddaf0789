"""Where the built book is and which pages it has, plus browser helpers.

The site holds two editions (``make html`` builds both): the Russian one from
``_config.yml`` and ``_toc.yml`` into ``_build/html`` (its pages in ``book/``),
the English one from ``book/en/_config.yml`` and ``book/en/_toc.yml`` into
``_build/html/en``. A page is named by its place in ``_build/html`` without
``.html``: ``book/ch30-checks``, ``en/ch30-checks``. ``EDITIONS`` holds each
edition's pages and config; ``ALL_PAGES``, ``CHAPTER_PAGES``, ``MAIN_PAGES``,
``EXERCISE_PAGES`` and ``ROOT_PAGE`` are the Russian edition's (the course zip
and JupyterLab tests use them), ``EVERY_PAGE`` and its kin both editions'.

The tests open the pages in Debian's Chromium through Playwright, with the
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


def _load_yaml(path: Path) -> dict:
    with path.open(encoding="utf-8") as f:
        return yaml.safe_load(f)


@dataclass(frozen=True)
class Edition:
    """One edition of the site: its config and toc, where its sources and pages are."""

    language: str
    # Its folder in _build/html ("" or "en/") and the folder its toc's files are in.
    prefix: str
    source: Path
    config: dict = field(repr=False)
    toc: dict = field(repr=False)

    @property
    def sphinx(self) -> dict:
        return self.config["sphinx"]["config"]

    @property
    def html_dir(self) -> Path:
        return HTML_DIR / self.prefix

    @property
    def pdf(self) -> Path:
        return self.html_dir / self.sphinx["book_pdf_filename"]

    @property
    def search(self) -> str:
        return f"{self.prefix}search.html"

    @property
    def pages(self) -> list[str]:
        return [self.prefix + name for name in _toc_docnames(self.toc)]

    @property
    def root(self) -> str:
        return self.pages[0]

    @property
    def chapter_pages(self) -> list[str]:
        return [name for name in self.pages if CHAPTER_NAME.match(Path(name).name)]

    @property
    def main_pages(self) -> list[str]:
        """A chapter's main page is its entry in the toc; its section pages (the
        deep dives and the checks) hang below it."""
        return [self.prefix + re.sub(r"\.(ipynb|md)$", "", entry["file"]) for entry in self.toc.get("chapters", [])
                if CHAPTER_NAME.match(Path(entry.get("file", "")).name)]

    @property
    def exercise_pages(self) -> list[str]:
        """Every main page, and the section pages whose notebook has an {exercise}
        of its own (the labs' exercises sit with the labs)."""
        return [name for name in self.chapter_pages
                if name in self.main_pages or (self.source_file(name).is_file() and "{exercise}"
                                               in self.source_file(name).read_text(encoding="utf-8"))]

    def source_file(self, name: str) -> Path:
        return self.source / f"{name[len(self.prefix):]}.ipynb"


EDITIONS = (
    Edition("ru", "", REPO, _load_yaml(REPO / "_config.yml"), _load_yaml(TOC_PATH)),
    Edition("en", "en/", REPO / "book" / "en", _load_yaml(REPO / "book" / "en" / "_config.yml"),
            _load_yaml(REPO / "book" / "en" / "_toc.yml")),
)
RUSSIAN = EDITIONS[0]


def edition_of(name: str) -> Edition:
    """The edition a page (``en/ch30-checks``, ``en/search.html``) belongs to."""
    return next(edition for edition in reversed(EDITIONS) if name.startswith(edition.prefix))


# The Russian edition (the first): the course zip and JupyterLab tests read these.
TOC = RUSSIAN.toc
BOOK_CONFIG = RUSSIAN.config
SPHINX_CONFIG = RUSSIAN.sphinx
ALL_PAGES = RUSSIAN.pages
ROOT_PAGE = RUSSIAN.root
CHAPTER_PAGES = RUSSIAN.chapter_pages
MAIN_PAGES = RUSSIAN.main_pages
EXERCISE_PAGES = RUSSIAN.exercise_pages
# Both editions' pages: the built site's tests run over these.
EVERY_PAGE = [name for edition in EDITIONS for name in edition.pages]
EVERY_CHAPTER_PAGE = [name for edition in EDITIONS for name in edition.chapter_pages]
EVERY_MAIN_PAGE = [name for edition in EDITIONS for name in edition.main_pages]
EVERY_EXERCISE_PAGE = [name for edition in EDITIONS for name in edition.exercise_pages]
ROOT_PAGES = [edition.root for edition in EDITIONS]


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
