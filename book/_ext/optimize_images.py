"""Figures as palette PNGs: the notebooks store matplotlib's RGBA PNGs, about a
third of a chapter page's weight.

A figure is drawn on white with a handful of colours plus their anti-aliased
edges. An opaque PNG with at most 256 colours is stored again with an exact
palette (the pixels do not change); one with more is reduced to the 256
colours of a median cut, without dithering, which moves the edge pixels of a
few figures by a fraction of a grey level on average. A PNG with
transparency is left alone. Runs before the PDF is printed, so the PDF gets
the same images.
"""

from __future__ import annotations

import io
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


def optimize(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    for path in sorted(Path(app.outdir, "_images").glob("*.png")):
        smaller = palette_png(path.read_bytes())
        if smaller is not None:
            path.write_bytes(smaller)


def setup(app):
    app.connect("build-finished", optimize, priority=600)  # before book_pdf (950)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
