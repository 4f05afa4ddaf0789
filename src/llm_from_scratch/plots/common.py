"""Drawing machinery shared by the chapter figures: greyscale only, no pyplot.

Every figure is a ``matplotlib.figure.Figure`` built directly (no global state),
so a notebook shows it with ``display(fig)`` and a test needs no backend.
Meaning is carried without colour: frame line styles (solid, dashed, dotted),
double frames (two nested rectangles), hatching and text, and every figure
draws a key that explains them.

A ``Sheet`` is one full-size axes whose data units are pixels at 100 dpi, with
the origin at the top-left corner and ``y`` pointing down, so a table is laid
out row by row. Column widths are measured from the text itself.

Every semantic element carries a gid (``artist.get_gid()``), unique in its figure,
so tests find it. A double frame ``X`` is two rectangles ``X-outer`` and ``X-inner``.

* frames: ``head-{h}-frame``, ``stage-{key}``, ``value-{half}-{stream|norm|branch|result}``,
  ``residual-add-{half}``, ``column-{stage}``, ``prefix-status-t{t}``, ``invariant-{i}``, ``check-{i}``;
* causal tables: ``cell-h{h}-q{q}-k{k}-visible|masked``, ``prob-h{h}-q{q}-k{k}``,
  ``underline-visible|masked-h{h}-q{q}-k{k}``, ``diagonal-h{h}-q{q}``, ``rowsum-h{h}-q{q}``,
  ``head-output-h{h}-q{q}``;
* heatmaps and bars: ``heatmap-h{h}``, ``heatmap-h{h}-q{q}-k{k}-masked``, ``bar-pre|post-{i}``;
* arrows: ``arrow-{a}-{b}``, ``link-t{t}-g{src}-g{dst}``, ``identity-path-{half}``, ``branch-arrow-{half}-{i}``;
* texts: the element's gid plus ``-text`` / ``-title`` / ``-label``; table cells ``{table}-r{r}-c{c}``;
* keys: ``key-{kind}`` (glyph) and ``key-{kind}-label``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import RendererAgg
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch, Rectangle
from matplotlib.path import Path

from ..chapters.formatting import format_number, format_vector
from ..errors import LlmFromScratchError
from ..tensor import is_int

DPI = 100
INK = "black"          # lines and text
SHADE = "0.55"         # hatch lines, secondary rules
LIGHT = "0.85"         # cell borders
PAPER = "white"
FONT_FAMILY = "DejaVu Sans"
SIZE_TITLE, SIZE_TEXT, SIZE_SMALL = 11.5, 10.0, 9.0
MASK_HATCH = "///"     # cells closed by the causal mask
BAR_HATCH = "\\\\"       # the second series of a bar chart
FRAME_STYLES = ("solid", "dashed", "dotted", "double")
LINESTYLE = {"solid": "-", "dashed": "--", "dotted": ":", "double": "-"}
STYLE_NAMES = {"solid": "сплошная", "dashed": "штриховая", "dotted": "пунктирная", "double": "двойная"}  # for alt texts
HEAD_STYLES = ("solid", "dashed", "dotted")   # head 0, head 1, head 2 in the chapter tables
LINE_HEIGHT = 1.3                             # multiples of the font size in pixels

# Everything a figure reads from rcParams while it is built, pinned so that a
# notebook's own style cannot change the course figures.
_RC = {
    "text.usetex": False, "font.family": "sans-serif", "font.sans-serif": [FONT_FAMILY],
    "font.size": SIZE_TEXT, "mathtext.fontset": "dejavusans", "axes.unicode_minus": True,
    "hatch.linewidth": 0.8, "hatch.color": SHADE, "lines.scale_dashes": True,
    "axes.edgecolor": INK, "axes.labelcolor": INK, "axes.facecolor": PAPER, "axes.linewidth": 0.8,
    "xtick.color": INK, "ytick.color": INK, "text.color": INK,
    "figure.facecolor": PAPER, "figure.edgecolor": PAPER, "savefig.facecolor": PAPER,
    "savefig.edgecolor": PAPER, "legend.edgecolor": SHADE, "legend.facecolor": PAPER,
    "image.cmap": "Greys", "image.interpolation": "nearest",
}

F = TypeVar("F", bound=Callable)


class PlotError(LlmFromScratchError):
    """A figure was asked for with arguments it cannot draw."""

    component = "plots"


def pinned_style(function: F) -> F:
    """Build the figure under the course's fixed rcParams (restored afterwards)."""
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        with matplotlib.rc_context(_RC):
            return function(*args, **kwargs)
    return wrapper  # type: ignore[return-value]


