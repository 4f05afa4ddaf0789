"""What every course figure shares: size, fonts, colour maps, the attention heatmap.

Figures are ``matplotlib.figure.Figure`` objects built without pyplot, so a
notebook shows one by making it the last expression of a cell and a test reads
its data (``AxesImage.get_array()``, ``Line2D.get_xydata()``) with no backend.

Readability at the book's width: the text column is 672 CSS px at a 1280 px
window and a wider PNG is scaled down, so a figure is at most ``MAX_WIDTH``
inches at ``DPI`` and no text is smaller than ``MIN_FONT`` points; then every
text shows at 11 CSS px or more (``smallest_text_px`` measures it).
Colour: ``viridis``/``cividis``/greys only, and meaning never by colour alone
(hatching, labels, line styles, markers).
"""

from __future__ import annotations

import io

import matplotlib
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.patches import Rectangle
from matplotlib.text import Text

from ..text import texts

DPI = 100
COLUMN_PX = 672          # the book's text column at a 1280 px window
MAX_WIDTH = 6.6          # inches: 660 px, never scaled down
MIN_CSS_PX = 11.0
FONT, SMALL = 10.0, 9.0  # points: 13.9 and 12.5 CSS px at 100 dpi
CMAP = "viridis"
MASK_HATCH = "///"       # keys hidden by the causal mask
LINE_STYLES = ("-", "--", ":", "-.")
MARKERS = ("o", "s", "^", "D")

RC = {
    "font.family": "sans-serif", "font.sans-serif": ["DejaVu Sans"], "font.size": FONT,
    "axes.titlesize": FONT, "axes.labelsize": FONT, "xtick.labelsize": SMALL,
    "ytick.labelsize": SMALL, "legend.fontsize": SMALL, "figure.titlesize": FONT + 1,
    "mathtext.fontset": "dejavusans", "axes.unicode_minus": True, "text.usetex": False,
    "figure.facecolor": "white", "savefig.facecolor": "white", "axes.facecolor": "white",
    "hatch.color": "0.35", "hatch.linewidth": 0.8, "image.interpolation": "nearest",
}

# ``@styled`` builds a figure under the course's rcParams, whatever the notebook
# set: ``rc_context`` is a decorator too, and enters afresh at every call.
styled = matplotlib.rc_context(RC)


def new_figure(width: float = MAX_WIDTH, height: float = 3.0) -> Figure:
    """A white figure of at most ``MAX_WIDTH`` inches with constrained layout."""
    if width > MAX_WIDTH:
        raise ValueError(f"figure width must be at most {MAX_WIDTH} in, got {width}")
    return Figure(figsize=(width, height), dpi=DPI, facecolor="white", layout="constrained")


def attention_heatmap(ax: Axes, weights: np.ndarray, *, title: str = "", annotate: bool = True,
                      causal: bool = True, vmax: float = 1.0, decimals: int = 2) -> AxesImage:
    """One ``[T, T]`` table of attention weights: queries down, keys across.

    Cells the causal mask hides (key right of the query) are left blank and
    hatched, so the triangle reads without colour; visible cells carry their
    value when ``annotate`` (text switches to white on dark cells).
    """
    weights = np.asarray(weights, dtype=np.float64)
    tokens = weights.shape[-1]
    hidden = np.triu(np.ones((tokens, tokens), dtype=bool), k=1) if causal else np.zeros_like(weights, bool)
    shown = np.ma.masked_array(weights, mask=hidden)
    image = ax.imshow(shown, cmap=CMAP, vmin=0.0, vmax=vmax, aspect="equal")
    for query, key in zip(*np.nonzero(hidden), strict=True):
        ax.add_patch(Rectangle((key - 0.5, query - 0.5), 1, 1, fill=False, hatch=MASK_HATCH,
                               edgecolor="0.45", linewidth=0))
    if annotate:
        for query in range(tokens):
            for key in range(query + 1 if causal else tokens):
                value = weights[query, key]
                ax.text(key, query, f"{value:.{decimals}f}", ha="center", va="center", fontsize=SMALL,
                        color="white" if value < 0.55 * vmax else "black")
    ax.set_xticks(range(tokens))
    ax.set_yticks(range(tokens))
    words = texts("figure_style")
    ax.set_xlabel(words["heatmap.key"])
    ax.set_ylabel(words["heatmap.query"])
    if title:
        ax.set_title(title)
    return image


def smallest_text_px(figure: Figure) -> float:
    """CSS px of the smallest visible text when the figure is shown in the book.

    Renders the figure as the notebook does (PNG, tight bounding box), so the
    scale ``min(1, COLUMN_PX / width)`` uses the real width of the image.
    """
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=figure.dpi, bbox_inches="tight")
    width_px = _png_width(buffer.getvalue())
    scale = min(1.0, COLUMN_PX / width_px)
    sizes = [text.get_fontsize() for text in figure.findobj(Text)
             if text.get_visible() and text.get_text().strip()]
    return min(sizes) / 72.0 * figure.dpi * scale if sizes else float("inf")


def _png_width(data: bytes) -> int:
    return int.from_bytes(data[16:20], "big")  # IHDR width
