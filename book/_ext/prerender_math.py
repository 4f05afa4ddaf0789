"""Formulas typeset when the book is built, not in the reader's browser.

The pages carry MathJax's CommonHTML output (the same MathJax 3.2.2 and
TeX fonts that the browser used to run), so a reader's browser loads no
1.2 MB script and typesets nothing, and the formulas look as before.

* Sphinx writes each formula as ``sphinx.ext.mathjax`` does (``\\(…\\)`` in a
  ``span.math``, ``\\[…\\]`` in a ``div.math``), under the renderer name
  ``prerendered``, which installs no script.
* When the build has written its pages, ``mathjax_render.cjs`` (Node, the npm
  package ``mathjax-full`` from ``package-lock.json``) typesets the formulas
  of every page written, one run for the whole build. Each page gets the
  CSS of the characters it uses and, inline as ``data:`` URIs, the TeX fonts
  cut down to those characters (fontTools): no request for a font file.
* A formula MathJax cannot typeset (an unknown macro, a TeX error) is a build
  warning naming the page and the TeX, so ``-W`` fails; so is any math
  element left untouched.

The scale matches what MathJax computed in the browser for the book's text
font (it sizes TeX's x-height to the text's): 127.3 %.
"""

from __future__ import annotations

import base64
import html
import io
import json
import re
import shutil
import subprocess
from pathlib import Path

from fontTools import subset
from fontTools.ttLib import TTFont
from sphinx.application import Sphinx
from sphinx.ext import mathjax
from sphinx.util import logging

logger = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
RENDERER = HERE / "mathjax_render.cjs"
FONTS = REPO / "node_modules" / "mathjax-full" / "es5" / "output" / "chtml" / "fonts" / "woff-v2"
# MathJax in the browser scaled TeX to the x-height of the book's sans-serif
# text: font-size 127.3 % on nearly every formula of the old pages.
SCALE = 1.273

MATH = re.compile(
    r'<(?P<tag>span|div) class="math notranslate nohighlight"(?P<attrs>[^>]*)>'
    r"(?P<body>.*?)</(?P=tag)>",
    re.S,
)
EQNO = re.compile(r'<span class="eqno">.*?</span>', re.S)
FONT_FACE = re.compile(r"@font-face\s*(?:/\*.*?\*/)?\s*\{\s*font-family:\s*([\w-]+);\s*"
                       r'src:\s*url\("mathjax-fonts/([\w-]+\.woff)"\)\s*format\("woff"\);\s*\}', re.S)
FAMILY_CLASS = re.compile(r"\.(TEX-[\w]+)\s*\{\s*font-family:\s*MJXZERO,\s*([\w-]+);?\s*\}")
CHARACTER = re.compile(r"mjx-c\.mjx-c[0-9A-F]+(?P<cls>(?:\.TEX-\w+)?)::before\s*\{[^}]*?"
                       r'content:\s*"(?P<content>(?:[^"\\]|\\[0-9A-Fa-f]+ ?|\\.)*)"', re.S)
CSS_ESCAPE = re.compile(r"\\([0-9A-Fa-f]{1,6}) ?|\\(.)")


def split_formula(tag: str, body: str) -> tuple[str, bool]:
    """The TeX and display flag of one math element as sphinx.ext.mathjax wrote it."""
    tex = html.unescape(EQNO.sub("", body)).strip()
    if tag == "span" and tex.startswith(r"\(") and tex.endswith(r"\)"):
        return tex[2:-2], False
    if tex.startswith(r"\[") and tex.endswith(r"\]"):
        return tex[2:-2], True
    # :nowrap: display math (amsmath environments) has no delimiters.
    return tex, tag == "div"


def css_text(value: str) -> str:
    return CSS_ESCAPE.sub(lambda m: chr(int(m[1], 16)) if m[1] else m[2], value)


def inline_fonts(css: str) -> str:
    """Replace each @font-face URL by a data: URI of the font cut down to the page's characters."""
    family_of_class = {cls: family for cls, family in FAMILY_CLASS.findall(css)}
    used: dict[str, set[str]] = {}
    for match in CHARACTER.finditer(css):
        family = family_of_class.get(match["cls"].lstrip("."), "MJXTEX")
        used.setdefault(family, set()).update(css_text(match["content"]))

    def face(match: re.Match) -> str:
        family, filename = match[1], match[2]
        characters = used.get(family)
        if not characters and family != "MJXZERO":
            return ""  # a font no character of this page uses
        font = TTFont(FONTS / filename)
        if characters:
            options = subset.Options()
            options.flavor = "woff"
            options.notdef_outline = True
            subsetter = subset.Subsetter(options)
            subsetter.populate(unicodes={ord(c) for c in characters})
            subsetter.subset(font)
        else:
            font.flavor = "woff"
        out = io.BytesIO()
        font.save(out)
        data = base64.b64encode(out.getvalue()).decode("ascii")
        return (f"@font-face {{ font-family: {family}; "
                f'src: url("data:font/woff;base64,{data}") format("woff"); }}')

    return FONT_FACE.sub(face, css)