# -- argument checks ---------------------------------------------------------------

def check_token(token: object, tokens: int, stage: str) -> int:
    """An integer token position in ``[0, tokens)``; anything else is a ``PlotError``."""
    if not is_int(token):
        raise PlotError(f"{stage} token must be an integer position, got {token!r}", stage=stage)
    if not 0 <= int(token) < tokens:
        raise PlotError(f"{stage} token must be in [0, {tokens}), got {int(token)}", stage=stage)
    return int(token)


def check_style(style: str, allowed: Sequence[str] = FRAME_STYLES) -> str:
    if style not in allowed:
        raise PlotError(f"frame style must be one of {list(allowed)}, got {style!r}", stage="plots")
    return style


def head_style(head: int) -> str:
    """Head 0 solid, head 1 dashed, head 2 dotted (more heads: a PlotError)."""
    if not 0 <= head < len(HEAD_STYLES):
        raise PlotError(f"head frame styles exist for heads 0..{len(HEAD_STYLES) - 1}, got head {head}",
                        stage="plots")
    return HEAD_STYLES[head]


# -- text measurement ------------------------------------------------------------------

@functools.lru_cache(maxsize=1)
def _renderer() -> RendererAgg:
    return RendererAgg(8, 8, DPI)


@functools.lru_cache(maxsize=4096)
def text_size(content: str, size: float = SIZE_TEXT, bold: bool = False) -> tuple[float, float]:
    """Width and height in pixels of (possibly multi-line) text as Agg draws it at 100 dpi."""
    prop = FontProperties(family=FONT_FAMILY, size=size, weight="bold" if bold else "normal")
    lines = content.split("\n")
    width = max(_renderer().get_text_width_height_descent(line, prop, ismath=line.count("$") >= 2)[0]
                for line in lines)
    return float(width), line_height(size) * len(lines)


def line_height(size: float) -> float:
    """Pixels per text line at ``size`` points and 100 dpi."""
    return size * DPI / 72.0 * LINE_HEIGHT


# -- the sheet ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Box:
    """A rectangle in sheet pixels: left, top, width, height."""

    x: float
    y: float
    w: float
    h: float

    @property
    def right(self) -> float:
        return self.x + self.w

    @property
    def bottom(self) -> float:
        return self.y + self.h

    @property
    def cx(self) -> float:
        return self.x + self.w / 2

    @property
    def cy(self) -> float:
        return self.y + self.h / 2

    def inset(self, by: float) -> Box:
        return Box(self.x + by, self.y + by, self.w - 2 * by, self.h - 2 * by)


@dataclass(frozen=True)
class TableLayout:
    """Where a drawn table's cells are: ``cell(row, col)``; row ``-1`` is the header."""

    x: float
    y: float
    widths: tuple[float, ...]
    header_height: float
    row_height: float
    rows: int

    @property
    def width(self) -> float:
        return float(sum(self.widths))

    @property
    def height(self) -> float:
        return self.header_height + self.rows * self.row_height

    def cell(self, row: int, col: int) -> Box:
        left = self.x + sum(self.widths[:col])
        if row < 0:
            return Box(left, self.y, self.widths[col], self.header_height)
        return Box(left, self.y + self.header_height + row * self.row_height, self.widths[col], self.row_height)

    def row_box(self, row: int, first: int = 0, last: int | None = None) -> Box:
        last = len(self.widths) - 1 if last is None else last
        start, end = self.cell(row, first), self.cell(row, last)
        return Box(start.x, start.y, end.right - start.x, start.h)


