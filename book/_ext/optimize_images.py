"""Figures as palette PNGs: the notebooks store matplotlib's RGBA PNGs, about a
third of a chapter page's weight.

A figure is drawn on white with a handful of colours plus their anti-aliased
edges. An opaque PNG with at most 256 colours is stored again with an exact
palette (the pixels do not change); one with more is reduced to the 256
colours of a median cut, without dithering, which moves the edge pixels of a
few figures by a fraction of a grey level on average. A PNG with
transparency is left alone. Runs before the PDF is printed, so the PDF gets
the same images. The notebooks a page offers for download (``_sources/``) get
their figures stored the same way.
"""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

from PIL import Image

PALETTE = 256


def palette_png(data: bytes) -> bytes | None:
    """The same figure as a palette PNG, or None when that is not smaller or
    the image has transparency."""
    image = Image.open(io.BytesIO(data))
    rgba = image.convert("RGBA")
    if rgba.getextrema()[3][0] < 255:  # some pixel is not opaque
        return None
    rgb = rgba.convert("RGB")
    paletted = rgb.quantize(PALETTE, method=Image.Quantize.MEDIANCUT,
                            dither=Image.Dither.NONE)
    out = io.BytesIO()
    paletted.save(out, "PNG", optimize=True)
    return out.getvalue() if out.tell() < len(data) else None


def optimize_notebook(path: Path) -> None:
    """The same for the figures inside a downloadable notebook (``_sources/``, the
    page's «.ipynb» button): each stored PNG output as a palette PNG, nothing else
    touched, so the notebook still opens and runs as the book's own."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    changed = False
    for cell in notebook.get("cells", []):
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "image/png" not in data:
                continue
            smaller = palette_png(base64.b64decode("".join(data["image/png"])))
            if smaller is not None:
                data["image/png"] = base64.b64encode(smaller).decode("ascii")
                changed = True
    if changed:
        path.write_text(json.dumps(notebook, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def optimize(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    for path in sorted(Path(app.outdir, "_images").glob("*.png")):
        smaller = palette_png(path.read_bytes())
        if smaller is not None:
            path.write_bytes(smaller)
    for path in sorted(Path(app.outdir, "_sources").rglob("*.ipynb")):
        optimize_notebook(path)


def setup(app):
    app.connect("build-finished", optimize, priority=600)  # before book_pdf (950)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
