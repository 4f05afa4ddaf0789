"""Chapter 30 figures, one function per figure.

Each function takes arrays (from the chapter's example or from
``chapters.lesson30``) and returns a ``matplotlib.figure.Figure`` built with
``plots.style``; the notebook shows it as the last expression of a cell.

* ``two_jobs``: two heads with two jobs next to one full-width head;
* ``head_split``: ``X`` -> full-width ``Q, K, V`` -> one grid per head;
* ``score_spread``: why scores are divided by ``sqrt(d_h)``;
* ``rope_circle``: a RoPE pair as an arrow that turns with the position;
* ``rope_relative``: ``q_m . k_n`` after RoPE depends only on ``m - n``;

Notation as in the chapter: heads from 0, ``m`` the query position, ``n``
the key position, ``p`` the position of any row, ``k`` a RoPE pair.
* ``example_heads``: the example's causal table in every head;
* ``output_mixing``: ``W_O`` as a 0/1 mixing matrix on ``[a, b, c, d]``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.cm import ScalarMappable
from matplotlib.colors import BoundaryNorm, ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, Patch, Rectangle

from .style import CMAP, FONT, MASK_HATCH, SMALL, attention_heatmap, new_figure, styled

__all__ = ["example_heads", "head_split", "output_mixing", "rope_circle", "rope_relative",
           "score_spread", "two_jobs"]

HEAD_LINES = ("-", "--")       # head 0 solid, head 1 dashed: told apart without colour
QUERY_AXIS, KEY_AXIS = "позиция запроса m", "позиция ключа n"
HEAD_SHADES = ("white", "0.88")
MARKERS = ("o", "s", "^", "D", "v", "x", "P", "*")


def _mask_legend(fig: Figure) -> None:
    fig.legend(handles=[Patch(facecolor="white", edgecolor="0.45", hatch=MASK_HATCH,
                              label="ключ закрыт каузальной маской")],
               loc="outside lower center", frameon=False)


def _colorbar(fig: Figure, image, axes: Sequence[Axes], label: str) -> None:
    bar = fig.colorbar(image, ax=list(axes), shrink=0.8, pad=0.02)
    bar.set_label(label)


def _positions(ax: Axes, *, query_axis: bool = True) -> None:
    """The chapter's names for the axes of a ``[T, T]`` table: ``m`` down, ``n`` across."""
    ax.set_xlabel(KEY_AXIS)
    ax.set_ylabel(QUERY_AXIS if query_axis else "")


# -- two heads, two jobs --------------------------------------------------------------

def _short(value: float) -> str:
    """A weight in a small cell: ``.99``, ``.02``, or ``1`` when it rounds to one."""
    text = f"{value:.2f}"
    return "1" if text == "1.00" else text.lstrip("0")