class Sheet:
    """A blank figure ``width x height`` pixels (100 dpi) with one axes in pixel units, y down."""

    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.figure = Figure(figsize=(width / DPI, height / DPI), dpi=DPI, facecolor=PAPER, edgecolor=PAPER)
        self.ax = self.figure.add_axes((0.0, 0.0, 1.0, 1.0))
        self.ax.set_xlim(0, width)
        self.ax.set_ylim(height, 0)
        self.ax.set_axis_off()

    def crop(self, height: float) -> None:
        """Set the sheet's height once the content's extent is known (pixels stay pixels)."""
        self.height = int(np.ceil(height))
        self.figure.set_size_inches(self.width / DPI, self.height / DPI)
        self.ax.set_ylim(self.height, 0)

    # primitives -------------------------------------------------------------------

    def text(self, x: float, y: float, content: str, *, gid: str | None = None, size: float = SIZE_TEXT,
             ha: str = "left", va: str = "center", bold: bool = False, italic: bool = False,
             backdrop: bool = False, ma: str | None = None, zorder: float = 5):
        artist = self.ax.text(x, y, content, fontsize=size, fontfamily=FONT_FAMILY, ha=ha, va=va, color=INK,
                              multialignment=ma,
                              fontweight="bold" if bold else "normal", fontstyle="italic" if italic else "normal",
                              linespacing=LINE_HEIGHT, zorder=zorder, gid=gid)
        if backdrop:
            artist.set_bbox({"boxstyle": "square,pad=0.15", "facecolor": PAPER, "edgecolor": "none"})
        return artist

    def frame(self, box: Box, style: str = "solid", *, gid: str, linewidth: float = 1.4, fill: str = "none",
              hatch: str | None = None, zorder: float = 3) -> list[Rectangle]:
        """A frame with a line style; ``"double"`` is two nested solid rectangles (``gid-outer``, ``gid-inner``)."""
        check_style(style)
        if style == "double":
            gap = 3.5
            return [self._rectangle(box, "-", f"{gid}-outer", 1.1, fill, hatch, zorder),
                    self._rectangle(box.inset(gap), "-", f"{gid}-inner", 1.1, "none", None, zorder)]
        return [self._rectangle(box, LINESTYLE[style], gid, linewidth, fill, hatch, zorder)]

    def _rectangle(self, box: Box, linestyle: str, gid: str, linewidth: float, fill: str, hatch: str | None,
                   zorder: float) -> Rectangle:
        patch = Rectangle((box.x, box.y), box.w, box.h, facecolor=fill, edgecolor=INK, linewidth=linewidth,
                          linestyle=linestyle, hatch=hatch, hatchcolor=SHADE, zorder=zorder, gid=gid)
        self.ax.add_patch(patch)
        return patch

    def masked_cell(self, box: Box, *, gid: str, zorder: float = 1) -> Rectangle:
        """A cell closed by the causal mask: hatched ``///`` in grey, thin grey border."""
        patch = Rectangle((box.x, box.y), box.w, box.h, facecolor=PAPER, edgecolor=LIGHT, linewidth=0.8,
                          hatch=MASK_HATCH, hatchcolor=SHADE, zorder=zorder, gid=gid)
        self.ax.add_patch(patch)
        return patch

    def plain_cell(self, box: Box, *, gid: str, border: bool = True, zorder: float = 1) -> Rectangle:
        patch = Rectangle((box.x, box.y), box.w, box.h, facecolor=PAPER, edgecolor=LIGHT if border else "none",
                          linewidth=0.8, zorder=zorder, gid=gid)
        self.ax.add_patch(patch)
        return patch

    def line(self, xs: Sequence[float], ys: Sequence[float], style: str = "solid", *, gid: str,
             linewidth: float = 1.4, shade: str = INK, zorder: float = 4) -> Line2D:
        artist = Line2D(list(xs), list(ys), color=shade, linestyle=LINESTYLE[check_style(style)],
                        linewidth=linewidth, zorder=zorder, gid=gid, solid_capstyle="butt", dash_capstyle="butt")
        self.ax.add_line(artist)
        return artist

    def underline(self, x0: float, x1: float, y: float, style: str, *, gid: str) -> Line2D:
        return self.line([x0, x1], [y, y], style, gid=gid, linewidth=1.5, zorder=6)

    def arrow(self, points: Sequence[tuple[float, float]], style: str = "solid", *, gid: str,
              linewidth: float = 1.3) -> FancyArrowPatch:
        """An arrow along a polyline (two points: straight; more: an elbow), head at the last point."""
        codes = [Path.MOVETO] + [Path.LINETO] * (len(points) - 1)
        patch = FancyArrowPatch(path=Path(np.asarray(points, dtype=float), codes), arrowstyle="-|>",
                                mutation_scale=13, linewidth=linewidth, linestyle=LINESTYLE[check_style(style)],
                                color=INK, zorder=4, gid=gid)
        self.ax.add_patch(patch)
        return patch

    # composite pieces ---------------------------------------------------------------

    def labeled_box(self, box: Box, title: str, body: str, style: str, *, gid: str,
                    size: float = SIZE_SMALL) -> None:
        """A frame in ``style`` with a bold title line (``gid-title``) above centred body lines (``gid-text``)."""
        self.frame(box, style, gid=gid)
        step = line_height(size)
        lines = 1 + body.count("\n") + 1
        self.text(box.cx, box.cy - step * (lines - 1) / 2, title, gid=f"{gid}-title", size=size, ha="center",
                  bold=True)
        self.text(box.cx, box.cy + step / 2, body, gid=f"{gid}-text", size=size, ha="center")

    def table(self, x: float, y: float, header: Sequence[str], rows: Sequence[Sequence[str]], *, gid: str,
              size: float = SIZE_SMALL, pad: float = 9, row_height: float | None = None,
              widths: Sequence[float] | None = None, first_left: bool = True, rule: bool = True,
              cell_gid: Callable[[int, int], str] | None = None, multialign: str | None = None) -> TableLayout:
        """Header and rows of text; columns as wide as their widest text unless ``widths`` is given.

        A ``None`` cell reserves its place and draws nothing (the caller decorates it).
        Texts: ``gid-header-c``, ``gid-r{r}-c{c}`` (or ``cell_gid(r, c)``); the header rule: ``gid-rule``.
        """
        columns = len(header)
        if any(len(row) != columns for row in rows):
            raise PlotError(f"table {gid} rows must have {columns} cells, got {[len(r) for r in rows]}",
                            stage="plots")
        if widths is None:
            widths = [max([text_size(header[c], size, True)[0]]
                          + [text_size(r[c], size)[0] for r in rows if r[c] is not None]) + 2 * pad
                      for c in range(columns)]
        header_height = max(text_size(h, size, True)[1] for h in header) + pad
        row_height = row_height or line_height(size) + pad
        layout = TableLayout(x, y, tuple(float(w) for w in widths), header_height, float(row_height), len(rows))
        for c, title in enumerate(header):
            cell = layout.cell(-1, c)
            left = first_left and c == 0
            self.text(cell.x + pad if left else cell.cx, cell.cy, title, gid=f"{gid}-header-{c}", size=size,
                      ha="left" if left else "center", bold=True)
        for r, row in enumerate(rows):
            for c, content in enumerate(row):
                if content is None:
                    continue
                cell = layout.cell(r, c)
                left = first_left and c == 0
                self.text(cell.x + pad if left else cell.cx, cell.cy, content, size=size, ma=multialign,
                          gid=cell_gid(r, c) if cell_gid else f"{gid}-r{r}-c{c}", ha="left" if left else "center")
        if rule:
            self.line([x, x + layout.width], [y + header_height, y + header_height], gid=f"{gid}-rule",
                      linewidth=0.8, shade=SHADE)
        return layout

    def key(self, x: float, y: float, entries: Sequence[tuple[str, str]], *, width: float, gid: str = "key",
            size: float = SIZE_SMALL, title: str = "Обозначения:") -> float:
        """A key of line styles: ``(kind, label)`` pairs flowed into rows; returns the height used.

        Kinds: ``frame-solid``, ``frame-dashed``, ``frame-dotted``, ``frame-double``, ``underline-solid``,
        ``underline-dashed``, ``line-solid``, ``line-dashed``, ``line-dotted``, ``hatch``, ``fill``,
        ``bar-filled``, ``bar-hatched``, ``arrow``. Glyph gids are
        ``gid-kind``, label gids ``gid-kind-label``.
        """
        step = line_height(size) + 8
        self.text(x, y + step / 2, title, gid=f"{gid}-title", size=size, bold=True)
        cursor, row = x + text_size(title, size, True)[0] + 14, 0
        glyph_w, glyph_h = 30, 14
        for kind, label in entries:
            needed = glyph_w + 8 + text_size(label, size)[0] + 22
            if cursor + needed > x + width and cursor > x + 140:
                cursor, row = x + text_size(title, size, True)[0] + 14, row + 1
            cy = y + step / 2 + row * step
            self._glyph(kind, Box(cursor, cy - glyph_h / 2, glyph_w, glyph_h), f"{gid}-{kind}")
            self.text(cursor + glyph_w + 8, cy, label, gid=f"{gid}-{kind}-label", size=size)
            cursor += needed
        return (row + 1) * step

    def _glyph(self, kind: str, box: Box, gid: str) -> None:
        family, _, style = kind.partition("-")
        if family == "frame":
            self.frame(box, style, gid=gid, linewidth=1.3)
        elif family in ("underline", "line"):
            self.line([box.x, box.right], [box.cy if family == "line" else box.bottom] * 2, style, gid=gid,
                      linewidth=1.5)
        elif kind == "hatch":
            self.masked_cell(box, gid=gid)
        elif kind == "fill":
            self.ax.add_patch(Rectangle((box.x, box.y), box.w, box.h, facecolor=SHADE, edgecolor=INK,
                                        linewidth=0.9, gid=gid))
        elif kind == "bar-filled":
            self.ax.add_patch(Rectangle((box.x, box.y), box.w, box.h, facecolor=SHADE, edgecolor=INK,
                                        linewidth=1.2, linestyle="-", gid=gid))
        elif kind == "bar-hatched":
            self.ax.add_patch(Rectangle((box.x, box.y), box.w, box.h, facecolor=PAPER, edgecolor=INK,
                                        linewidth=1.2, linestyle="--", hatch=BAR_HATCH, hatchcolor=INK, gid=gid))
        elif kind == "arrow":
            self.arrow([(box.x, box.cy), (box.right, box.cy)], gid=gid)
        else:
            raise PlotError(f"key entry kind {kind!r} is not drawable", stage="plots")


