"""Each page loads a few files, not forty: bundles, unused CSS dropped, the icons it shows.

After the build has written its pages (and ``prerender_math`` has typeset
their formulas), for every page written:

* its local stylesheets become one bundle, in their order (``@import`` inlined,
  ``url()`` paths rewritten), from which PurgeCSS (``purge_css.cjs``) drops the
  rules no page or script of the book can match;
* its scripts become two bundles in their order: the ones the page runs
  while it parses, and the deferred ones; an inline script stays inline where
  its text differs between pages (``pagename``), and a bundle ends there;
* the Font Awesome icons: the theme's 1.5 MB ``fontawesome.js`` is not loaded
  (``book/_templates/static/webpack-macros.html`` drops it, see
  ``check_theme``); its CSS and web font draw the icons, and the font is cut
  down to the icons the remaining CSS names, inline as a ``data:`` URI.

Bundles are named by their content (``_static/bundle/<hash>.css|js``), so
pages with the same files share them. Source maps and the unused script are
removed from the output.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import shutil
import subprocess
from pathlib import Path

from fontTools import subset
from fontTools.ttLib import TTFont
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.util import logging

logger = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
PURGE = HERE / "purge_css.cjs"
# book/_templates/static/webpack-macros.html is this version's file without
# the fontawesome.js line (tests/browser/test_built_html_assets.py compares).
THEME_VERSION = "0.17.1"
BUNDLE_DIR = "_static/bundle"

STYLESHEET = re.compile(r'<link\b(?=[^>]*\brel="stylesheet")[^>]*\bhref="(?P<href>[^"]+)"[^>]*/?>\n?')
PRELOAD = re.compile(r'<link\b(?=[^>]*\brel="preload")(?=[^>]*\bas="script")[^>]*/?>\n?')
SCRIPT = re.compile(r"<script\b(?P<attrs>[^>]*)>(?P<body>.*?)</script>\n?", re.S)
SRC = re.compile(r'\bsrc="(?P<src>[^"]+)"')
CSS_URL = re.compile(r"""url\(\s*(['"]?)(?P<url>[^'")]+)\1\s*\)""")
CSS_IMPORT = re.compile(r"""@import\s+(?:url\()?\s*['"](?P<url>[^'"]+)['"]\s*\)?\s*;""")
FONT_FACE = re.compile(r"@font-face\{(?P<body>[^}]*Font Awesome[^}]*)\}")
FONT_SRC = re.compile(r"""src:url\(['"]?(?P<url>[^)'"]+\.woff2)['"]?\)[^;}]*""")
# An icon's code in a content: rule or a custom property (--pst-icon-bell:"\f0f3").
ICON = re.compile(r'"\\(?P<code>[ef][0-9a-f]{3})"')


def check_theme(app: Sphinx) -> None:
    """The template override is a copy of one theme version's file: refuse another."""
    import pydata_sphinx_theme

    if pydata_sphinx_theme.__version__ != THEME_VERSION:
        raise ExtensionError(
            f"book/_templates/static/webpack-macros.html overrides pydata-sphinx-theme "
            f"{THEME_VERSION}'s file, but {pydata_sphinx_theme.__version__} is installed: "
            "copy the new version's file, drop its fontawesome.js line, update "
            "THEME_VERSION in book/_ext/page_assets.py and the pin in requirements.txt.")
    app.builder.page_assets_pages = set()


def remember_page(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    if app.builder.format == "html":
        app.builder.page_assets_pages.add(pagename)


def local(url: str) -> bool:
    return not re.match(r"^([a-z][a-z0-9+.-]*:|//|#)", url, re.I)


def read_css(path: Path, outdir: Path, bundle_dir: Path, seen: set[Path]) -> str:
    """A stylesheet's text with its imports inlined and its URLs relative to the bundle."""
    if path in seen:
        return ""
    seen.add(path)
    text = path.read_text(encoding="utf-8")

    def rebase(match: re.Match) -> str:
        url = match["url"]
        if not local(url):
            return match[0]
        target = (path.parent / url.split("?")[0]).resolve()
        return f'url("{os.path.relpath(target, bundle_dir)}")'

    def inline(match: re.Match) -> str:
        return read_css((path.parent / match["url"]).resolve(), outdir, bundle_dir, seen)

    return CSS_URL.sub(rebase, CSS_IMPORT.sub(inline, text))


def write_bundle(outdir: Path, text: str, suffix: str) -> Path:
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    path = outdir / BUNDLE_DIR / f"{digest}{suffix}"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def relative(page: Path, target: Path) -> str:
    return Path(os.path.relpath(target, page.parent)).as_posix()


def file_of(page: Path, url: str) -> Path:
    return (page.parent / url.split("?")[0]).resolve()


class Page:
    """One written page and the bundles that replace its stylesheets and scripts."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.text = path.read_text(encoding="utf-8")

    def stylesheets(self) -> list[Path]:
        return [file_of(self.path, m["href"]) for m in STYLESHEET.finditer(self.text)
                if local(m["href"])]

    def scripts(self) -> list[tuple[str, str, Path | None]]:
        """(kind, text, file) for each script: kind is sync, defer or inline."""
        found = []
        for match in SCRIPT.finditer(self.text):
            src = SRC.search(match["attrs"])
            if src is None:
                found.append(("inline", match[0], None))
            elif local(src["src"]) and "async" not in match["attrs"]:
                kind = "defer" if re.search(r"\bdefer\b", match["attrs"]) else "sync"
                found.append((kind, match[0], file_of(self.path, src["src"])))
            else:
                found.append(("other", match[0], None))
        return found


def style_text(page: Page, outdir: Path) -> str | None:
    """The page's local stylesheets as one text, in their order."""
    sheets = page.stylesheets()
    if not sheets:
        return None
    seen: set[Path] = set()
    return "\n".join(read_css(sheet, outdir, outdir / BUNDLE_DIR, seen) for sheet in sheets)


def link_styles(page: Page, bundle: Path) -> None:
    """The first local stylesheet link points to the bundle; the others go."""
    first = True

    def replace(match: re.Match) -> str:
        nonlocal first
        if not local(match["href"]):
            return match[0]
        if first:
            first = False
            return f'<link rel="stylesheet" href="{relative(page.path, bundle)}" />\n'
        return ""

    page.text = STYLESHEET.sub(replace, page.text)


def finish_styles(outdir: Path, text: str, content: list[Path]) -> Path:
    """Purge and inline the icon font, then name the bundle by what it holds.

    The name comes from the purged text: an incremental build, which purges
    against its own pages only, never overwrites a bundle that the pages it
    left alone still use.
    """
    draft = write_bundle(outdir, text, ".draft.css")
    purge(draft, content)
    inline_icon_font(draft)
    bundle = write_bundle(outdir, draft.read_text(encoding="utf-8"), ".css")
    draft.unlink()
    return bundle


def bundle_scripts(page: Page, outdir: Path, shared_inline: set[str]) -> list[Path]:
    """Replace runs of scripts by bundles, keeping the order the page ran them in."""
    replacements: dict[str, str] = {}
    bundles: list[Path] = []
    run: list[tuple[str, Path | None]] = []  # (tag, file or None for inline text)

    def flush() -> None:
        files = [f for _, f in run if f is not None]
        if files:
            # ';' first: no file's "use strict" becomes the whole bundle's.
            parts = [";"] + [f.read_text(encoding="utf-8") if f else
                             SCRIPT.match(tag)["body"] for tag, f in run]
            bundle = write_bundle(outdir, "\n;\n".join(parts), ".js")
            bundles.append(bundle)
            replacements[run[0][0]] = f'<script src="{relative(page.path, bundle)}"></script>\n'
            for tag, _ in run[1:]:
                replacements[tag] = ""
        run.clear()

    scripts = page.scripts()
    for kind, tag, path in scripts:
        if kind == "sync":
            run.append((tag, path))
        elif kind == "inline" and run and tag in shared_inline:
            run.append((tag, None))
        else:
            flush()
    flush()
    deferred = [(tag, path) for kind, tag, path in scripts if kind == "defer"]
    if deferred:
        text = "\n;\n".join([";"] + [path.read_text(encoding="utf-8") for _, path in deferred])
        bundle = write_bundle(outdir, text, ".js")
        bundles.append(bundle)
        replacements[deferred[0][0]] = (
            f'<script defer src="{relative(page.path, bundle)}"></script>\n')
        for tag, _ in deferred[1:]:
            replacements[tag] = ""
    page.text = SCRIPT.sub(lambda m: replacements.get(m[0], m[0]), page.text)
    # Preloads of files that are now inside a bundle would be fetched for nothing.
    page.text = PRELOAD.sub("", page.text)
    return bundles


def purge(bundle: Path, content: list[Path]) -> None:
    node = shutil.which("node")
    if node is None:
        raise ExtensionError("page_assets needs Node.js and `npm ci` (make book runs it).")
    done = subprocess.run([node, str(PURGE), str(bundle), *map(str, content)],
                          capture_output=True, text=True, cwd=REPO, check=False)
    if done.returncode != 0:
        raise ExtensionError(f"purge_css.cjs failed: {done.stderr.strip()[-2000:]}")


def inline_icon_font(bundle: Path) -> None:
    """Cut the Font Awesome fonts down to the icons the CSS still names, inline."""
    css = bundle.read_text(encoding="utf-8")
    # Written as escapes ("\f0c9") or as the private-use characters themselves.
    icons = {int(code, 16) for code in ICON.findall(css)}
    icons |= {ord(c) for c in css if 0xE000 <= ord(c) <= 0xF8FF}

    def face(match: re.Match) -> str:
        body = match["body"]
        src = FONT_SRC.search(body)
        if src is None:
            return match[0]
        font = TTFont((bundle.parent / src["url"]).resolve())
        options = subset.Options()
        options.flavor = "woff2"
        subsetter = subset.Subsetter(options)
        subsetter.populate(unicodes=icons & set(font.getBestCmap()))
        subsetter.subset(font)
        out = io.BytesIO()
        font.save(out)
        data = base64.b64encode(out.getvalue()).decode("ascii")
        body = FONT_SRC.sub(f'src:url("data:font/woff2;base64,{data}") format("woff2")', body)
        return "@font-face{" + body + "}"

    bundle.write_text(FONT_FACE.sub(face, css), encoding="utf-8")


def bundle_pages(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir).resolve()
    pages = [Page(Path(app.builder.get_outfilename(name)).resolve())
             for name in sorted(app.builder.page_assets_pages)]
    if not pages:
        return
    # An inline script whose text is the same on every page joins a bundle.
    inline = [{tag for kind, tag, _ in page.scripts() if kind == "inline"} for page in pages]
    shared_inline = set.intersection(*inline) if len(pages) > 1 else inline[0]
    styles = {page.path: style_text(page, outdir) for page in pages}
    scripts: set[Path] = set()
    for page in pages:
        scripts.update(bundle_scripts(page, outdir, shared_inline))
    # The pages on disk still hold every class they use; the scripts add theirs.
    content = [page.path for page in pages] + sorted(scripts)
    bundles = {text: finish_styles(outdir, text, content)
               for text in sorted({t for t in styles.values() if t is not None})}
    for page in pages:
        if styles[page.path] is not None:
            link_styles(page, bundles[styles[page.path]])
        page.path.write_text(page.text, encoding="utf-8")
    unused = {*outdir.glob("_static/**/*.map"), outdir / "_static/scripts/fontawesome.js"}
    for path in unused:
        path.unlink(missing_ok=True)
    logger.info("page_assets: %d pages, %d stylesheet and %d script bundles",
                len(pages), len(bundles), len(scripts))


def setup(app: Sphinx) -> dict:
    # book/_static (html_static_path): phones, print and PDF, figure links.
    app.add_css_file("book.css")
    app.add_js_file("book.js")
    app.connect("builder-inited", check_theme)
    app.connect("html-page-context", remember_page)
    # After prerender_math (priority 500) has written its formulas into the pages.
    app.connect("build-finished", bundle_pages, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": False}