# Repeated on each of hundreds of formulas a page: the scale and position go to
# the page's CSS once; HTML parses <math> as MathML without its namespace.
TRIM = (
    (f' style="font-size: {SCALE:.1%}; position: relative;"', ""),
    (' xmlns="http://www.w3.org/1998/Math/MathML"', ""),
    (' unselectable="on"', ""),
)
CONTAINER_CSS = (f'mjx-container[jax="CHTML"] {{ font-size: {SCALE:.1%}; position: relative; }}\n'
                 'mjx-assistive-mml { user-select: none; }\n')


def trim(output: str) -> str:
    for old, new in TRIM:
        output = output.replace(old, new)
    return output


def render_pages(pages: list[list[dict]]) -> list[dict]:
    node = shutil.which("node")
    if node is None or not FONTS.is_dir():
        raise RuntimeError(
            "prerender_math needs Node.js and the npm package mathjax-full: run `npm ci` "
            "in the repository (make book does), with Node 18 or newer installed.")
    request = json.dumps({"scale": SCALE, "assistive": True, "pages": pages})
    done = subprocess.run([node, str(RENDERER)], input=request, capture_output=True,
                          text=True, cwd=REPO, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"mathjax_render.cjs failed: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout)["pages"]


def start(app: Sphinx) -> None:
    app.builder.prerender_math_pages = set()


def remember_page(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    """The pages this build writes (an incremental build leaves the others as they are)."""
    if app.builder.format == "html":
        app.builder.prerender_math_pages.add(pagename)


def typeset_page(name: str, text: str, page: list[dict], result: dict) -> str:
    """The page with its formulas typeset and their style in <head>; warns on any failure."""
    for formula, error in zip(page, result["errors"], strict=True):
        if error:
            logger.warning("MathJax cannot typeset %r: %s", formula["tex"], error,
                           location=name, type="prerender_math")
    outputs = iter(result["html"])

    def replace(match: re.Match) -> str:
        output = next(outputs)
        if output is None:
            return match[0]
        eqno = EQNO.search(match["body"])
        return (f'<{match["tag"]} class="math notranslate nohighlight"{match["attrs"]}>'
                f'{eqno[0] if eqno else ""}{trim(output)}</{match["tag"]}>')

    text = MATH.sub(replace, text)
    style = (f'<style id="mathjax-chtml">\n{inline_fonts(result["css"])}\n'
             f'{CONTAINER_CSS}</style>\n')
    text = text.replace("</head>", style + "</head>", 1)
    for match in MATH.finditer(text):
        if "<mjx-container" not in match["body"]:
            logger.warning("formula left as TeX: %r", html.unescape(match["body"][:80]),
                           location=name, type="prerender_math")
    return text


def prerender(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    pagenames = sorted(app.builder.prerender_math_pages)
    files = [Path(app.builder.get_outfilename(name)) for name in pagenames]
    texts = [path.read_text(encoding="utf-8") for path in files]
    formulas = [[dict(zip(("tex", "display"), split_formula(m["tag"], m["body"]), strict=True))
                 for m in MATH.finditer(text)] for text in texts]
    if not any(formulas):
        return
    rendered = render_pages(formulas)
    for name, path, text, page, result in zip(pagenames, files, texts, formulas, rendered,
                                              strict=True):
        if page:
            path.write_text(typeset_page(name, text, page, result), encoding="utf-8")
    logger.info("prerender_math: typeset %d formulas on %d pages",
                sum(map(len, formulas)), sum(1 for page in formulas if page))


def setup(app: Sphinx) -> dict:
    # The visitors of sphinx.ext.mathjax (its config values too), without its script.
    app.setup_extension("sphinx.ext.mathjax")
    app.add_html_math_renderer(
        "prerendered",
        (mathjax.html_visit_math, None),
        (mathjax.html_visit_displaymath, None),
    )
    app.connect("builder-inited", start)
    app.connect("html-page-context", remember_page)
    app.connect("build-finished", prerender)
    return {"parallel_read_safe": True, "parallel_write_safe": False}