# -- pieces both chapters draw ------------------------------------------------------------

def causal_table(sheet: Sheet, x: float, y: float, weights: np.ndarray, head: int, *,
                 head_outputs: np.ndarray | None = None, size: float = SIZE_SMALL,
                 title: str | None = None) -> Box:
    """One head's causal probability table ``weights: [T, T]`` with row sums (and head outputs ``[T, d_h]``).

    Key ``k`` is visible to query ``q`` iff ``k <= q``: visible cells get a solid
    underline, masked ones a dashed underline and ``///`` hatching, the diagonal a
    double frame. The panel frame's style is the head's (``head_style``).
    Gids: ``head-{h}-frame``, ``cell-h{h}-q{q}-k{k}-visible|masked``, ``prob-h{h}-q{q}-k{k}``,
    ``underline-visible|masked-h{h}-q{q}-k{k}``, ``diagonal-h{h}-q{q}-outer|inner``,
    ``rowsum-h{h}-q{q}``, ``head-output-h{h}-q{q}``. Returns the panel box.
    """
    weights = np.asarray(weights, dtype=np.float64)
    tokens = weights.shape[0]
    header, rows = _causal_cells(weights, head_outputs)
    margin, title_h = 10, line_height(SIZE_TEXT) + 6
    title = f"Голова {head}" if title is None else title
    sheet.text(x + margin, y + margin + title_h / 2, title, gid=f"head-{head}-title", size=SIZE_TEXT, bold=True)
    names = {tokens + 1: "rowsum", tokens + 2: "head-output"}

    def cell_gid(r: int, c: int) -> str:
        return f"{names[c]}-h{head}-q{r}" if c in names else f"query-h{head}-q{r}"

    # The probability texts are drawn below, over their cell decorations.
    layout = sheet.table(x + margin, y + margin + title_h, header,
                         [[r[0], *([None] * tokens), *r[tokens + 1:]] for r in rows], gid=f"table-h{head}",
                         size=size, row_height=max([1.6 * line_height(size)] + [text_size(c, size)[1] for r in rows
                                                                                for c in r]) + 16,
                         cell_gid=cell_gid, multialign="right",
                         widths=_causal_widths(header, rows, tokens, size))
    for q in range(tokens):
        for k in range(tokens):
            cell = layout.cell(q, k + 1).inset(3)
            visible = k <= q
            state = "visible" if visible else "masked"
            if visible:
                sheet.plain_cell(cell, gid=f"cell-h{head}-q{q}-k{k}-visible", border=k != q)
            else:
                sheet.masked_cell(cell, gid=f"cell-h{head}-q{q}-k{k}-masked")
            content = rows[q][k + 1]
            sheet.text(cell.cx, cell.cy - 1, content, gid=f"prob-h{head}-q{q}-k{k}", size=size, ha="center",
                       backdrop=not visible)
            half = text_size(content, size)[0] / 2
            sheet.underline(cell.cx - half, cell.cx + half, cell.cy + line_height(size) / 2 - 1,
                            "solid" if visible else "dashed", gid=f"underline-{state}-h{head}-q{q}-k{k}")
            if k == q:
                sheet.frame(layout.cell(q, k + 1).inset(0.5), "double", gid=f"diagonal-h{head}-q{q}")
    panel = Box(x, y, layout.width + 2 * margin, margin + title_h + layout.height + margin)
    sheet.frame(panel, head_style(head), gid=f"head-{head}-frame", linewidth=1.6)
    return panel


