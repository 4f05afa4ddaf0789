"""Chapter 30 figures, one function per figure.

Each function takes arrays (from the chapter's example or from
``lesson``) and returns a ``matplotlib.figure.Figure`` built with
``book.figure_style``; the notebook shows it as the last expression of a cell.

* ``whole_layer``: the example from ``X`` to ``MHA(X)`` with every number;
* ``two_jobs``: two heads with two jobs next to one full-width head;
* ``one_head_line``: a one-head layer's outputs on a line, its targets filling the plane;
* ``head_split``: ``X`` -> full-width ``Q, K, V`` -> one grid per head;
* ``split_layout``: ``split_heads`` as reshape then transpose, beside a lone reshape;
* ``score_spread``: why scores are divided by ``sqrt(d_h)``;
* ``rope_circle``: a RoPE pair as an arrow that turns with the position;
* ``rope_relative``: ``q_m . k_n`` after RoPE depends only on ``m - n``;

* ``output_mixing``: ``W_O`` as routes ``u_r -> y_j`` on ``u = [a, b, c, d]``;
* ``learned_losses``, ``learned_maps``, ``output_pairs``: heads trained from random weights.

Notation as in the chapter: heads from 0, ``m`` the query position, ``n``
the key position, ``p`` the position of any row, ``ℓ`` a RoPE pair, ``u``
the concatenated row with coordinates ``u_r``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.cm import ScalarMappable
from matplotlib.colors import BoundaryNorm, ListedColormap
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch, Patch, Rectangle

from ..book.figure_style import CMAP, FONT, LINE_STYLES, MASK_HATCH, SMALL, attention_heatmap, new_figure, styled
from ..errors import CausalAttentionError, HeadLayoutError, LearnedHeadsError, shown
from ..text import texts

__all__ = ["head_split", "learned_losses", "learned_maps", "one_head_line", "output_mixing", "rope_circle",
           "rope_relative", "score_spread", "split_layout", "two_jobs", "whole_layer"]

HEAD_LINES = ("-", "--")       # head 0 solid, head 1 dashed: told apart without colour
HEAD_SHADES = ("white", "0.88")
MARKERS = ("o", "s", "^", "D", "v", "x", "P", "*")   # the learned runs use the first ones too


def _mask_legend(fig: Figure) -> None:
    fig.legend(handles=[Patch(facecolor="white", edgecolor="0.45", hatch=MASK_HATCH,
                              label=texts("ch30_figures")["masked_key"])],
               loc="outside lower center", frameon=False)


def _colorbar(fig: Figure, image, axes: Sequence[Axes], label: str) -> None:
    bar = fig.colorbar(image, ax=list(axes), shrink=0.8, pad=0.02)
    bar.set_label(label)


def _positions(ax: Axes, *, query_axis: bool = True) -> None:
    """The chapter's names for the axes of a ``[T, T]`` table: ``m`` down, ``n`` across."""
    words = texts("ch30_figures")
    ax.set_xlabel(words["key_axis"])
    ax.set_ylabel(words["query_axis"] if query_axis else "")


# -- the whole layer on the example ------------------------------------------------------

# In units of about a pixel of the book's column; y grows downwards.
FLOW_CELL, FLOW_ROW = 58, 21           # a cell of Q, K, V, H, u, MHA(X): room for "−0.416" at FONT
FLOW_WEIGHT = 48                       # a cell of a weight table: "0.333"
FLOW_GAP = 40                          # between the two columns of a head's lane
FLOW_LABELS = 34                       # the row labels "p=0" left of head 0's lane


def _flow_grid(ax: Axes, values: np.ndarray, left: float, top: float, *, head_of_column=None,
               hidden=None, decimals: int = 3, cell: float = FLOW_CELL) -> None:
    """``values [rows, cols]`` as numbered cells. ``head_of_column[c]`` shades and frames the
    columns of each head (head 0 white and solid, head 1 grey and dashed); ``hidden`` cells
    (the causal mask) are hatched and carry no number."""
    rows, cols = values.shape
    heads = np.zeros(cols, int) if head_of_column is None else np.asarray(head_of_column)
    for r in range(rows):
        for c in range(cols):
            masked = hidden is not None and hidden[r, c]
            ax.add_patch(Rectangle((left + c * cell, top + r * FLOW_ROW), cell, FLOW_ROW,
                                   facecolor=HEAD_SHADES[heads[c] % 2], edgecolor="0.6", linewidth=0.6,
                                   hatch=MASK_HATCH if masked else None))
            if not masked:
                ax.text(left + (c + 0.5) * cell, top + (r + 0.5) * FLOW_ROW, _number(values[r, c], decimals),
                        ha="center", va="center", fontsize=FONT)       # the numbers: 13.9 px
    if head_of_column is not None:
        for head in np.unique(heads):
            columns = np.nonzero(heads == head)[0]
            ax.add_patch(Rectangle((left + columns[0] * cell, top), len(columns) * cell, rows * FLOW_ROW,
                                   fill=False, edgecolor="black", linewidth=1.6,
                                   linestyle=HEAD_LINES[head % 2]))


def _flow_arrow(ax: Axes, start: tuple[float, float], end: tuple[float, float], text: str = "",
                side: str = "right", along: float = 0.5) -> None:
    """An arrow, its ``text`` beside the point ``along`` of the way (right, left or above)."""
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=12, color="black",
                                 linewidth=1.0, shrinkA=2, shrinkB=2))
    if text:
        x = start[0] + along * (end[0] - start[0])
        y = start[1] + along * (end[1] - start[1])
        if side == "above":
            ax.text(x, y - 4, text, ha="center", va="bottom", fontsize=SMALL)
        else:
            ax.text(x + (8 if side == "right" else -8), y, text, ha="left" if side == "right" else "right",
                    va="center", fontsize=SMALL, linespacing=1.15)


def _shape(*dims: int) -> str:
    return "[" + ", ".join(str(d) for d in dims) + "]"