@styled
def two_jobs(two_heads: np.ndarray, one_head: np.ndarray, *, threshold: float = 0.005) -> Figure:
    """``two_heads: [2, T, T]`` and ``one_head: [T, T]`` as three heatmaps.

    Cells below ``threshold`` carry no number, so the pattern reads at once.
    """
    tables = [np.asarray(two_heads[0]), np.asarray(two_heads[1]), np.asarray(one_head)]
    titles = ["голова 0:\nпредыдущий токен", "голова 1:\nпервый токен", "одна голова\nна всю ширину"]
    fig = new_figure(height=3.2)
    axes = fig.subplots(1, 3)
    for index, (ax, table, title) in enumerate(zip(axes, tables, titles, strict=True)):
        image = attention_heatmap(ax, table, title=title, annotate=False)
        for query, key in zip(*np.nonzero(np.tril(table >= threshold)), strict=True):
            value = table[query, key]
            ax.text(key, query, _short(value),
                    ha="center", va="center", fontsize=SMALL,
                    color="white" if value < 0.55 else "black")
        _positions(ax, query_axis=index == 0)
    _mask_legend(fig)
    _colorbar(fig, image, axes, "вес внимания")
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
    projection stage: each projected column reads the whole input row.
    """
    x, q = np.asarray(x, float), np.asarray(q, float)
    tokens, width = x.shape
    head_width = width // heads
    gap = 2.4
    q_left = width * CELL + gap
    split_left = q_left + width * CELL + gap
    head_step = tokens + 1.0
    fig = new_figure(height=0.3 * (heads * head_step + 2.2))
    ax = fig.add_subplot()
    ax.set_axis_off()
    ax.set_aspect("equal")
    top = 0.0
    for row in range(tokens):
        ax.text(-0.2, top - row - 0.5, f"p={row}", ha="right", va="center", fontsize=SMALL)
    _grid(ax, x, 0, top, label=f"X: [1, {tokens}, {width}]")
    _grid(ax, q, q_left, top, groups=heads, label=f"Q, K, V: [1, {tokens}, {width}]")
    for column in range(width):       # one projected column reads every input feature
        ax.add_patch(FancyArrowPatch(((column + 0.5) * CELL, top), (q_left + 0.5 * CELL, top),
                                     connectionstyle="arc3,rad=-0.3", arrowstyle="-",
                                     color="0.45", linewidth=0.8))
    ax.text(q_left / 2 + 1.5, top + 1.55, "столбец 0 проекции читает все признаки строки X",
            ha="center", va="bottom", fontsize=SMALL)
    middle = -tokens / 2
    _arrow(ax, (width * CELL + 0.15, middle), (q_left - 0.15, middle), "·W")
    _arrow(ax, (q_left + width * CELL + 0.15, middle), (split_left - 0.15, middle), "split")
    for head in range(heads):
        top_h = top - head * head_step + (heads - 1) * head_step / 2
        cols = slice(head * head_width, (head + 1) * head_width)
        _grid(ax, q[:, cols], split_left, top_h, first_group=head)
        ax.text(split_left + head_width * CELL + 0.3, top_h - tokens / 2,
                f"голова {head}\n[{tokens}, {head_width}]", ha="left", va="center", fontsize=SMALL)
    bottom = top - tokens - (heads - 1) * head_step / 2
    ax.text(split_left + head_width * CELL / 2, bottom - 0.3,
            f"[1, {heads}, {tokens}, {head_width}]", ha="center", va="top", fontsize=FONT)
    ax.set_xlim(-1.6, split_left + head_width * CELL + 3.2)
    ax.set_ylim(bottom - 1.4, top + 2.4 + (heads - 1) * head_step / 2)
    return fig


# -- why sqrt(d_h) --------------------------------------------------------------------------

@styled
def score_spread(widths: np.ndarray, raw_std: np.ndarray, scaled_std: np.ndarray,
                 raw_top: np.ndarray, scaled_top: np.ndarray, tokens: int) -> Figure:
    """Left: the spread of scores against ``d_h``; right: the mean largest softmax weight."""
    widths = np.asarray(widths, float)
    fig = new_figure(height=3.0)
    left, right = fig.subplots(1, 2)
    left.plot(widths, np.sqrt(widths), ":", color="black", label=r"$\sqrt{d_h}$")
    left.plot(widths, raw_std, "o", color="black", label=r"$q\cdot k$")
    left.plot(widths, scaled_std, "s--", color="0.45", label=r"$q\cdot k\,/\sqrt{d_h}$")
    left.set_ylabel("разброс оценок (ст. откл.)")
    right.plot(widths, raw_top, "o-", color="black", label=r"оценки $q\cdot k$")
    right.plot(widths, scaled_top, "s--", color="0.45", label=r"оценки $q\cdot k\,/\sqrt{d_h}$")
    right.axhline(1.0 / tokens, linestyle=":", color="0.3", label=f"поровну: 1/{tokens}")
    right.set_ylim(0, 1.02)
    right.set_ylabel("средний наибольший вес")
    left.legend(frameon=False, loc="upper left")
    right.legend(frameon=False, loc="center right", bbox_to_anchor=(1.0, 0.6))
    for ax in (left, right):
        ax.set_xscale("log", base=2)
        ax.set_xticks(widths, [f"{int(w)}" for w in widths])
        ax.set_xlabel(r"ширина головы $d_h$")
    return fig


# -- RoPE ---------------------------------------------------------------------------------------

@styled
def rope_circle(panels: Sequence[tuple[str, np.ndarray, Sequence[int]]]) -> Figure:
    """One unit circle per panel: a title, ``arrows: [P, 2]`` (the pair at positions
    ``0 .. P-1``) and the positions whose arrows get a label ``p=…`` (crowded arrows
    get few). The colour of an arrow is its position, read on the colour bar."""
    fig = new_figure(height=2.9)
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
    bar.set_label("позиция p")
    return fig


@styled
def rope_relative(scores: np.ndarray) -> Figure:
    """Left: ``scores [P, P]`` (query position down, key position across);
    right: the same numbers against the offset ``m - n``."""
    scores = np.asarray(scores, float)
    positions = scores.shape[0]
    limit = float(np.max(np.abs(scores)))
    fig = new_figure(height=3.3)
    left, right = fig.subplots(1, 2, width_ratios=[1.15, 1])
    image = left.imshow(scores, cmap="cividis", vmin=-limit, vmax=limit)
    for m in range(positions):
        for n in range(positions):
            value = scores[m, n]
            left.text(n, m, f"{value:.1f}".replace("-", "−"), ha="center", va="center",
                      fontsize=SMALL, color="white" if value < 0 else "black")
    left.set_xticks(range(positions))
    left.set_yticks(range(positions))
    _positions(left)
    left.set_title(r"$q_m\cdot k_n$ после RoPE")
    fig.colorbar(image, ax=left, shrink=0.8, pad=0.02)
    offsets = np.arange(positions)
    # the curve: one score per offset m - n, read off the first row and column
    curve = np.arange(1 - positions, positions)
    right.plot(curve, [scores[max(d, 0), max(-d, 0)] for d in curve], "-", color="0.6",
               linewidth=1.0, zorder=1, label="_curve")
    for m in range(positions):       # one series of markers per query row: all on the curve
        right.plot(m - offsets, scores[m], linestyle="none", marker=MARKERS[m], color="0.1",
                   markerfacecolor="none", markersize=6, label=f"m={m}")
    right.set_xlabel("смещение m − n")
    right.set_ylabel(r"оценка $q_m\cdot k_n$")
    right.set_xticks(range(1 - positions, positions, 2))
    right.legend(frameon=False, ncols=3, loc="lower center", bbox_to_anchor=(0.5, 1.0),
                 columnspacing=0.8, handlelength=1.6)
    return fig


# -- the example's heads ---------------------------------------------------------------------

@styled
def example_heads(weights: np.ndarray) -> Figure:
    """``weights: [h, T, T]``, one annotated causal table per head, one colour scale."""
    weights = np.asarray(weights, float)
    fig = new_figure(width=5.6, height=3.0)
    axes = fig.subplots(1, weights.shape[0])
    for head, ax in enumerate(axes):
        image = attention_heatmap(ax, weights[head], title=f"голова {head}", decimals=3)
        _positions(ax, query_axis=head == 0)
    _mask_legend(fig)
    _colorbar(fig, image, axes, "вес внимания")
    return fig


# -- W_O as a mixing matrix --------------------------------------------------------------------

@styled
def output_mixing(panels: Sequence[tuple[str, np.ndarray, Sequence[str], Sequence[tuple[int, int]]]],
                  symbols: str = "abcd") -> Figure:
    """Each panel: a title, a 0/1 matrix ``W_O [4, 4]``, the output ``[a, b, c, d] W_O``
    written out, and cells to outline. Rows are read from the concatenated row,
    columns are the outputs ``y_j``; dashed lines separate the two heads."""
    fig = new_figure(height=3.3)
    axes = np.atleast_1d(fig.subplots(1, len(panels)))
    for ax, (title, weight, output, marked) in zip(axes, panels, strict=True):
        weight = np.asarray(weight, float)
        size = weight.shape[0]
        ax.imshow(weight, cmap="Greys", vmin=0, vmax=1.6)
        for i in range(size):
            for j in range(size):
                ax.text(j, i, f"{weight[i, j]:g}", ha="center", va="center", fontsize=FONT,
                        color="white" if weight[i, j] > 0.8 else "black")
        for i, j in marked:
            ax.add_patch(Rectangle((j - 0.45, i - 0.45), 0.9, 0.9, fill=False, edgecolor="black",
                                   linewidth=2.5, linestyle=":"))
        half = size / 2 - 0.5
        ax.axhline(half, color="black", linestyle="--", linewidth=1)
        ax.axvline(half, color="black", linestyle="--", linewidth=1)
        ax.set_xticks(range(size), [f"$y_{j}$" for j in range(size)])
        ax.set_yticks(range(size), list(symbols[:size]))
        ax.xaxis.tick_top()
        ax.set_title(title, pad=24)
        ax.set_xlabel("y = [" + ", ".join(output) + "]")
    axes[0].set_ylabel("$c_r$, строка r:\nголова 0 | голова 1")
    return fig