def _causal_cells(weights: np.ndarray, head_outputs: np.ndarray | None) -> tuple[list[str], list[list[str]]]:
    """Header and row texts of one causal table: query label, probabilities, row sum (, head output)."""
    tokens = weights.shape[0]
    header = ["запрос", *(f"k={k}" for k in range(tokens)), "сумма\nстроки"]
    rows = [[f"q={q}", *(format_number(weights[q, k]) for k in range(tokens)), format_number(weights[q].sum())]
            for q in range(tokens)]
    if head_outputs is not None:
        header.append("выход\nголовы")
        for q in range(tokens):
            rows[q].append(vertical_vector("", head_outputs[q])[1:])
    return header, rows


def _causal_widths(header: Sequence[str], rows: Sequence[Sequence[str]], tokens: int, size: float) -> list[float]:
    widths = [max([text_size(header[c], size, True)[0]] + [text_size(r[c], size)[0] for r in rows]) + 14
              for c in range(len(header))]
    probability = max(widths[1:tokens + 1])
    return [widths[0], *([probability] * tokens), *widths[tokens + 1:]]


def causal_table_width(weights: np.ndarray, head_outputs: np.ndarray | None = None,
                       size: float = SIZE_SMALL) -> float:
    """The width ``causal_table`` will take, so callers can place panels side by side."""
    weights = np.asarray(weights, dtype=np.float64)
    header, rows = _causal_cells(weights, head_outputs)
    return float(sum(_causal_widths(header, rows, weights.shape[0], size))) + 20