@styled
def whole_layer(x: np.ndarray, stages: dict[str, np.ndarray], output_weight: np.ndarray) -> Figure:
    """The example's layer from ``X [T, d]`` to ``MHA(X) [T, d]``, every number with three decimals.

    ``stages``: the forward record of one sequence, by field name (``projected_*_heads``,
    ``rotated_*_heads`` ``[h, T, d_h]``, ``attention_weights [h, T, T]``, ``head_outputs``,
    ``merged``, ``output``). In the example ``W_Q = W_K = W_V``, so one grid shows ``Q = K = V``
    and one ``Q~ = K~`` per head; other layers are refused rather than drawn wrongly.

    The heads' lanes stand side by side, each a loop: queries and keys go right through RoPE
    and the softmax to the weights ``A``, the values go straight down, untouched by RoPE, and
    both meet in ``H = A V``.
    """
    words = texts("ch30_figures")
    x, w_o = np.asarray(x, float), np.asarray(output_weight, float)
    q, k, v = (np.asarray(stages[f"projected_{r}_heads"], float) for r in ("query", "key", "value"))
    q_rot, k_rot = (np.asarray(stages[f"rotated_{r}_heads"], float) for r in ("query", "key"))
    if not (np.array_equal(q, k) and np.array_equal(q, v) and np.array_equal(q_rot, k_rot)):
        raise ValueError("whole_layer draws one grid for Q, K and V: they must be equal, as in the example")
    weights, outputs = np.asarray(stages["attention_weights"], float), np.asarray(stages["head_outputs"], float)
    merged, y = np.asarray(stages["merged"], float), np.asarray(stages["output"], float)
    heads, tokens, d_h = q.shape
    if heads != 2:
        raise ValueError(f"whole_layer draws the example's two heads, got {heads}")
    width = heads * d_h
    columns_head = np.repeat(np.arange(heads), d_h)
    band, wide, narrow, table = tokens * FLOW_ROW, width * FLOW_CELL, d_h * FLOW_CELL, tokens * FLOW_WEIGHT
    lane_width = narrow + FLOW_GAP + table + 8
    lane_left = (2, 2 + FLOW_LABELS + lane_width + 8)
    top = 22                                           # X and Q, K, V
    lane_top = top + band + 52
    row_1 = lane_top + 54                              # each head's Q, K, V and the same after RoPE
    row_2 = row_1 + band + 74                          # its weights A and its output H
    lane_bottom = row_2 + band + 10
    bottom = lane_bottom + 40                          # u, W_O, MHA(X)
    small = 22                                         # a cell of W_O
    height = bottom + max(band, width * FLOW_ROW) + 34
    # 660 units on 6.5 in: with savefig's 0.1 in padding the PNG still fits the 672 px column
    fig = new_figure(width=6.5, height=height / 100)
    fig.set_layout_engine("none")                      # one hand-placed canvas
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_axis_off()
    ax.set_xlim(0, 660)
    ax.set_ylim(height, 0)

    def row_labels(right: float, row_top: float, letter: str) -> None:
        for row in range(tokens):
            ax.text(right - 4, row_top + (row + 0.5) * FLOW_ROW, f"{letter}={row}", ha="right", va="center",
                    fontsize=SMALL)

    def caption(centre: float, y_text: float, text: str, va: str = "bottom", size: float = SMALL) -> None:
        ax.text(centre, y_text, text, ha="center", va=va, fontsize=size, linespacing=1.2)

    # X -> Q, K, V at full width (W = I in the example)
    left_x, left_q = 40, 660 - wide - 4
    caption(left_x + wide / 2, top - 4, f"X: {_shape(1, tokens, width)}", size=FONT)
    caption(left_q + wide / 2, top - 4, f"Q = K = V: {_shape(1, tokens, width)}", size=FONT)
    row_labels(left_x, top, "p")
    _flow_grid(ax, x, left_x, top)
    _flow_grid(ax, np.concatenate(list(q), axis=1), left_q, top, head_of_column=columns_head)
    _flow_arrow(ax, (left_x + wide, top + band / 2), (left_q, top + band / 2), "$XW_Q,\\,XW_K,\\,XW_V$",
                side="above")
    caption((left_x + wide + left_q) / 2, top + band / 2 + 6, words["whole_layer.identity"], va="top")
    caption((left_x + wide + left_q) / 2, top + band + 10, f"split_heads: {_shape(1, heads, tokens, d_h)}",
            va="center")

    for head in range(heads):
        lane = lane_left[head] + (FLOW_LABELS if head == 0 else 0)
        left_col, right_col = lane + 4, lane + 4 + narrow + FLOW_GAP      # left: V, H; right: RoPE, A
        left_mid, right_mid = left_col + narrow / 2, right_col + table / 2
        ax.add_patch(Rectangle((lane_left[head], lane_top), lane + lane_width - lane_left[head],
                               lane_bottom - lane_top, facecolor=HEAD_SHADES[head % 2] if head else "white",
                               edgecolor="black", linewidth=1.2, linestyle=HEAD_LINES[head % 2], zorder=0))
        ax.text(lane + lane_width - 6, lane_top + 12, words["head"].format(head=head), ha="right", va="center",
                fontsize=FONT)
        # the split: this head's columns of Q, K, V
        group = left_q + (head + 0.5) * narrow
        _flow_arrow(ax, (group, top + band + 4), (left_mid, row_1 - 37))
        cols = np.full(d_h, head)
        caption(left_mid, row_1 - 3, f"$Q^{{({head})}}=K^{{({head})}}=V^{{({head})}}$\n{_shape(1, tokens, d_h)}")
        _flow_grid(ax, q[head], left_col, row_1, head_of_column=cols)
        left_rot = right_mid - narrow / 2
        caption(right_mid, row_1 - 3,
                f"$\\widetilde{{Q}}^{{({head})}}=\\widetilde{{K}}^{{({head})}}$\n{_shape(1, tokens, d_h)}")
        _flow_grid(ax, q_rot[head], left_rot, row_1, head_of_column=cols)
        _flow_arrow(ax, (left_col + narrow, row_1 + band / 2), (left_rot, row_1 + band / 2), "RoPE",
                    side="above")
        # queries and keys: the softmax under the mask gives the weights
        _flow_arrow(ax, (right_mid, row_1 + band + 2), (right_mid, row_2 - 47), words["whole_layer.softmax"])
        caption(right_mid, row_2 - 17, f"$A^{{({head})}}$: {_shape(1, tokens, tokens)}")
        for key in range(tokens):
            caption(right_col + (key + 0.5) * FLOW_WEIGHT, row_2 - 2, f"n={key}")
        _flow_grid(ax, weights[head], right_col, row_2, head_of_column=np.full(tokens, head),
                   hidden=np.triu(np.ones((tokens, tokens), bool), k=1), cell=FLOW_WEIGHT)
        # values: no rotation, straight down to H = A V
        _flow_arrow(ax, (left_mid, row_1 + band + 2), (left_mid, row_2 - 33),
                    f"$V^{{({head})}}$:\n" + words["whole_layer.no_rotation"], along=0.45)
        caption(left_mid, row_2 - 3, f"$H^{{({head})}}=A^{{({head})}}V^{{({head})}}$\n{_shape(1, tokens, d_h)}")
        _flow_grid(ax, outputs[head], left_col, row_2, head_of_column=cols)
        _flow_arrow(ax, (right_col, row_2 + band / 2), (left_col + narrow, row_2 + band / 2))
        if head == 0:
            row_labels(left_col, row_1, "p")
            row_labels(left_col, row_2, "m")

    # Concat -> W_O -> MHA(X)
    left_u = 40
    left_w = left_u + wide + 28
    left_y = left_w + width * small + 28
    for head in range(heads):
        lane = lane_left[head] + (FLOW_LABELS if head == 0 else 0)
        # no label on the arrows: the table they point to is captioned "u = Concat(H)"
        _flow_arrow(ax, (lane + 4 + narrow / 2, lane_bottom), (left_u + (head + 0.5) * narrow, bottom - 2))
    row_labels(left_u, bottom, "p")
    _flow_grid(ax, merged, left_u, bottom, head_of_column=columns_head)
    caption(left_u + wide / 2, bottom + band + 4, f"u = Concat(H): {_shape(1, tokens, width)}", va="top",
            size=FONT)
    w_top = bottom + band / 2 - width * FLOW_ROW / 2
    _flow_grid(ax, w_o, left_w, w_top, decimals=0, cell=small)
    caption(left_w + width * small / 2, w_top + width * FLOW_ROW + 4, f"$W_O$: {_shape(width, width)}", va="top")
    _flow_arrow(ax, (left_u + wide, bottom + band / 2), (left_w, bottom + band / 2))
    _flow_arrow(ax, (left_w + width * small, bottom + band / 2), (left_y, bottom + band / 2))
    _flow_grid(ax, y, left_y, bottom)
    caption(left_y + wide / 2, bottom + band + 4, "$\\operatorname{MHA}(X)=uW_O$: " + _shape(1, tokens, width),
            va="top", size=FONT)
    return fig


