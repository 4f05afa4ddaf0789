"""Fixtures for the end-to-end checks: the built HTML book (see book_site.py),
the downloaded course and the chapters in JupyterLab.

Without /usr/bin/chromium the browser tests are skipped, except on CI
(``CI=true``), where they fail: CI must never pass without running them."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from book_site import (
    CHROMIUM,
    CHROMIUM_ARGS,
    HTML_DIR,
    LOCAL_SCHEMES,
    ON_CI,
    TIMEOUT_MS,
    VIEWPORT,
    OfflinePage,
    edition_of,
    page_path,
)

BUILD_TIMEOUT_S = 900  # make html takes about 25 s


@pytest.fixture(scope="session")
def built_site() -> Path:
    """The built HTML; a missing build fails (the tests must not pass vacuously).

    ``make test`` builds the book beside the tests and names in
    ``BOOK_BUILD_STATUS`` the file where the build writes its exit status:
    the tests that read the book wait for it."""
    status = os.environ.get("BOOK_BUILD_STATUS")
    if status:
        deadline = time.monotonic() + BUILD_TIMEOUT_S
        while not Path(status).is_file() or not Path(status).read_text().strip():
            if time.monotonic() > deadline:
                pytest.fail(f"the book build beside the tests did not finish in {BUILD_TIMEOUT_S} s")
            time.sleep(0.5)
        if Path(status).read_text().strip() != "0":
            pytest.fail("the book build beside the tests failed: its log is _build/html-build.log")
    index = HTML_DIR / "index.html"
    if not index.is_file():
        pytest.fail(
            f"{index} does not exist: build the book first with `make html` "
            "(the browser tests check the built HTML)."
        )
    return HTML_DIR


@pytest.fixture(autouse=True)
def _book_is_built(request):
    """Every test here but JupyterLab's reads the built book: it waits for it."""
    if request.path.name != "test_jupyterlab.py":
        request.getfixturevalue("built_site")


@pytest.fixture(scope="session")
def chromium():
    """Debian's Chromium driven by Playwright; skipped without it (failed on CI)."""
    if not CHROMIUM.exists():
        message = (
            f"{CHROMIUM} not found: the browser tests need Debian's Chromium "
            "(install the Debian package `chromium`: apt-get install chromium)."
        )
        if ON_CI:
            pytest.fail(message + " CI=true: a missing browser fails the run.")
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="session")
def browser(built_site, chromium):
    """Chromium for the built book: a missing build fails first."""
    return chromium


@pytest.fixture(scope="module")
def open_offline(browser, built_site):
    """Return a function that opens a built page (docname or file name) offline.

    Each module opens a page once and shares it between its tests (reloading a
    chapter per test made the suite slow): the same target, query and window
    give the same page. Tests that change a page (open folds, print media)
    come last in their module, or ask for their own window size. An error
    thrown or logged to the console on any page fails the module's teardown.
    """
    contexts = []
    opened: dict[tuple, OfflinePage] = {}

    def open_(target: str, query: str = "", viewport: dict | None = None) -> OfflinePage:
        key = (target, query, tuple(sorted((viewport or VIEWPORT).items())))
        if key in opened:
            return opened[key]
        path = built_site / target if target.endswith(".html") else page_path(target)
        if not path.is_file():
            pytest.fail(f"{path} is missing from the build: run `make html` first.")
        locale = {"ru": "ru-RU", "en": "en-US"}[edition_of(target).language]
        context = browser.new_context(locale=locale, viewport=viewport or VIEWPORT)
        context.set_default_timeout(TIMEOUT_MS)
        contexts.append(context)
        result = OfflinePage(page=None)

        def route(route):
            url = route.request.url
            if url.startswith(LOCAL_SCHEMES):
                route.continue_()
            else:
                result.blocked.append(url)
                route.abort("internetdisconnected")

        context.route("**/*", route)
        page = context.new_page()
        result.page = page
        # Belt and braces: requests that bypass routing are caught here too.
        page.on(
            "request",
            lambda r: result.local.append(r.url)
            if r.url.startswith(LOCAL_SCHEMES)
            else result.requested.append(r.url),
        )
        page.on("pageerror", lambda e: result.page_errors.append(str(e)))
        page.on("console", lambda m: result.console_errors.append(m.text) if m.type == "error" else None)
        page.on(
            "requestfailed",
            lambda r: result.failed_local.append(f"{r.url} ({r.failure})")
            if r.url.startswith("file:")
            else None,
        )
        page.goto(path.as_uri() + query, wait_until="load")
        opened[key] = result
        return result

    yield open_
    for context in contexts:
        context.close()
    # Whatever a module did with its pages (phone windows, print media, clicks),
    # an error thrown or logged on any of them fails the module.
    errors = [f"{key[0]}{key[1]}: {error}" for key, loaded in opened.items()
              for error in loaded.page_errors + loaded.console_errors]
    if errors:
        pytest.fail("errors on the book's pages: " + "; ".join(errors[:10]))