CAUSAL_MARKS = (   # the key of a causal table, after one frame entry per head
    ("underline-solid", "доступный ключ"), ("underline-dashed", "закрытый ключ"),
    ("hatch", "каузальная маска"), ("frame-double", "разрешённая диагональ"),
)


def check_causal_weights(weights: object, stage: str) -> np.ndarray:
    """``[h, T, T]`` finite probabilities in ``[0, 1]`` (the tables and heatmaps draw nothing else)."""
    try:
        array = np.asarray(weights, dtype=np.float64)
    except (TypeError, ValueError) as source:
        raise PlotError(f"{stage} weights must be numeric, got {type(weights).__name__}", stage=stage) from source
    if array.ndim != 3 or array.shape[1] != array.shape[2] or 0 in array.shape:
        raise PlotError(f"{stage} weights must have shape [heads, tokens, tokens] with heads, tokens >= 1, "
                        f"got {list(array.shape)}", stage=stage)
    finite = np.isfinite(array)
    if not np.all(finite):
        raise PlotError(f"{stage} weights must be finite, got {int(np.sum(~finite))} non-finite values", stage=stage)
    if array.min() < 0.0 or array.max() > 1.0:
        raise PlotError(f"{stage} weights must be probabilities in [0, 1], got min {format_number(array.min())} "
                        f"max {format_number(array.max())}", stage=stage)
    return array