# -- two heads, two jobs --------------------------------------------------------------

def _short(value: float) -> str:
    """A weight in a small cell: ``.99``, ``.02``, or ``1`` when it rounds to one."""
    text = f"{value:.2f}"
    return "1" if text == "1.00" else text.lstrip("0")


def _job_table(ax: Axes, table: np.ndarray, title: str, threshold: float) -> AxesImage:
    """A ``[T, T]`` table whose visible cells above ``threshold`` carry their weight."""
    image = attention_heatmap(ax, table, title=title, annotate=False)
    for query, key in zip(*np.nonzero(np.tril(table >= threshold)), strict=True):
        value = table[query, key]
        ax.text(key, query, _short(value), ha="center", va="center", fontsize=SMALL,
                color="white" if value < 0.55 else "black")
    return image


@styled
def two_jobs(two_heads: np.ndarray, one_head: np.ndarray, *, threshold: float = 0.005) -> Figure:
    """``two_heads: [2, T, T]`` and ``one_head: [T, T]`` as three heatmaps.

    Cells below ``threshold`` carry no number, so the pattern reads at once.
    """
    tables = [np.asarray(two_heads[0]), np.asarray(two_heads[1]), np.asarray(one_head)]
    words = texts("ch30_figures")
    titles = [words["two_jobs.previous"], words["two_jobs.first"], words["two_jobs.one_head"]]
    fig = new_figure(height=3.2)
    axes = fig.subplots(1, 3)
    for index, (ax, table, title) in enumerate(zip(axes, tables, titles, strict=True)):
        image = _job_table(ax, table, title, threshold)
        _positions(ax, query_axis=index == 0)
    _mask_legend(fig)
    _colorbar(fig, image, axes, words["attention_weight"])
    return fig


# -- the head split as grids --------------------------------------------------------------

CELL = 1.8   # a grid cell is CELL wide and 1 high: room for "−0.84"


def _number(value: float, decimals: int = 2) -> str:
    """``value`` with ``decimals`` digits, a true minus sign and no ``-0.00``."""
    return f"{round(float(value), decimals) + 0.0:.{decimals}f}".replace("-", "−")


def _grid(ax: Axes, values: np.ndarray, left: float, top: float, *, groups: int = 1,
          first_group: int = 0, label: str = "") -> None:
    """``values [rows, cols]`` as cells from ``(left, top)`` down; columns split into
    ``groups`` outlined groups (odd groups hatched and dashed)."""
    rows, cols = values.shape
    width = cols // groups
    for row in range(rows):
        for col in range(cols):
            group = first_group + col // width
            ax.add_patch(Rectangle((left + col * CELL, top - row - 1), CELL, 1,
                                   facecolor=HEAD_SHADES[group % 2], edgecolor="0.6", linewidth=0.6))
            ax.text(left + (col + 0.5) * CELL, top - row - 0.5, _number(values[row, col]),
                    ha="center", va="center", fontsize=SMALL)
    for group in range(groups):
        ax.add_patch(Rectangle((left + group * width * CELL, top - rows), width * CELL, rows,
                               fill=False, edgecolor="black", linewidth=1.6,
                               linestyle=HEAD_LINES[(first_group + group) % 2]))
    if label:
        ax.text(left + cols * CELL / 2, top - rows - 0.3, label, ha="center", va="top", fontsize=FONT)


def _arrow(ax: Axes, start: tuple[float, float], end: tuple[float, float], text: str) -> None:
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=14,
                                 color="black", linewidth=1.2))
    ax.text((start[0] + end[0]) / 2, start[1] + 0.2, text, ha="center", va="bottom",
            fontsize=SMALL)