def causal_tables_figure(weights: np.ndarray, outputs: np.ndarray | None, title: str, width: int = 1000) -> Figure:
    """Every head's ``causal_table`` side by side (``weights: [h, T, T]``, ``outputs: [h, T, d_h]`` or None), a key."""
    heads = weights.shape[0]
    widths = [causal_table_width(weights[h], None if outputs is None else outputs[h]) for h in range(heads)]
    gap = 16
    left = (width - sum(widths) - gap * (heads - 1)) / 2
    if left < 4:
        raise PlotError(f"causal tables need {int(sum(widths) + gap * (heads - 1))} px for {heads} heads, "
                        f"the figure is {width} px wide", stage="causal tables")
    sheet = Sheet(width, 400)
    sheet.text(left, 18, title, gid="causal-title", size=SIZE_TEXT, bold=True)
    x, bottom = left, 0.0
    for head in range(heads):
        panel = causal_table(sheet, x, 36, weights[head], head, head_outputs=None if outputs is None else outputs[head])
        x, bottom = x + widths[head] + gap, max(bottom, panel.bottom)
    heads_key = [(f"frame-{head_style(h)}", f"голова {h}") for h in range(heads)]
    used = sheet.key(left, bottom + 14, [*heads_key, *CAUSAL_MARKS], width=width - 2 * left)
    sheet.crop(bottom + 14 + used + 8)
    return sheet.figure


def causal_tables_alt(weights: np.ndarray, outputs: np.ndarray | None) -> str:
    """Alt text of ``causal_tables_figure``: every probability row, its sum (and the head output)."""
    parts = []
    for head in range(weights.shape[0]):
        rows = "; ".join(
            f"q={q}: {format_vector(weights[head, q])}, сумма {format_number(weights[head, q].sum())}"
            + ("" if outputs is None else f", выход головы {format_vector(outputs[head, q])}")
            for q in range(weights.shape[1]))
        parts.append(f"Голова {head} ({STYLE_NAMES[head_style(head)]} рамка): {rows}.")
    return ("Таблицы каузальных вероятностей внимания, по одной на голову; строки — позиции запроса q, "
            "столбцы — ключи k. " + " ".join(parts) + " Доступные ключи (k ≤ q) подчёркнуты сплошной линией, "
            "закрытые каузальной маской ключи заштрихованы и подчёркнуты штрихом, их вероятности равны нулю; "
            "разрешённая диагональ k = q обведена двойной рамкой.")


def prefix_table(sheet: Sheet, x: float, y: float, original: np.ndarray, perturbed: np.ndarray,
                 unchanged: Sequence[bool], *, title: str, gid: str = "prefix") -> Box:
    """Rows of the output before and after changing only the last token, with a status per row.

    ``unchanged[t]`` is the evidence's bitwise verdict for row ``t``: an unchanged row's status
    sits in a solid frame, a changed one in a dashed frame. Gids: ``prefix-status-t{t}`` (frame),
    ``prefix-status-t{t}-text``, table texts ``prefix-r{t}-c{c}``.
    """
    tokens = len(unchanged)
    statuses = ["побитово без изменений" if same else "изменилось" for same in unchanged]
    header = ["позиция", "исходный выход", "выход после изменения\nпоследнего токена", "статус"]
    rows = [[f"t={t}", format_vector(original[t]), format_vector(perturbed[t]), statuses[t]]
            for t in range(tokens)]
    sheet.text(x, y + 10, title, gid=f"{gid}-title", size=SIZE_TEXT, bold=True)
    widths = [max([text_size(header[c], SIZE_SMALL, True)[0]] + [text_size(r[c], SIZE_SMALL)[0] for r in rows]) + 24
              for c in range(len(header))]
    layout = sheet.table(x, y + 24, header, [[*r[:3], None] for r in rows], gid=gid, widths=widths,
                         row_height=line_height(SIZE_SMALL) + 14)
    for t in range(tokens):
        cell = layout.cell(t, 3).inset(3)
        sheet.frame(cell, "solid" if unchanged[t] else "dashed", gid=f"{gid}-status-t{t}", linewidth=1.3)
        sheet.text(cell.cx, cell.cy, statuses[t], gid=f"{gid}-status-t{t}-text", size=SIZE_SMALL, ha="center")
    return Box(x, y, layout.width, 24 + layout.height)


def prefix_verdicts(primary: object) -> list[bool]:
    """Per output row, whether it stayed bitwise unchanged: the evidence's ``prefix_zero_unchanged``,
    ``prefix_one_unchanged`` and (negated) ``suffix_changed``, as both chapters record them."""
    return [primary.prefix_zero_unchanged, primary.prefix_one_unchanged, not primary.suffix_changed]


def prefix_alt(original: np.ndarray, perturbed: np.ndarray, unchanged: Sequence[bool]) -> str:
    """Alt-text rows of ``prefix_table``."""
    return "; ".join(f"t={t}: {format_vector(original[t])} и {format_vector(perturbed[t])} — "
                     f"{'побитово без изменений' if same else 'изменилось'}" for t, same in enumerate(unchanged))