@styled
def head_split(x: np.ndarray, q: np.ndarray, heads: int) -> Figure:
    """``x: [T, d_model]`` -> ``q = x W_Q: [T, d_model]`` -> ``heads`` grids ``[T, d_h]``.

    Arcs from every input column into the first column of ``q`` show the
    projection stage: each projected column reads the whole input row. Draw it
    with a ``W_Q`` that is not the identity, or the heads look like slices of ``x``.
    """
    words = texts("ch30_figures")
    x, q = np.asarray(x, float), np.asarray(q, float)
    tokens, width = x.shape
    head_width = width // heads
    gap = 2.4
    q_left = width * CELL + gap
    split_left = q_left + width * CELL + gap
    head_step = tokens + 1.0
    top = 0.0
    bottom = top - tokens - (heads - 1) * head_step / 2
    y_low, y_high = bottom - 1.2, top + 0.4 + (heads - 1) * head_step / 2   # no blank band above
    fig = new_figure(height=0.3 * (y_high - y_low))
    ax = fig.add_subplot()
    ax.set_axis_off()
    ax.set_aspect("equal")
    for row in range(tokens):
        ax.text(-0.2, top - row - 0.5, f"p={row}", ha="right", va="center", fontsize=SMALL)
    _grid(ax, x, 0, top, label=f"X: [1, {tokens}, {width}]")
    _grid(ax, q, q_left, top, groups=heads, label=f"$Q=XW_Q$: [1, {tokens}, {width}]")
    for column in range(width):       # one projected column reads every input feature
        ax.add_patch(FancyArrowPatch(((column + 0.5) * CELL, top), (q_left + 0.5 * CELL, top),
                                     connectionstyle="arc3,rad=-0.3", arrowstyle="-",
                                     color="0.45", linewidth=0.8))
    ax.text(q_left / 2 + 1.5, top + 1.55, words["head_split.reads_all"],
            ha="center", va="bottom", fontsize=SMALL)
    middle = -tokens / 2
    _arrow(ax, (width * CELL + 0.15, middle), (q_left - 0.15, middle), "$\\cdot W_Q$")
    _arrow(ax, (q_left + width * CELL + 0.15, middle), (split_left - 0.15, middle), "split")
    for head in range(heads):
        top_h = top - head * head_step + (heads - 1) * head_step / 2
        cols = slice(head * head_width, (head + 1) * head_width)
        _grid(ax, q[:, cols], split_left, top_h, first_group=head)
        ax.text(split_left + head_width * CELL + 0.3, top_h - tokens / 2,
                words["head"].format(head=head) + f"\n[1, {tokens}, {head_width}]", ha="left", va="center",
                fontsize=SMALL)
    ax.text(split_left + head_width * CELL / 2, bottom - 0.3,
            f"[1, {heads}, {tokens}, {head_width}]", ha="center", va="top", fontsize=FONT)
    ax.set_xlim(-1.6, split_left + head_width * CELL + 3.2)
    ax.set_ylim(y_low, y_high)
    return fig


# -- the split as a reshuffle of axes -------------------------------------------------------

SPLIT_CELL, SPLIT_ROW = 34, 22           # canvas units (about a pixel of the column)
SPLIT_COLOURS = (colormaps[CMAP](0.35, alpha=0.35), colormaps[CMAP](0.9, alpha=0.5))


def _split_block(ax: Axes, cells: np.ndarray, left: float, top: float, head_width: int,
                 *, gap: float = 0.0) -> float:
    """``cells [rows, cols]`` of ``(token, feature)`` pairs as labelled cells ``"1,0"``; each cell
    is coloured by the head its feature belongs to (head 1 also framed dashed), and a ``gap``
    opens after every ``head_width`` columns. Returns the right edge."""
    rows, cols = cells.shape[:2]
    right = left
    for r in range(rows):
        for c in range(cols):
            token, feature = cells[r, c]
            head = feature // head_width
            x = left + c * SPLIT_CELL + (c // head_width) * gap
            ax.add_patch(Rectangle((x, top + r * SPLIT_ROW), SPLIT_CELL, SPLIT_ROW,
                                   facecolor=SPLIT_COLOURS[head % 2], edgecolor="0.35",
                                   linewidth=1.2 if head % 2 else 0.6, linestyle=HEAD_LINES[head % 2]))
            ax.text(x + SPLIT_CELL / 2, top + (r + 0.5) * SPLIT_ROW, f"{token},{feature}",
                    ha="center", va="center", fontsize=SMALL)
            right = max(right, x + SPLIT_CELL)
    return right


SPLIT_ROW_GAP = 10                       # between the token rows of [T, h, d_h]
SPLIT_GROUP_GAP = 8                      # between the head groups inside one token row
SPLIT_ARROW = 84                         # room for an arrow and its word "transpose"


@styled
def split_layout(tokens: int = 3, width: int = 4, heads: int = 2) -> Figure:
    """How ``split_heads`` moves the numbers of one sequence, and how a lone reshape misplaces them.

    A cell ``1,0`` is feature 0 of token 1 (tokens numbered from 0, as positions are in the
    chapter), coloured by the head the feature belongs to. Top: ``[T, d_model] -> [T, h, d_h]``
    (reshape: each token's row, framed on its own, cut into ``h`` groups) ``-> [h, T, d_h]``
    (transpose: one block per head, every token's own features). Bottom: a single reshape to
    ``[h, T, d_h]`` reads the numbers in memory order and gives head 0 the first ``T * d_h``
    numbers (for T = 3, d = 4, h = 2: all of token 0 and half of token 1). Under each panel: its
    shape and what its first axis counts. The batch axis (``B = 1``) is left out.
    """
    words = texts("ch30_figures")
    for name, value, most in (("tokens", tokens, 8), ("width", width, 8), ("heads", heads, 8)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 1 <= value <= most:
            raise HeadLayoutError(f"split_layout {name} must be an integer from 1 to {most}, got {shown(value)}")
    if width % heads:
        raise HeadLayoutError(f"split_layout needs heads dividing width, got width={width}, heads={heads}")
    d_h = width // heads
    cells = np.stack(np.meshgrid(np.arange(tokens), np.arange(width), indexing="ij"), axis=-1)   # [T, d, 2]
    right_way = cells.reshape(tokens, heads, d_h, 2).transpose(1, 0, 2, 3)                        # [h, T, d_h, 2]
    wrong_way = cells.reshape(heads, tokens, d_h, 2)
    band = tokens * SPLIT_ROW
    middle_band = band + (tokens - 1) * SPLIT_ROW_GAP          # the token rows of [T, h, d_h], apart
    height = band + middle_band + 190
    fig = new_figure(width=6.5, height=height / 100)    # with savefig's padding: within 672 px
    fig.set_layout_engine("none")
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_axis_off()
    ax.set_xlim(0, 650)
    ax.set_ylim(height, 0)

    def label(centre: float, y: float, shape: str, axis: str) -> None:
        ax.text(centre, y, f"{shape}\n{axis}", ha="center", va="top", fontsize=SMALL, linespacing=1.2)

    def heads_side_by_side(blocks: np.ndarray, left: float, top: float) -> float:
        for head, block in enumerate(blocks):
            x = left + head * (d_h * SPLIT_CELL + 18)
            _split_block(ax, block, x, top, d_h)
            ax.text(x + d_h * SPLIT_CELL / 2, top - 4, words["head"].format(head=head),
                    ha="center", va="bottom", fontsize=SMALL)
        return left + heads * (d_h * SPLIT_CELL + 18) - 18

    def arrow(start: float, end: float, y: float, text: str) -> None:
        _flow_arrow(ax, (start + 6, y), (end - 6, y))
        ax.text((start + end) / 2, y - 6, text, ha="center", va="bottom", fontsize=SMALL)

    for row, (title, top) in enumerate(((words["split_layout.right"], 46),
                                        (words["split_layout.wrong"], 46 + middle_band + 90))):
        ax.text(4, top - 26, title, ha="left", va="bottom", fontsize=FONT)
        rows_high = middle_band if row == 0 else band
        x_top = top + (rows_high - band) / 2                 # X and the heads centred on the token rows
        x_right = _split_block(ax, cells, 4, x_top, d_h)
        label(4 + width * SPLIT_CELL / 2, x_top + band + 4, rf"$[T, d_{{\mathrm{{model}}}}]$ = {_shape(tokens, width)}",
              words["split_layout.by_token"])
        if row == 0:
            middle = x_right + SPLIT_ARROW
            for token in range(tokens):                        # one row per token, cut into h groups
                y = top + token * (SPLIT_ROW + SPLIT_ROW_GAP)
                m_right = _split_block(ax, cells[token:token + 1], middle, y, d_h, gap=SPLIT_GROUP_GAP)
                ax.add_patch(Rectangle((middle - 3, y - 3), m_right - middle + 6, SPLIT_ROW + 6,
                                       fill=False, edgecolor="black", linewidth=1.0))
            label((middle + m_right) / 2, top + middle_band + 4, f"$[T, h, d_h]$ = {_shape(tokens, heads, d_h)}",
                  words["split_layout.token_groups"])
            arrow(x_right, middle - 3, top + middle_band / 2, "reshape")
            last = m_right + SPLIT_ARROW
            arrow(m_right + 3, last, top + middle_band / 2, "transpose")
            blocks = right_way
        else:
            last = x_right + 2 * SPLIT_ARROW + width * SPLIT_CELL + SPLIT_GROUP_GAP * (heads - 1)
            arrow(x_right, last, x_top + band / 2, "reshape")
            blocks = wrong_way
        end = heads_side_by_side(blocks, last, x_top)
        label((last + end) / 2, x_top + band + 4, f"$[h, T, d_h]$ = {_shape(heads, tokens, d_h)}",
              words["split_layout.by_head"])
    return fig


# -- why sqrt(d_h) --------------------------------------------------------------------------

@styled
def score_spread(widths: np.ndarray, raw_std: np.ndarray, scaled_std: np.ndarray,
                 raw_top: np.ndarray, scaled_top: np.ndarray, tokens: int) -> Figure:
    """Left: the spread of scores against ``d_h``, both axes on a log scale, where
    ``sqrt(d_h)`` is a straight line of slope 1/2; right: the mean largest softmax weight."""
    words = texts("ch30_figures")
    widths = np.asarray(widths, float)
    spreads = np.concatenate([widths, np.asarray(raw_std, float), np.asarray(scaled_std, float)])
    if widths.size < 1 or not np.all(np.isfinite(spreads)) or not np.all(spreads > 0):
        raise CausalAttentionError(f"score_spread draws widths and spreads on log axes: they must be positive "
                                   f"and finite, got {widths.size} widths and values from "
                                   f"{spreads.min(initial=np.inf):.3g}")
    spreads = np.concatenate([np.sqrt(widths), spreads[widths.size:]])
    low, high = np.log2(spreads.min()), np.log2(spreads.max())
    ticks = 2.0 ** np.arange(np.floor(low + 0.1), np.ceil(high - 0.1) + 1)   # 16.02 -> last tick 16
    fig = new_figure(height=3.0)
    left, right = fig.subplots(1, 2)
    left.plot(widths, np.sqrt(widths), ":", color="black", label=r"$\sqrt{d_h}$")
    left.plot(widths, raw_std, "o", color="black", label=r"$q\cdot k$")
    left.plot(widths, scaled_std, "s--", color="0.45", label=r"$q\cdot k\,/\sqrt{d_h}$")
    left.set_ylabel(words["score_spread.spread"])
    right.plot(widths, raw_top, "o-", color="black", label=words["score_spread.raw"])
    right.plot(widths, scaled_top, "s--", color="0.45", label=words["score_spread.scaled"])
    right.axhline(1.0 / tokens, linestyle=":", color="0.3", label=words["score_spread.uniform"].format(tokens=tokens))
    right.set_ylim(0, 1.02)
    right.set_ylabel(words["score_spread.top_weight"])
    left.legend(frameon=False, loc="upper left")
    right.legend(frameon=False, loc="center right", bbox_to_anchor=(1.0, 0.6))
    for ax in (left, right):
        ax.set_xscale("log", base=2)
        ax.set_xticks(widths, [f"{int(w)}" for w in widths])
        ax.set_xlabel(words["score_spread.width"])
    left.set_yscale("log", base=2)                   # log-log: sqrt(d_h) is a line of slope 1/2
    left.set_yticks(ticks, [f"{t:g}" for t in ticks])
    left.set_ylim(min(ticks[0], 0.8 * spreads.min()), 1.25 * max(ticks[-1], spreads.max()))
    left.minorticks_off()
    return fig


# -- RoPE ---------------------------------------------------------------------------------------

FOLDED_WIDTH = 6.3   # inches: a figure in a folded cell gets 650 px of the column, not 672


@styled
def rope_circle(panels: Sequence[tuple[str, np.ndarray, Sequence[int]]]) -> Figure:
    """One unit circle per panel: a title, ``arrows: [P, 2]`` (the pair at positions
    ``0 .. P-1``) and the positions whose arrows get a label ``p=…`` (crowded arrows
    get few). The colour of an arrow is its position, read on the colour bar.

    The chapter shows it folded, so it is ``FOLDED_WIDTH`` wide and is not scaled there."""
    fig = new_figure(width=FOLDED_WIDTH, height=2.9)
    axes = np.atleast_1d(fig.subplots(1, len(panels)))
    circle = np.linspace(0, 2 * np.pi, 200)
    count = max(len(np.asarray(arrows)) for _, arrows, _ in panels)
    shades = colormaps[CMAP](0.85 * np.arange(count) / max(count - 1, 1))
    for ax, (title, arrows, labelled) in zip(axes, panels, strict=True):
        arrows = np.asarray(arrows, float)
        ax.plot(np.cos(circle), np.sin(circle), color="0.7", linewidth=0.8)
        ax.axhline(0, color="0.85", linewidth=0.6)
        ax.axvline(0, color="0.85", linewidth=0.6)
        ax.quiver(np.zeros(len(arrows)), np.zeros(len(arrows)), arrows[:, 0], arrows[:, 1],
                  color=shades[: len(arrows)], angles="xy", scale_units="xy", scale=1, width=0.012)
        for position, (u, v) in enumerate(arrows):
            if position in labelled:
                ax.text(1.22 * u, 1.22 * v, f"p={position}", ha="center", va="center", fontsize=SMALL)
        ax.set_title(title)
        ax.set_aspect("equal")
        ax.set_xlim(-1.45, 1.45)
        ax.set_ylim(-1.45, 1.45)
        ax.set_xticks([])
        ax.set_yticks([])
    key = ScalarMappable(BoundaryNorm(np.arange(count + 1) - 0.5, count), ListedColormap(shades))
    bar = fig.colorbar(key, ax=list(axes), shrink=0.8, pad=0.02, ticks=range(count))
    bar.set_label(texts("ch30_figures")["rope_circle.position"])
    return fig


@styled
def rope_relative(scores: np.ndarray) -> Figure:
    """Left: ``scores [P, P]`` (query position down, key position across);
    right: the same numbers against the offset ``m - n``."""
    words = texts("ch30_figures")
    scores = np.asarray(scores, float)
    positions = scores.shape[0]
    limit = float(np.max(np.abs(scores)))
    fig = new_figure(height=4.2)                 # cells wide enough for "−1.18"
    left, right = fig.subplots(1, 2, width_ratios=[1.75, 1])
    image = left.imshow(scores, cmap="cividis", vmin=-limit, vmax=limit)
    for m in range(positions):
        for n in range(positions):
            value = scores[m, n]
            left.text(n, m, _number(value), ha="center", va="center",
                      fontsize=SMALL, color="white" if value < 0 else "black")
    left.set_xticks(range(positions))
    left.set_yticks(range(positions))
    _positions(left)
    left.set_title(words["rope_relative.title"])
    fig.colorbar(image, ax=left, shrink=0.8, pad=0.02)
    offsets = np.arange(positions)
    # the curve: one score per offset m - n, read off the first row and column
    curve = np.arange(1 - positions, positions)
    right.plot(curve, [scores[max(d, 0), max(-d, 0)] for d in curve], "-", color="0.6",
               linewidth=1.0, zorder=1, label="_curve")
    for m in range(positions):       # one series of markers per query row: all on the curve
        right.plot(m - offsets, scores[m], linestyle="none", marker=MARKERS[m], color="0.1",
                   markerfacecolor="none", markersize=6, label=f"m={m}")
    right.set_xlabel(words["rope_relative.offset"])
    right.set_ylabel(words["rope_relative.score"])
    right.set_xticks(range(1 - positions, positions, 2))
    right.legend(frameon=False, ncols=3, loc="lower center", bbox_to_anchor=(0.5, 1.0),
                 columnspacing=0.8, handlelength=1.6)
    return fig


# -- W_O as a mixing matrix --------------------------------------------------------------------

@styled
def output_mixing(panels: Sequence[tuple[str, np.ndarray, Sequence[str], Sequence[tuple[int, int]]]],
                  symbols: str = "abcd") -> Figure:
    """Each panel: a title, a 0/1 matrix ``W_O [4, 4]``, the output ``u W_O`` for ``u = [a, b, c, d]``
    written out, and entries to mark. ``W_O`` is drawn as routes: the coordinates ``u_r`` of the
    concatenated row on top (coloured by head, head 1 framed dashed), the outputs ``y_j`` below, and
    an arrow ``u_r -> y_j`` for every nonzero ``(W_O)_{r, j}``, labelled ``r,j`` on the arrow itself: the
    row index says where a number comes from, the column index where it goes. Marked entries are
    drawn thick. In data coordinates ``u_r`` sits at ``(r, 1)`` and ``y_j`` at ``(j, 0)``."""
    words = texts("ch30_figures")
    fig = new_figure(height=2.4)
    axes = np.atleast_1d(fig.subplots(1, len(panels)))
    box_w, box_h = 0.84, 0.3
    for ax, (title, weight, output, marked) in zip(axes, panels, strict=True):
        weight = np.asarray(weight, float)
        size = weight.shape[0]
        d_h = size // 2
        ax.set_axis_off()
        ax.set_xlim(-0.55, size - 0.45)
        ax.set_ylim(-0.25, 1.25)
        ax.set_title(title)
        for r in range(size):
            head = r // d_h
            ax.add_patch(Rectangle((r - box_w / 2, 1 - box_h / 2), box_w, box_h, facecolor=SPLIT_COLOURS[head],
                                   edgecolor="black", linewidth=1.2, linestyle=HEAD_LINES[head]))
            ax.text(r, 1, f"$u_{r}$={symbols[r]}", ha="center", va="center", fontsize=SMALL)
        for j in range(size):
            ax.add_patch(Rectangle((j - box_w / 2, -box_h / 2), box_w, box_h, facecolor="white",
                                   edgecolor="black", linewidth=0.8))
            ax.text(j, 0, f"$y_{j}$={output[j]}", ha="center", va="center", fontsize=SMALL)
        routes = [(int(r), int(j)) for r, j in zip(*np.nonzero(weight), strict=True)]
        marked_routes = {tuple(m) for m in marked}
        for r, j in routes:
            ax.add_patch(FancyArrowPatch((r, 1 - box_h / 2), (j, box_h / 2), arrowstyle="-|>",
                                         mutation_scale=12, color="black",
                                         linewidth=2.4 if (r, j) in marked_routes else 1.0,
                                         linestyle=HEAD_LINES[r // d_h], shrinkA=1, shrinkB=1))
        for (r, j), (x, y) in zip(routes, _route_labels(ax, routes, box_h), strict=True):
            ax.text(x, y, f"{r},{j}", ha="center", va="center", fontsize=SMALL,      # on its own arrow
                    bbox={"boxstyle": "square,pad=0.1", "facecolor": "white", "edgecolor": "none"})
    fig.supxlabel(words["output_mixing.rows"], fontsize=SMALL)
    return fig


def _route_segment(route: tuple[int, int], box_h: float) -> tuple[np.ndarray, np.ndarray]:
    """The ends of the arrow ``u_r -> y_j`` in data coordinates: ``u_r`` at ``(r, 1)``, ``y_j`` at ``(j, 0)``."""
    r, j = route
    return np.array([r, 1 - box_h / 2], float), np.array([j, box_h / 2], float)


def _distance(point: np.ndarray, start: np.ndarray, end: np.ndarray) -> float:
    """From ``point`` to the segment ``start``-``end`` (all in display pixels)."""
    step = end - start
    t = np.clip(np.dot(point - start, step) / np.dot(step, step), 0.0, 1.0)
    return float(np.linalg.norm(point - (start + t * step)))


def _route_labels(ax: Axes, routes: Sequence[tuple[int, int]], box_h: float) -> list[tuple[float, float]]:
    """Where to write ``r,j`` on each arrow: the point between 15% and 60% of its way (clear of the
    arrowheads) farthest, in display pixels, from every other arrow and from every label placed
    before it (counted at half the distance: a label is wider than a line), so that a label never
    sits on a crossing or next to a neighbour's arrow or label."""
    to_px = ax.transData.transform
    segments = [tuple(to_px(np.vstack(_route_segment(route, box_h)))) for route in routes]
    placed: list[np.ndarray] = []
    labels = []
    for own, route in enumerate(routes):
        start, end = _route_segment(route, box_h)
        best, best_room = start, -1.0
        for t in np.linspace(0.15, 0.6, 10):
            point = start + t * (end - start)
            px = to_px(point)
            room = min([_distance(px, a, b) for k, (a, b) in enumerate(segments) if k != own]
                       + [float(np.linalg.norm(px - q)) / 2 for q in placed] + [np.inf])
            if room > best_room + 1e-9:
                best, best_room = point, room
        placed.append(to_px(best))
        labels.append((float(best[0]), float(best[1])))
    return labels


# -- heads trained from random weights ----------------------------------------------------------

@styled
def learned_losses(runs: Sequence[tuple[str, np.ndarray, np.ndarray]], bound: float) -> Figure:
    """Each run as ``(label, steps, losses)``: its held-out loss at those steps, on a log scale,
    one line style and marker per run, and the line ``bound`` that no one-head layer goes below
    on the same sequences."""
    words = texts("ch30_figures")
    fig = new_figure(height=3.0)
    ax = fig.add_subplot()
    ax.axhline(bound, linestyle="-", color="0.75", linewidth=4,
               label=words["learned_losses.bound"].format(bound=bound))
    for (label, steps, losses), style, marker in zip(runs, LINE_STYLES, MARKERS, strict=False):
        ax.plot(np.asarray(steps, float), np.asarray(losses, float), style, marker=marker, markersize=5,
                color="black", markerfacecolor="white", linewidth=1.2, label=label)
    ax.set_yscale("log")
    ax.set_xlabel(words["learned_losses.step"])
    ax.set_ylabel(words["learned_losses.loss"])
    ax.legend(frameon=False, loc="center right")
    return fig


@styled
def output_pairs(panels: Sequence[tuple[str, np.ndarray, np.ndarray]]) -> Figure:
    """One row per layer, ``(title, outputs [N, 2], targets [N, 2])``: in the left panel each
    row's predicted ``y_0`` against its target ``z_{m-1}``, in the right one ``y_4`` against
    ``z_0``, with the line ``y = z`` (dashed) where a perfect prediction lies."""
    words = texts("ch30_figures")
    fig = new_figure(height=2.9 * len(panels) + 0.4)
    axes = np.atleast_2d(fig.subplots(len(panels), 2, sharex=True, sharey=True))
    reach = 1.05 * max(np.abs(np.asarray(a, float)).max() for _, *arrays in panels for a in arrays)
    for row, (title, outputs, targets) in zip(axes, panels, strict=True):
        outputs, targets = np.asarray(outputs, float), np.asarray(targets, float)
        for column, ax in enumerate(row):
            ax.plot([-reach, reach], [-reach, reach], "--", color="0.45", linewidth=1.2,
                    label=words["output_pairs.exact"])
            ax.scatter(targets[:, column], outputs[:, column], marker="o", s=12, facecolors="none",
                       edgecolors="black", linewidths=0.7, label=words["output_pairs.points"])
            ax.set_title(words["output_pairs.title"].format(layer=title, output=words["output_pairs.outputs"][column]))
            ax.set_xlabel(words["output_pairs.targets"][column])
            ax.set_ylabel(words["output_pairs.outputs"][column])
            ax.set_aspect("equal")
    axes[0, 0].set_xlim(-reach, reach)
    axes[0, 0].set_ylim(-reach, reach)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=2, frameon=False)
    return fig


def _pairs(values: object, name: str) -> np.ndarray:
    """Finite points ``[N, 2]`` with ``N >= 2``, or the lab's error naming ``name``."""
    array = np.asarray(values) if isinstance(values, (np.ndarray, list, tuple)) else None
    if array is None or array.dtype.kind not in "fiu" or array.ndim != 2 or array.shape[1] != 2 or len(array) < 2:
        got = list(array.shape) if array is not None else type(values).__name__
        raise LearnedHeadsError(f"one_head_line {name} must be real points [N, 2] with N >= 2, got {got}")
    if not np.all(np.isfinite(array)):
        bad = array.size - np.count_nonzero(np.isfinite(array))
        raise LearnedHeadsError(f"one_head_line {name} must be finite, got {bad} NaN or infinite of {array.size}")
    return array.astype(np.float64)


@styled
def one_head_line(targets: np.ndarray, layers: Sequence[tuple[str, np.ndarray]], *,
                  losses: Sequence[float] | None = None, bound: float | None = None) -> Figure:
    """The plane of output columns 0 and 4: the targets ``(z_{m-1}, z_0)`` of rows as hollow
    circles, and for each one-head layer ``(label, outputs [N, 2])`` its outputs ``(y_0, y_4)``
    as filled markers on the straight line through them, drawn across the panel (one marker and
    line style per layer). The outputs must lie on one line (they do for any one-head layer on
    the chapter's task): a layer whose points do not is refused rather than drawn wrongly.

    With ``losses`` (one per layer, e.g. its held-out loss) each layer's legend entry ends with
    its loss, and ``bound`` (the least loss of any one-head layer) titles the legend, so the
    hand-set layers' losses stand beside the bound and the layers that reach it.

    A layer whose outputs span less than a fifth of the panel (random weights give a cluster at
    the origin) is also drawn in a second, square panel on the right, magnified around its
    points, with the same axes scale in x and y so its line keeps its slope; a frame on the main
    panel marks the magnified square."""
    words = texts("ch30_figures")
    targets = _pairs(targets, "targets")
    if not layers:
        raise LearnedHeadsError("one_head_line needs at least one layer, got none")
    if losses is not None:
        losses = np.asarray(losses, float) if isinstance(losses, (np.ndarray, list, tuple)) else None
        if losses is None or losses.shape != (len(layers),) or not np.all(np.isfinite(losses)):
            got = list(losses.shape) if losses is not None else "not a sequence"
            raise LearnedHeadsError(f"one_head_line losses must be {len(layers)} finite numbers, one per "
                                    f"layer, got {got}")
    if bound is not None and (isinstance(bound, bool) or not isinstance(bound, (int, float, np.floating))
                              or not np.isfinite(bound)):
        raise LearnedHeadsError(f"one_head_line bound must be a finite number, got {bound!r}")
    drawn = []
    for index, (label, outputs) in enumerate(layers):
        outputs = _pairs(outputs, f"outputs of layer {index}")
        centred = outputs - outputs.mean(axis=0)
        singular = np.linalg.svd(centred, compute_uv=False)
        if not singular[0] > 0 or singular[1] > 1e-9 * singular[0]:
            raise LearnedHeadsError(f"one_head_line outputs of layer {index} must spread along one line, "
                                    f"got singular values {singular[0]:.3g} and {singular[1]:.3g}")
        drawn.append((label, outputs))
    reach = 1.08 * max(np.abs(targets).max(), *(np.abs(o).max() for _, o in drawn))
    small = min(drawn, key=lambda item: np.ptp(item[1], axis=0).max())[1]
    zoomed = np.ptp(small, axis=0).max() < reach / 5
    fig = new_figure(width=6.4 if zoomed else 4.6, height=4.6)
    if zoomed:
        ax, zoom = fig.subplots(1, 2, width_ratios=[1.7, 1.0])
    else:
        ax, zoom = fig.add_subplot(), None
    handles = []
    for panel in (ax, zoom) if zoomed else (ax,):
        panel.scatter(targets[:, 0], targets[:, 1], marker="o", s=16, facecolors="none", edgecolors="0.55",
                      linewidths=0.7, label=words["one_head_line.targets"], zorder=1)
        handles = [panel.collections[0]]
        for index, ((label, outputs), style, marker) in enumerate(
                zip(drawn, LINE_STYLES, ("s", "^", "D", "v"), strict=False)):
            centre = outputs.mean(axis=0)
            direction = np.linalg.svd(outputs - centre)[2][0]
            ends = centre + np.outer([-4 * reach, 4 * reach], direction)      # well past the panel's edges
            panel.plot(ends[:, 0], ends[:, 1], style, color="black", linewidth=1.2, zorder=2)
            panel.scatter(outputs[:, 0], outputs[:, 1], marker=marker, s=22, facecolors="white",
                          edgecolors="black", linewidths=0.9, zorder=3)
            entry = words["one_head_line.outputs"].format(layer=label)
            if losses is not None:
                entry += words["one_head_line.loss"].format(loss=losses[index])
            handles.append(Line2D([], [], linestyle=style, marker=marker, color="black", markerfacecolor="white",
                                  label=entry))
        panel.set_aspect("equal")
    ax.set_xlim(-reach, reach)
    ax.set_ylim(-reach, reach)
    ax.set_xlabel(words["one_head_line.x"])
    ax.set_ylabel(words["one_head_line.y"])
    if zoomed:
        middle = (small.min(axis=0) + small.max(axis=0)) / 2
        half = 0.6 * np.ptp(small, axis=0).max()
        zoom.set_xlim(middle[0] - half, middle[0] + half)
        zoom.set_ylim(middle[1] - half, middle[1] + half)
        zoom.set_title(words["one_head_line.zoom"].format(times=round(reach / half)))
        zoom.set_xlabel("$y_0$")
        zoom.set_ylabel("$y_4$")
        ax.indicate_inset((*(middle - half), 2 * half, 2 * half), inset_ax=zoom, edgecolor="black",
                          alpha=1.0, linewidth=1.2, zorder=4)
    title = None if bound is None else words["one_head_line.bound"].format(bound=bound)
    fig.legend(handles=handles, loc="outside lower center", frameon=False, title=title)
    return fig


@styled
def learned_maps(rows: Sequence[Sequence[tuple[str, np.ndarray]]], *, threshold: float = 0.005) -> Figure:
    """One row of ``[T, T]`` tables per layer: each panel a title and a table (e.g. the
    hand-set heads above, the trained ones below, columns in the same order of jobs)."""
    fig = new_figure(height=2.35 * len(rows) + 0.45)
    axes = np.atleast_2d(fig.subplots(len(rows), max(len(row) for row in rows)))
    for r, row in enumerate(rows):
        for c, (title, table) in enumerate(row):
            image = _job_table(axes[r, c], np.asarray(table, float), title, threshold)
            _positions(axes[r, c], query_axis=c == 0)
            if r < len(rows) - 1:
                axes[r, c].set_xlabel("")
    _mask_legend(fig)
    _colorbar(fig, image, axes.ravel(), texts("ch30_figures")["attention_weight"])
    return fig