def status_grid(sheet: Sheet, x: float, y: float, items: Sequence[tuple[str, str, bool]], *, width: float,
                gid: str, columns: int = 2, size: float = SIZE_SMALL, gap: float = 12) -> Box:
    """Checks as framed cells (label in bold, verdict below) in a grid, row by row.

    A verdict that holds sits in a solid frame, a failed one in a dashed, hatched frame.
    Gids: ``{gid}-{i}`` (frame), ``{gid}-{i}-label``, ``{gid}-{i}-text``.
    """
    cell_w = (width - gap * (columns - 1)) / columns
    step = line_height(size)
    cell_h = 2 * step + 12
    for i, (label, verdict, holds) in enumerate(items):
        row, col = divmod(i, columns)
        cell = Box(x + col * (cell_w + gap), y + row * (cell_h + gap / 2), cell_w, cell_h)
        sheet.frame(cell, "solid" if holds else "dashed", gid=f"{gid}-{i}", linewidth=1.3,
                    hatch=None if holds else MASK_HATCH)
        sheet.text(cell.x + 10, cell.y + 6 + step / 2, label, gid=f"{gid}-{i}-label", size=size, bold=True,
                   backdrop=not holds)
        sheet.text(cell.x + 10, cell.y + 6 + 1.5 * step, verdict, gid=f"{gid}-{i}-text", size=size,
                   backdrop=not holds)
    rows = -(-len(items) // columns)
    return Box(x, y, width, rows * (cell_h + gap / 2) - gap / 2)


@dataclass(frozen=True)
class FlowStage:
    """One box of a stage flow: a name, the shape text, a frame style and an optional note line."""

    key: str
    name: str
    shape: str
    style: str
    note: str = ""


def flow_rows(sheet: Sheet, stages: Sequence[FlowStage], *, per_row: Sequence[int], top: float,
              box_width: float, box_height: float, row_gap: float, left: float = 20,
              arrow_styles: Sequence[str] | None = None) -> dict[str, Box]:
    """Boxes in rows left to right with arrows; a row's last box connects to the next row's first
    by an elbow arrow. Gids: ``stage-{key}`` (frame), ``stage-{key}-text``, ``arrow-{a}-{b}``."""
    if sum(per_row) != len(stages):
        raise PlotError(f"flow rows hold {sum(per_row)} boxes, got {len(stages)} stages", stage="plots")
    boxes: dict[str, Box] = {}
    index = 0
    for r, count in enumerate(per_row):
        span = sheet.width - 2 * left
        gap = (span - count * box_width) / max(count - 1, 1)
        for i in range(count):
            stage = stages[index]
            box = Box(left + i * (box_width + gap), top + r * (box_height + row_gap), box_width, box_height)
            boxes[stage.key] = box
            body = "\n".join([stage.shape] + ([stage.note] if stage.note else []))
            sheet.labeled_box(box, stage.name, body, stage.style, gid=f"stage-{stage.key}")
            index += 1
    arrow_styles = arrow_styles or ["solid"] * (len(stages) - 1)
    for i, (a, b) in enumerate(zip(stages, stages[1:])):
        start, end = boxes[a.key], boxes[b.key]
        if abs(start.y - end.y) < 1:
            points = [(start.right + 2, start.cy), (end.x - 2, end.cy)]
        else:
            middle = (start.bottom + end.y) / 2
            points = [(start.cx, start.bottom + 2), (start.cx, middle), (end.cx, middle), (end.cx, end.y - 2)]
        sheet.arrow(points, arrow_styles[i], gid=f"arrow-{a.key}-{b.key}")
    return boxes


def vertical_vector(name: str, values: np.ndarray) -> str:
    """``name=[a,`` / ``b,`` / ... / ``d]``: a vector as one number per line, in the course's format
    (``vertical_vector("", v)[1:]`` drops the ``=``)."""
    numbers = format_vector(values)[1:-1].split(",")
    if len(numbers) == 1:
        return f"{name}=[{numbers[0]}]"
    return "\n".join([f"{name}=[{numbers[0]},", *(f"{n}," for n in numbers[1:-1]), f"{numbers[-1]}]"])
