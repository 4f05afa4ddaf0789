"""Figures of chapter 31: the pre-norm decoder block. One function per figure.

Every function takes plain data (arrays, mappings, the records of
``lesson`` and ``depth_lab``) and returns a
``matplotlib.figure.Figure`` built with ``book.figure_style``; tests read the data
back from the artists (line points, image arrays, texts).

Roles never rest on colour alone: the residual stream is a thick solid
line, a branch is drawn in dashed boxes, an addition is a circle with
``+``; curves differ by line style and marker as well as by colour.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter

from ..book import figure_style as style
from ..book.figure_style import FONT, LINE_STYLES, MARKERS, SMALL, attention_heatmap, new_figure, styled
from ..errors import shown
from ..text import texts

__all__ = [
    "attention_maps", "block_diagram", "depth_profiles", "gradient_paths", "head0_scores",
    "pre_post_orders", "residual_stream", "seed_bands", "sequential_vs_parallel", "sublayer_orders",
    "top_gradient",
    "training_curves", "vector_text",
]

INK = "0.1"
BRANCH_FILL = "0.93"
# Every reference line of the chapter's figures (a loss to compare with, the end of warm-up, the curve
# c/√L, the circle a rotation keeps): thin, grey and dotted, unlike any data curve (thick, coloured,
# with markers), and named by a label of its own, never by its style.
REFERENCE_STYLE = {"color": "0.45", "linewidth": 1.0, "linestyle": (0, (1, 2))}
VARIANT_STYLE = {   # variant -> (line style, marker, colour from viridis)
    "pre": (LINE_STYLES[0], MARKERS[0], "#440154"),
    "post": (LINE_STYLES[1], MARKERS[1], "#31688e"),
    "none": (LINE_STYLES[2], MARKERS[2], "#35b779"),
}


def vector_text(values: Sequence[float], decimals: int = 3, *, short_integers: bool = True) -> str:
    """``[0.011, 3.989, 0, 0]``: fixed decimals; exact integers (and values that
    round to zero) short unless ``short_integers=False`` (``[2.000, 0.500]``,
    for quantities such as RMS); a real minus sign."""
    def one(value: float) -> str:
        value = float(value)
        if short_integers and round(value, decimals) == 0.0:
            return "0"
        exact = short_integers and value == round(value)
        text = f"{value:.0f}" if exact else f"{value:.{decimals}f}"
        return text.replace("-", "−")
    return "[" + ", ".join(one(v) for v in values) + "]"


def _row_text(values: Sequence[float]) -> str:
    """``[0, 2.000, 0, 0]``: every number with three decimals, a zero (to three decimals) as ``0``."""
    return "[" + ", ".join("0" if round(float(v), 3) == 0.0 else vector_text([v], short_integers=False)[1:-1]
                           for v in values) + "]"


# -- drawing helpers -----------------------------------------------------------

def _math(name: str) -> str:
    """``N_a`` -> ``N$_a$`` (a subscript without the italic maths font)."""
    base, _, sub = name.partition("_")
    return f"{base}$_{sub}$" if sub else name


def _canvas(ax: Axes, width: float, height: float) -> None:
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    ax.set_aspect("auto")
    ax.axis("off")


def _box(ax: Axes, x: float, y: float, text: str, *, width: float = 1.5, height: float = 0.6,
         dashed: bool = True, fontsize: float = FONT) -> None:
    """A branch box centred at ``(x, y)``: dashed frame, light grey fill."""
    ax.add_patch(FancyBboxPatch((x - width / 2, y - height / 2), width, height,
                                boxstyle="round,pad=0.02,rounding_size=0.08",
                                linestyle="--" if dashed else "-", linewidth=1.2,
                                edgecolor=INK, facecolor=BRANCH_FILL if dashed else "white", zorder=3))
    ax.text(x, y, text, ha="center", va="center", fontsize=fontsize, color=INK, zorder=4)


def _plus(ax: Axes, x: float, y: float, radius: float = 0.22) -> None:
    ax.add_patch(Circle((x, y), radius, facecolor="white", edgecolor=INK, linewidth=1.5, zorder=3))
    ax.text(x, y, "+", ha="center", va="center", fontsize=FONT + 2, color=INK, zorder=4)


def _arrow(ax: Axes, start: tuple[float, float], end: tuple[float, float], *,
           width: float = 1.2, style: str = "-") -> None:
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=11,
                                 linewidth=width, linestyle=style, color=INK, shrinkA=0, shrinkB=0))


# -- 1. the residual stream as one line ---------------------------------------

@styled
def residual_stream(rows: Mapping[str, Sequence[float]], token: int = 1) -> Figure:
    """One token through the block: the stream is the thick line; each branch
    reads from it through its RMSNorm and writes back with ``+``.

    ``rows`` maps ``x, N_a, A, x', N_f, F, y`` to the token's ``[d]`` rows, all
    written in one format (``_row_text``: ``2`` beside ``2.000`` read as two kinds of number).
    """
    words = texts("ch31_figures")
    fig = new_figure(style.MAX_WIDTH, 3.0)
    ax = fig.add_subplot()
    _canvas(ax, 10.0, 3.9)
    line_y, branch_y = 1.0, 2.7
    taps, pluses = (1.3, 5.9), (4.4, 9.0)
    ax.plot([0.2, 9.8], [line_y, line_y], color=INK, linewidth=4, solid_capstyle="butt",
            label=words["residual_stream.stream"])
    _arrow(ax, (9.5, line_y), (9.95, line_y), width=4)
    for tap, plus, norm, branch, values in (
            (taps[0], pluses[0], "RMSNorm$_a$", "MHA", ("N_a", "A")),
            (taps[1], pluses[1], "RMSNorm$_f$", "SwiGLU", ("N_f", "F"))):
        _arrow(ax, (tap, line_y), (tap, branch_y - 0.3))
        ax.plot([tap], [line_y], marker="o", markersize=5, color=INK)
        _box(ax, tap + 0.5, branch_y, norm, width=1.55)
        _box(ax, plus - 0.45, branch_y, branch, width=1.2)
        _arrow(ax, (tap + 1.33, branch_y), (plus - 1.05, branch_y))
        _arrow(ax, (plus, branch_y - 0.3), (plus, line_y + 0.22))
        _plus(ax, plus, line_y)
        ax.text((tap + plus) / 2 + 0.05, branch_y + 0.62,
                f"{_math(values[0])} = {_row_text(rows[values[0]])}", ha="center", va="center",
                fontsize=SMALL, color=INK)
        # left of the arrow down to "+": the next tap line is to its right
        ax.text(plus - 0.12, (line_y + branch_y) / 2 + 0.05, f"{values[1]} =\n{_row_text(rows[values[1]])}",
                ha="right", va="center", fontsize=SMALL, color=INK)
    for x, name in ((0.45, "x"), (5.15, "x'"), (9.55, "y")):
        row = np.asarray(rows[name], dtype=float)
        rms = float(np.sqrt(np.mean(row ** 2)))
        shown = name.replace("'", "′")              # x′ as in the text
        ax.text(x, line_y - 0.3, f"{shown} = {_row_text(row)}\nRMS = {rms:.3f}",
                ha="center", va="top", fontsize=SMALL, color=INK)
    ax.set_title(words["residual_stream.title"].format(token=token), fontsize=FONT)
    return fig


# -- 2. the block with its skip paths ------------------------------------------

@styled
def block_diagram(shapes: Mapping[str, str], hidden_width: int) -> Figure:
    """The block from bottom to top, drawn as ``sublayer_orders`` draws one
    sublayer: the residual stream is one thick straight line; each branch
    leaves it at a dot, runs through its norm and sublayer beside it and
    comes back at a ``+`` on the line (the stretch of stream between is the
    residual connection). Each node says what it computes; the
    shapes are written once, grouped (every stream and branch tensor has the
    stream's shape), with the attention weights and SwiGLU's hidden width.

    ``shapes`` maps ``x, N_a, A, x', N_f, F, y, weights`` to text such as
    ``[1, 3, 4]``; ``hidden_width`` is ``d_ff``.
    """
    from ..errors import DepthLabError
    needed = ("x", "N_a", "A", "x'", "N_f", "F", "y", "weights")
    if not isinstance(shapes, Mapping) or any(not isinstance(shapes.get(k), str) for k in needed):
        raise DepthLabError(f"block_diagram shapes must map {', '.join(needed)} to text, got {shapes!r:.80}")
    integer = isinstance(hidden_width, (int, np.integer)) and not isinstance(hidden_width, bool)
    if not integer or not 1 <= hidden_width <= 2**24:
        raise DepthLabError(f"block_diagram hidden_width must be an integer from 1 to 2**24, got {shown(hidden_width)}")
    words = texts("ch31_figures")
    fig = new_figure(style.MAX_WIDTH, 4.9)
    ax = fig.add_subplot()
    _canvas(ax, 9.0, 9.6)
    # as in sublayer_orders and residual_stream: the stream is one thick straight line, here bottom to
    # top; each branch leaves it at a dot, runs through its boxes beside it and comes back at a "+"
    stream_x, main_x, side_x = 0.9, 3.0, 4.6
    ax.plot([stream_x, stream_x], [0.2, 9.1], color=INK, linewidth=4, solid_capstyle="butt")
    _arrow(ax, (stream_x, 9.0), (stream_x, 9.45), width=4)
    for y, key in ((1.75, "norm_a"), (2.95, "attention"), (5.75, "norm_f"), (6.95, "ffn")):
        _box(ax, main_x, y, words[f"block_diagram.{key}"], width=2.6)
    for number, (tap, plus_y) in enumerate(((1.1, 4.2), (5.1, 8.2)), start=1):
        low, high = tap + 0.35, plus_y - 0.95          # the branch's first and last box edges
        ax.plot([stream_x], [tap], marker="o", markersize=6, color=INK)
        ax.plot([stream_x, main_x], [tap, tap], color=INK, linewidth=1.2)
        _arrow(ax, (main_x, tap), (main_x, low))
        _arrow(ax, (main_x, low + 0.6), (main_x, high - 0.6))
        ax.plot([main_x, main_x], [high, plus_y], color=INK, linewidth=1.2)
        _arrow(ax, (main_x, plus_y), (stream_x + 0.23, plus_y))
        _plus(ax, stream_x, plus_y)
        # the stretch of the stream from the branch point to its "+" is the residual connection
        ax.text(stream_x - 0.25, (tap + plus_y) / 2, words["block_diagram.path"].format(number=number),
                rotation=90, ha="right", va="center", fontsize=SMALL, color=INK)
    for y, name in ((0.55, "x"), (4.75, "x′"), (8.85, "y")):       # on the stream (x′ as in the text)
        ax.text(stream_x + 0.15, y, name, ha="left", va="center", fontsize=FONT, color=INK)
    names = {"x": "x", "N_a": "N$_a$", "A": "A", "x'": "x′", "N_f": "N$_f$", "F": "F", "y": "y"}
    for y, name in ((2.35, "N_a"), (3.62, "A"), (6.35, "N_f"), (7.62, "F")):   # in the branches
        ax.text(main_x + 0.15, y, names[name], ha="left", va="center", fontsize=FONT, color=INK)
    # what each node does, to its right
    for y, text in ((1.75, words["block_diagram.norm_does"].format(gain="$\\gamma_a$")),
                    (2.95, words["block_diagram.attention_does"].format(shape=shapes["weights"])),
                    (5.75, words["block_diagram.norm_does"].format(gain="$\\gamma_f$")),
                    (6.95, words["block_diagram.ffn_does"].format(hidden=hidden_width))):
        ax.text(side_x, y, text, ha="left", va="center", fontsize=SMALL, color=INK)
    groups: dict[str, list[str]] = {}
    for key, name in names.items():
        groups.setdefault(shapes[key], []).append(name)
    lines = [words["block_diagram.shapes"]] + [f"{', '.join(group)}: {shape}" for shape, group in groups.items()]
    ax.text(side_x, 9.3, "\n".join(lines), ha="left", va="top", fontsize=SMALL, color=INK,
            bbox={"boxstyle": "round,pad=0.35", "facecolor": "white", "edgecolor": "0.6"})
    return fig


# -- 3. where 0.005440 comes from ----------------------------------------------

@styled
def head0_scores(query: Sequence[float], keys: Sequence[Sequence[float]], scaled: Sequence[float],
                 probabilities: Sequence[float]) -> Figure:
    """Head 0, query 1: the rotated vectors in the head's plane, then the
    scaled scores and their softmax."""
    words = texts("ch31_figures")
    fig = new_figure(style.MAX_WIDTH, 3.1)
    plane, bars = fig.subplots(1, 2, width_ratios=(1.0, 1.25))
    angles = np.linspace(0, 2 * np.pi, 200)
    plane.plot(2 * np.cos(angles), 2 * np.sin(angles), **REFERENCE_STYLE)
    keys = np.asarray(keys, dtype=float)
    query = np.asarray(query, dtype=float)
    plane.annotate("", xy=(0, 2), xytext=(0, 0),
                   arrowprops={"arrowstyle": "-|>", "color": "0.55", "linestyle": "--", "linewidth": 1.2})
    plane.text(0.1, 2.1, words["head0_scores.before"], fontsize=SMALL, color="0.35", ha="left", va="bottom")
    for vector, text, offset in ((keys[0], "$k_0$", (0.0, -0.35)),
                                 (query, "$q_1 = k_1$", (-0.15, 0.25))):
        plane.annotate("", xy=vector, xytext=(0, 0),
                       arrowprops={"arrowstyle": "-|>", "color": INK, "linewidth": 1.8})
        plane.text(vector[0] + offset[0], vector[1] + offset[1], text, fontsize=FONT, ha="center",
                   va="center")
    arc = np.linspace(np.pi / 2, np.pi / 2 + 1.0, 40)
    plane.plot(0.8 * np.cos(arc), 0.8 * np.sin(arc), color=INK, linewidth=1)
    plane.text(-0.45, 1.0, words["head0_scores.radian"], fontsize=SMALL, ha="right", va="center")
    plane.set_xlim(-2.5, 2.5)
    plane.set_ylim(-0.8, 2.6)
    plane.set_aspect("equal")
    plane.set_xlabel(words["head0_scores.coordinate"].format(index=0))
    plane.set_ylabel(words["head0_scores.coordinate"].format(index=1))
    plane.set_title(words["head0_scores.plane"])
    positions = np.arange(2)
    scaled = np.asarray(scaled, dtype=float)
    bars.barh(positions, scaled, color=["0.8", "0.35"], edgecolor=INK)   # labels name the keys
    bars.axvline(0, color=INK, linewidth=0.8)
    for index, (score, p) in enumerate(zip(scaled, probabilities, strict=True)):
        inside = score < 0
        bars.text(score + (0.15 if inside else -0.15), index, f"{score:.3f}\np = {p:.6f}".replace("-", "−"),
                  ha="left" if inside else "right", va="center", fontsize=SMALL,
                  color=INK if inside else "white")
    bars.set_yticks(positions, [words["head0_scores.key"].format(key=key) for key in positions])
    bars.set_xlim(-3.2, 3.4)
    bars.set_xlabel(words["head0_scores.score"])
    bars.set_title(words["head0_scores.bars"])
    return fig


# -- 4. attention inside the block ---------------------------------------------

@styled
def attention_maps(weights: np.ndarray) -> Figure:
    """``weights: [h, T, T]``: one annotated heatmap per head, hidden keys hatched."""
    words = texts("ch31_figures")
    weights = np.asarray(weights, dtype=float)
    fig = new_figure(style.MAX_WIDTH, 3.0)
    axes = fig.subplots(1, weights.shape[0])
    image = None
    for head, ax in enumerate(np.atleast_1d(axes)):
        image = attention_heatmap(ax, weights[head], title=words["head"].format(head=head), decimals=3)
        ax.set_xlabel(words["attention_maps.key"])      # positions, as chapter 30's figures say
        ax.set_ylabel(words["attention_maps.query"])
    fig.colorbar(image, ax=axes, shrink=0.85, label=words["attention_maps.weight"])
    return fig


# -- 5. pre and post: one sublayer, two orders --------------------------------

@styled
def sublayer_orders() -> Figure:
    """One sublayer in two orders side by side: Pre puts the norm inside the
    branch (the stream passes the ``+`` untouched), Post puts it on the
    stream after the ``+``. A picture of wiring only; no data."""
    words = texts("ch31_figures")
    fig = new_figure(style.MAX_WIDTH, 2.3)
    panels = fig.subplots(1, 2)
    for ax, order in zip(panels, ("pre", "post"), strict=True):
        _canvas(ax, 5.0, 3.3)
        line_y, branch_y = 0.9, 2.2
        ax.set_title(words[f"sublayer_orders.{order}"], fontsize=FONT)
        ax.plot([0.25, 4.6], [line_y, line_y], color=INK, linewidth=4, solid_capstyle="butt")
        _arrow(ax, (4.4, line_y), (4.85, line_y), width=4)
        ax.text(0.15, line_y, "x", ha="right", va="center", fontsize=FONT)
        ax.text(4.7, line_y + 0.25, "x′", ha="right", va="bottom", fontsize=FONT)
        tap = 0.55
        ax.plot([tap], [line_y], marker="o", markersize=5, color=INK)
        _arrow(ax, (tap, line_y), (tap, branch_y - 0.33))
        if order == "pre":
            _box(ax, tap + 0.55, branch_y, "RMSNorm", width=1.25, fontsize=SMALL)
            _box(ax, 2.5, branch_y, words["sublayer_orders.sublayer"], width=1.1, height=0.7,
                 fontsize=SMALL)
            _arrow(ax, (tap + 1.18, branch_y), (1.95, branch_y))
            plus, branch_end = 3.45, 3.05
        else:
            _box(ax, tap + 0.5, branch_y, words["sublayer_orders.sublayer"], width=1.1, height=0.7,
                 fontsize=SMALL)
            plus, branch_end = 2.1, 1.6
        _arrow(ax, (branch_end, branch_y), (plus, line_y + 0.22))
        _plus(ax, plus, line_y)
        if order == "post":
            _box(ax, 3.5, line_y, "RMSNorm", width=1.25, dashed=False, fontsize=SMALL)
        ax.text(1.6 if order == "pre" else 1.05, branch_y + 0.5, words["sublayer_orders.branch"],
                ha="center", va="bottom", fontsize=SMALL, color=INK)
        ax.text(2.5, line_y - 0.35, words[f"sublayer_orders.{'untouched' if order == 'pre' else 'normalised'}"],
                ha="center", va="top", fontsize=SMALL, color=INK)
    return fig


# -- 5b. pre and post: what changes ---------------------------------------------

@styled
def pre_post_orders(pre: Mapping[str, object], post: Mapping[str, object]) -> Figure:
    """Two wirings of the first residual stage with the same parts.

    Each mapping holds ``input_rms`` (RMS of the row attention reads),
    ``weight`` (query 1's weight on key 0 in head 0), ``output`` (``x'_1``):
    ``lesson31.token_summary`` of a ``FirstStage``.
    """
    words = texts("ch31_figures")
    fig = new_figure(style.MAX_WIDTH, 3.7)
    ax = fig.add_subplot()
    _canvas(ax, 10.0, 6.9)
    for top, name, data, order in ((6.6, "Pre: x' = x + MHA(RMSNorm(x))", pre, "pre"),
                                   (3.1, "Post: x' = RMSNorm(x + MHA(x))", post, "post")):
        line_y, branch_y = top - 2.1, top - 0.95
        ax.text(0.1, top, name, fontsize=FONT, ha="left", va="center", color=INK, weight="bold")
        ax.plot([0.4, 8.0], [line_y, line_y], color=INK, linewidth=4, solid_capstyle="butt")
        ax.text(0.25, line_y, "x", ha="right", va="center", fontsize=FONT)
        ax.plot([0.8, 0.8], [line_y, branch_y], color=INK, linewidth=1.2)
        first = "RMSNorm" if order == "pre" else "MHA"
        _box(ax, 1.9, branch_y, first, width=1.4)
        _arrow(ax, (0.8, branch_y), (1.2, branch_y))
        if order == "pre":
            _box(ax, 3.8, branch_y, "MHA", width=1.2)
            _arrow(ax, (2.6, branch_y), (3.2, branch_y))
        last = 4.4 if order == "pre" else 2.6
        plus = last + 1.0
        _arrow(ax, (last, branch_y), (plus - 0.12, line_y + 0.22))
        _plus(ax, plus, line_y)
        if order == "post":
            _box(ax, 6.6, line_y, "RMSNorm", width=1.4, dashed=False)
        _arrow(ax, (7.6, line_y), (8.05, line_y), width=4)
        ax.text(8.15, line_y, "x′", ha="left", va="center", fontsize=FONT)
        ax.text(1.0, line_y - 0.4, words["pre_post_orders.reads"].format(rms=float(data["input_rms"])),
                ha="left", va="top", fontsize=SMALL)
        ax.text(plus + 0.4, branch_y, words["pre_post_orders.weight"].format(weight=float(data["weight"])),
                ha="left", va="center", fontsize=SMALL)
        ax.text(9.95, line_y - 0.4, f"$x'_1$ = {vector_text(data['output'])}", ha="right", va="top",
                fontsize=SMALL)
    return fig


# -- 6. a recurrence waits, attention does not ----------------------------------

@styled
def sequential_vs_parallel(states: Sequence[float], inputs: Sequence[float] | None = None) -> Figure:
    """Left: ``s_t`` needs ``s_{t-1}`` (T steps one after another), with the
    inputs ``u_t`` written under it when given. Right: every attention row
    reads the inputs it may see directly (one step for all)."""
    from ..errors import DepthLabError
    try:
        values = np.asarray(states if inputs is None else [states, inputs], dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise DepthLabError("sequential_vs_parallel states and inputs must be numbers of one length, "
                            f"got {states!r:.60} and {inputs!r:.60}") from error
    if values.ndim != (1 if inputs is None else 2) or not 1 <= values.shape[-1] <= 12 \
            or not np.all(np.isfinite(values)):
        raise DepthLabError(f"sequential_vs_parallel needs 1 to 12 finite states, got {states!r:.60}")
    words = texts("ch31_figures")
    fig = new_figure(style.MAX_WIDTH, 2.5)
    left, right = fig.subplots(1, 2)
    tokens = len(states)
    for ax, title in ((left, words["sequential_vs_parallel.rnn"]), (right, words["sequential_vs_parallel.attention"])):
        ax.set_xlim(-0.6, tokens - 0.4)
        ax.set_ylim(-0.75, 2.2)
        ax.axis("off")
        ax.set_title(title)
        for t in range(tokens):
            name = f"$x_{t}$" if ax is right else f"$u_{t}$" if inputs is None else words[
                "sequential_vs_parallel.input"].format(index=t, value=f"{inputs[t]:g}".replace("-", "−"))
            ax.text(t, 0, name, ha="center", va="center",
                    fontsize=FONT, bbox={"boxstyle": "round", "facecolor": "white", "edgecolor": INK})
    for t, value in enumerate(states):
        left.text(t, 1.4, f"$s_{t}$\n{value:.3f}", ha="center", va="center", fontsize=SMALL,
                  bbox={"boxstyle": "round", "facecolor": BRANCH_FILL, "edgecolor": INK})
        left.annotate("", xy=(t, 1.05), xytext=(t, 0.25),
                      arrowprops={"arrowstyle": "-|>", "color": INK})
        if t:
            left.annotate("", xy=(t - 0.33, 1.4), xytext=(t - 0.67, 1.4),
                          arrowprops={"arrowstyle": "-|>", "color": INK, "linewidth": 2})
        left.text(t, -0.55, words["sequential_vs_parallel.step"].format(step=t + 1), ha="center", va="center",
                  fontsize=SMALL)
        right.text(t, 1.4, f"$y_{t}$", ha="center", va="center", fontsize=FONT,
                   bbox={"boxstyle": "round", "facecolor": BRANCH_FILL, "edgecolor": INK})
        for k in range(t + 1):
            right.annotate("", xy=(t, 1.15), xytext=(k, 0.25),
                           arrowprops={"arrowstyle": "-|>", "color": INK, "linewidth": 0.9})
        right.text(t, -0.55, words["sequential_vs_parallel.step"].format(step=1), ha="center", va="center",
                   fontsize=SMALL)
    return fig


# -- 7-8. the depth lab ---------------------------------------------------------

def _variant_line(ax: Axes, xs: np.ndarray, ys: np.ndarray, variant: str, label: str) -> None:
    line_style, marker, colour = VARIANT_STYLE[variant]
    ax.plot(xs, ys, linestyle=line_style, marker=marker, markersize=4,
            markevery=max(1, len(xs) // 8), color=colour, label=label, linewidth=1.8)


def _log_axis(ax: Axes, values: Sequence[np.ndarray] = (), *, bracket: bool = False) -> None:
    """Log scale with plain tick labels (``0.3``, ``1``, ``1000``). Given the
    ``values`` drawn, ticks suit their span: every ``1…9`` times a power of ten
    within a decade, ``1, 2, 5`` up to two decades, powers of ten beyond. With ``bracket`` the
    axis also reaches the labelled ticks on either side of the values."""
    ax.set_yscale("log")
    subs: tuple[float, ...] = (1.0, 2.0, 5.0)
    if len(values):
        drawn = np.concatenate([np.ravel(v) for v in values])
        drawn = drawn[np.isfinite(drawn) & (drawn > 0)]
        decades = float(np.log10(drawn.max() / drawn.min())) if drawn.size else 1.0
        subs = tuple(range(1, 10)) if decades < 1 else (1.0, 2.0, 5.0) if decades <= 2 else (1.0,)
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=subs))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    if bracket and len(values) and drawn.size:
        # The axis runs from the labelled tick at or below the smallest value to the one at or
        # above the largest, so that every point sits between two labels.
        ticks = np.array([sub * 10.0 ** power for power in range(-12, 13) for sub in subs])
        low, high = ticks[ticks <= drawn.min()].max(), ticks[ticks >= drawn.max()].min()
        # Fixed: within less than a decade or two LogLocator falls back to linear steps (0.15, 0.25).
        ax.yaxis.set_major_locator(FixedLocator(ticks[(ticks >= low) & (ticks <= high)]))
        ax.set_ylim(low / 1.05, high * 1.05)


PAIR = ("pre", "post")      # the two schemes every depth figure compares


def _check_depth_panels(panels: object, labels: object) -> None:
    from ..errors import DepthLabError
    if not isinstance(labels, Mapping):
        raise DepthLabError(f"depth_profiles labels must map a variant to its name, got {type(labels).__name__}")
    if not isinstance(panels, Mapping) or not 1 <= len(panels) <= 3:
        raise DepthLabError("depth_profiles panels must map 1 to 3 titles to {variant: DepthRun}, "
                            f"got {type(panels).__name__} of {len(panels) if isinstance(panels, Mapping) else '?'}")
    for title, runs in panels.items():
        if not isinstance(runs, Mapping) or not runs:
            raise DepthLabError(f"depth_profiles panels[{shown(title)}] must map variants to runs, got {shown(runs)}")
        for variant, result in runs.items():
            if variant not in labels or variant not in VARIANT_STYLE:
                raise DepthLabError(f"depth_profiles panels[{shown(title)}] has variant {shown(variant)}; "
                                    f"known: {', '.join(v for v in VARIANT_STYLE if v in labels)}")
            try:
                rms = np.asarray(getattr(result, "stream_rms", None), dtype=np.float64)
                norms = np.asarray(getattr(result, "gradient_norms", None), dtype=np.float64)
            except (TypeError, ValueError):
                rms = norms = np.zeros(0)
            if rms.ndim != 1 or norms.ndim != 1 or len(rms) != len(norms) + 1 or not len(norms):
                raise DepthLabError(f"depth_profiles panels[{shown(title)}][{variant!r}] must be a DepthRun "
                                    f"(stream_rms [L + 1], gradient_norms [L]), got {type(result).__name__}")
            if not np.all(np.isfinite(rms)) or not np.all(np.isfinite(norms) & (norms > 0)):
                raise DepthLabError(f"depth_profiles panels[{shown(title)}][{variant!r}] needs finite RMS and positive "
                                    f"finite gradient norms (log scale), got {vector_text(norms[:4])}")


SPLIT_HALF, ROW_HALF = 1.6, 1.225   # inches: half of a row with split gradients, half of any other row


@styled
def depth_profiles(panels: Mapping[str, Mapping[str, object]], labels: Mapping[str, str], *,
                   pair_scale: str = "log") -> Figure:
    """One row per setting (``panels`` maps a title such as ``"weight scale 1"``
    to ``{variant: DepthRun}``): left, the RMS of the stream after each layer;
    right, the gradient norm of each block's parameters on a log scale.

    When a row holds other variants besides Pre and Post (the stack without
    residual connections, whose gradients span orders of magnitude), its gradients
    are split in two stacked panels with their own scales: above, the others
    (log); below, Pre and Post alone, so that their spread fills the axis, on a
    log or (``pair_scale="linear"``) a linear scale."""
    from ..errors import DepthLabError
    if pair_scale not in ("log", "linear"):
        raise DepthLabError(f"depth_profiles pair_scale must be 'log' or 'linear', got {shown(pair_scale)}")
    _check_depth_panels(panels, labels)
    words = texts("ch31_figures")
    split = [any(v not in PAIR for v in runs) and any(v in PAIR for v in runs) for runs in panels.values()]
    half = [SPLIT_HALF if s else ROW_HALF for s in split]
    fig = new_figure(style.MAX_WIDTH, 2 * sum(half) + 0.5)
    grid = fig.add_gridspec(2 * len(panels), 2, height_ratios=np.repeat(half, 2))
    rms_axes = []
    for row, ((title, runs), apart) in enumerate(zip(panels.items(), split, strict=True)):
        rms_ax = fig.add_subplot(grid[2 * row:2 * row + 2, 0])
        rms_axes.append(rms_ax)
        if apart:
            others_ax = fig.add_subplot(grid[2 * row, 1])
            pair_ax = fig.add_subplot(grid[2 * row + 1, 1], sharex=others_ax)
            others_ax.tick_params(labelbottom=False)
            others = [v for v in runs if v not in PAIR]
            others_ax.text(0.98, 0.94, ", ".join(labels[v] for v in others), transform=others_ax.transAxes,
                           ha="right", va="top", fontsize=SMALL, zorder=5,
                           bbox={"boxstyle": "round,pad=0.2", "facecolor": "white", "edgecolor": "none",
                                 "alpha": 0.85})
            groups = ((others_ax, others, words["depth_profiles.gradient_title"].format(title=title)),
                      (pair_ax, [v for v in runs if v in PAIR], words["depth_profiles.pair_title"]))
        else:
            grad_ax = pair_ax = fig.add_subplot(grid[2 * row:2 * row + 2, 1])
            groups = ((grad_ax, list(runs), words["depth_profiles.gradient_title"].format(title=title)),)
        for variant, result in runs.items():
            _variant_line(rms_ax, np.arange(len(result.stream_rms)), result.stream_rms, variant, labels[variant])
        for ax, variants, ax_title in groups:
            for variant in variants:
                norms = runs[variant].gradient_norms
                _variant_line(ax, np.arange(1, len(norms) + 1), norms, variant, labels[variant])
            if apart and ax is pair_ax and pair_scale == "linear":
                drawn = np.concatenate([runs[v].gradient_norms for v in variants])
                pad = 0.08 * (drawn.max() - drawn.min())
                ax.set_ylim(drawn.min() - pad, drawn.max() + pad)
            else:
                _log_axis(ax, [runs[v].gradient_norms for v in variants])
            ax.set_ylabel(words["depth_profiles.gradient_short" if apart else "depth_profiles.gradient"])
            ax.set_title(ax_title)
            ax.grid(True, color="0.9", linewidth=0.6)
        rms_ax.set_ylim(bottom=0)
        rms_ax.set_ylabel(words["depth_profiles.rms"])
        rms_ax.set_title(words["depth_profiles.rms_title"].format(title=title))
        rms_ax.grid(True, color="0.9", linewidth=0.6)
    rms_axes[-1].set_xlabel(words["depth_profiles.layer_input"])
    pair_ax.set_xlabel(words["depth_profiles.layer"])
    handles = {}
    for ax in rms_axes:
        handles.update({text: line for line, text in zip(*ax.get_legend_handles_labels(), strict=True)})
    fig.legend(list(handles.values()), list(handles), loc="outside upper center", ncols=3, frameon=False)
    return fig


REFERENCE_LABEL = "∝ 1/√L"


FEW_DEPTHS = 6      # up to this many depths, top_gradient ticks each one


@styled
def top_gradient(depths: Sequence[int], panels: Mapping[str, Mapping[str, np.ndarray]],
                 labels: Mapping[str, str], *, reference: Mapping[str, float] | None = None,
                 quantity: str | None = None) -> Figure:
    """A gradient norm of the top block against the depth L of the stack, one
    panel per setting (``panels`` maps a title to ``{variant: [len(depths)]}``).
    ``reference`` maps a panel title to ``c``: a reference curve ``c/√L``; ``quantity`` names
    the y axis (by default the gradient norm of the top block)."""
    words = texts("ch31_figures")
    fig = new_figure(style.MAX_WIDTH, 3.3)
    axes = np.atleast_1d(fig.subplots(1, len(panels), sharey=True))
    depths = np.asarray(depths)
    drawn = [np.asarray(values, dtype=float) for norms in panels.values() for values in norms.values()]
    drawn += [value / np.sqrt(depths) for value in (reference or {}).values()]     # the panels share y
    for ax, (title, norms) in zip(axes, panels.items(), strict=True):
        for variant, values in norms.items():
            _variant_line(ax, depths, np.asarray(values, dtype=float), variant, labels[variant])
        if reference and title in reference:
            ax.plot(depths, reference[title] / np.sqrt(depths), label=REFERENCE_LABEL, **REFERENCE_STYLE)
        _log_axis(ax, drawn, bracket=True)
        if len(depths) <= FEW_DEPTHS:      # a few stacks: a tick at each, none between
            ax.set_xticks(depths, [str(int(depth)) for depth in depths])
        ax.set_title(title)
        ax.set_xlabel(words["top_gradient.depth"])
        ax.grid(True, color="0.9", linewidth=0.6)
    axes[0].set_ylabel(words["top_gradient.quantity"] if quantity is None else quantity)
    handles = {}
    for ax in axes:
        handles.update({text: line for line, text in zip(*ax.get_legend_handles_labels(), strict=True)})
    fig.legend(list(handles.values()), list(handles), loc="outside upper center", ncols=3,
               frameon=False)
    return fig


# -- 9. the backward path -------------------------------------------------------

GRADIENT_STYLE = (0, (4, 2))     # dashed: every path of the gradient
PATH_FONT = FONT + 2             # J labels: their sub- and superscripts stay >= 11 CSS px
IDENTITY_HIGHLIGHT = "#fde725"   # viridis' yellow, under Pre's path of identities only


def _gradient_arrow(ax: Axes, start: tuple[float, float], end: tuple[float, float]) -> None:
    """A dashed arrow of the gradient, from ``start`` to ``end`` (towards the input)."""
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=11, linewidth=1.4,
                                 linestyle=GRADIENT_STYLE, color=INK, shrinkA=0, shrinkB=0, zorder=5))


@styled
def gradient_paths() -> Figure:
    """The gradient on its way down through two sublayers, Pre above, Post
    below. The stream is the thick line; dashed arrows are the gradient going
    to the input. At every ``+`` it splits: one path stays on the stream (the
    ``I`` of the Jacobian), the other goes back through the branch (``J_N^T
    J_f^T`` in Pre, ``J_f^T`` in Post); in Post every path also crosses the
    norm on the stream, which divides it by the RMS there. Pre's path of
    identities alone is highlighted (a wide yellow band under it, and named)."""
    words = texts("ch31_figures")
    fig = new_figure(style.MAX_WIDTH, 5.0)
    ax = fig.add_subplot()
    _canvas(ax, 10.0, 10.0)
    for top, order, name in ((9.8, "pre", "Pre: x′ = x + f(N(x))"),
                             (4.75, "post", "Post: x′ = N(x + f(x))")):
        line_y, branch_y, grad_y = top - 2.75, top - 1.55, top - 3.4
        ax.text(0.1, top, name, fontsize=FONT, ha="left", va="center", color=INK, weight="bold")
        ax.plot([0.5, 9.4], [line_y, line_y], color=INK, linewidth=4, solid_capstyle="butt")
        _arrow(ax, (9.1, line_y), (9.55, line_y), width=4)
        ax.text(0.35, line_y, "x", ha="right", va="center", fontsize=FONT)
        ax.text(9.65, line_y, "y", ha="left", va="center", fontsize=FONT)
        # the path on the stream, under the line, from the output to the input
        if order == "pre":
            ax.plot([9.4, 0.5], [grad_y, grad_y], color=IDENTITY_HIGHLIGHT, linewidth=9,
                    solid_capstyle="round", zorder=2, label="identity path")
        _gradient_arrow(ax, (9.4, grad_y), (0.5, grad_y))
        below = (words["gradient_paths.identity_only"] if order == "pre"
                 else words["gradient_paths.to_input"])
        ax.text(0.55, grad_y - 0.25, below, ha="left", va="top", fontsize=FONT, color=INK)
        for index, start in enumerate((0.9, 5.1)):
            plus = start + 2.4
            source = "x" if index == 0 else "x′"
            ax.plot([start, start], [line_y, branch_y], color=INK, linewidth=1.2)
            ax.plot([start], [line_y], marker="o", markersize=4, color=INK)
            _box(ax, start + 1.15, branch_y, f"f(N({source}))" if order == "pre" else f"f({source})",
                 width=1.5)
            _arrow(ax, (start, branch_y), (start + 0.4, branch_y))
            _arrow(ax, (start + 1.9, branch_y), (plus - 0.12, line_y + 0.22))
            _plus(ax, plus, line_y)
            # the path back through the branch: from the "+" over the box to the tap
            over = line_y + 1.75
            ax.plot([plus + 0.05, plus + 0.05, start - 0.15], [line_y + 0.25, over, over], color=INK,
                    linewidth=1.4, linestyle=GRADIENT_STYLE)
            _gradient_arrow(ax, (start - 0.15, over), (start - 0.15, line_y + 0.08))
            branch_label = "J$_N^T$ J$_f^T$" if order == "pre" else "J$_f^T$"
            ax.text(start + 1.15, over + 0.08, branch_label, ha="center", va="bottom",
                    fontsize=PATH_FONT, color=INK)
            ax.text((start + plus) / 2, grad_y + 0.12, "I", ha="center", va="bottom", fontsize=PATH_FONT,
                    color=INK)
            if order == "post":
                _box(ax, plus + 0.75, line_y, "N", width=0.55, dashed=False)
                ax.text(plus + 0.75, grad_y - 0.25, "J$_N^T$: ÷ RMS", ha="center", va="top",
                        fontsize=PATH_FONT, color=INK)
            if index == 0:       # x' between the two sublayers, on the line
                ax.text(start + 3.8 if order == "post" else start + 3.1, line_y + 0.12, "x′",
                        ha="center", va="bottom", fontsize=FONT, color=INK)
    return fig


# -- 10. training ----------------------------------------------------------------

def _running_mean(losses: Sequence[float], window: int) -> tuple[np.ndarray, np.ndarray]:
    """Steps ``0 … n-1`` and the mean of the last ``window`` losses (fewer at the start)."""
    losses = np.asarray(losses, dtype=float)
    sums = np.cumsum(np.concatenate([[0.0], losses]))
    ends = np.arange(1, len(losses) + 1)
    starts = np.maximum(0, ends - window)
    return ends - 1, (sums[ends] - sums[starts]) / (ends - starts)


def _from_step_one(losses: Sequence[float], window: int) -> tuple[np.ndarray, np.ndarray]:
    """Steps ``1 … n`` and the mean of the last ``window`` losses up to each step:
    of all the losses so far while there are fewer than ``window``."""
    steps, mean = _running_mean(losses, window)
    return steps + 1, mean


@styled
def training_curves(panels: Mapping[str, Mapping[str, Sequence[float]]],
                    references: Mapping[str, float], *, window: int = 20,
                    schedules: Mapping[str, Sequence[float]] | None = None,
                    seeds: Mapping[str, Mapping[str, Sequence[Sequence[float]]]] | None = None
                    ) -> Figure:
    """Loss against step ``1 … n``, one panel per setting (``panels`` maps a title to
    ``{label: losses}``); each curve is the mean over the last ``window`` steps, over
    all the steps so far before step ``window`` (an expanding window), and
    ``references`` (label -> loss) are horizontal reference lines, named
    in the right margin. ``seeds`` (title -> label -> several runs) adds a thin curve per
    run in the style of its label. ``schedules`` (label -> learning rate per
    step) adds a panel below."""
    words = texts("ch31_figures")
    rows = 2 if schedules else 1
    fig = new_figure(style.MAX_WIDTH, 3.1 + 1.3 * (rows - 1))
    grid = fig.add_gridspec(rows, len(panels), height_ratios=(2.4, 1.0)[:rows])
    axes = [fig.add_subplot(grid[0, i]) for i in range(len(panels))]
    styles: dict[str, int] = {}

    def look(label: str) -> dict[str, object]:
        index = styles.setdefault(label, len(styles))
        return {"linestyle": LINE_STYLES[index % len(LINE_STYLES)], "color": _CURVE_COLOURS[index % 4]}

    for ax, (title, curves) in zip(axes, panels.items(), strict=True):
        for label, losses in curves.items():
            steps, mean = _from_step_one(losses, window)
            ax.plot(steps, mean, label=label, linewidth=1.8, markersize=4,
                    marker=MARKERS[styles.setdefault(label, len(styles)) % len(MARKERS)],
                    markevery=max(1, len(steps) // 6), **look(label))
            for run in (seeds or {}).get(title, {}).get(label, ()):
                ax.plot(*_from_step_one(run, window), linewidth=0.9, alpha=0.75, label="_seed", **look(label))
        for text, value in references.items():   # under the curves: a curve on it stays visible
            ax.axhline(value, label=f"_ref {text}", zorder=1, **REFERENCE_STYLE)
        ax.set_title(title)
        ax.set_xlabel(words["training_curves.step"])
        ax.set_xlim(1, max(len(losses) for losses in curves.values()))    # the axis ends at the data
        ax.grid(True, color="0.9", linewidth=0.6)
    axes[0].set_ylabel(words["training_curves.loss"].format(window=window))
    for ax in axes[1:]:
        ax.sharey(axes[0])
        ax.tick_params(labelleft=False)
    # the references (one style) are named in the right margin of the last panel: the panels share y
    _margin_labels(axes[-1], [(value, text, "", 0) for text, value in references.items()])
    if schedules:   # drawn like the curve of the same label
        lr_ax = fig.add_subplot(grid[1, :])
        for label, rates in schedules.items():
            lr_ax.plot(np.arange(1, len(rates) + 1), rates, label=label, linewidth=1.6, **look(label))
        lr_ax.set_xlim(1, len(rates))
        lr_ax.set_ylabel(words["training_curves.rate"])
        lr_ax.set_xlabel(words["training_curves.step"])
        lr_ax.set_ylim(bottom=0)
        lr_ax.grid(True, color="0.9", linewidth=0.6)
        lr_ax.legend(loc="lower right", frameon=False)
    handles = {}
    for ax in axes:
        handles.update({text: line for line, text in zip(*ax.get_legend_handles_labels(), strict=True)
                        if not text.startswith("_")})
    if seeds:
        handles[words["training_curves.seeds"]] = Line2D([], [], color="0.3", linewidth=0.9)
    fig.legend(list(handles.values()), list(handles), loc="outside upper center",
               ncols=min(3, len(handles)), frameon=False)
    return fig


MAX_BAND_RUNS, MAX_BAND_STEPS = 1_000, 100_000


def _band_runs(runs: object, where: str) -> np.ndarray:
    """``[seeds, steps]`` of finite numbers: one row a run, all of one length."""
    from ..errors import DepthLabError
    try:
        rows = [np.asarray(run, dtype=float) for run in runs]
    except (TypeError, ValueError, OverflowError) as error:
        raise DepthLabError(f"seed bands {where} must be runs of numbers, got {type(runs).__name__}") from error
    if not rows or len(rows) > MAX_BAND_RUNS:
        raise DepthLabError(f"seed bands {where} must hold 1 to {MAX_BAND_RUNS} runs, got {len(rows)}")
    lengths = {row.shape for row in rows}
    if len(lengths) != 1 or rows[0].ndim != 1 or not 1 <= rows[0].size <= MAX_BAND_STEPS:
        raise DepthLabError(f"seed bands {where} must be runs of one length in [1, {MAX_BAND_STEPS}], "
                            f"got shapes {sorted(lengths)[:3]}")
    table = np.stack(rows)
    if not np.isfinite(table).all():
        raise DepthLabError(f"seed bands {where} must be finite, got NaN or infinity")
    return table


@styled
def seed_bands(panels: Mapping[str, Mapping[str, Sequence[Sequence[float]]]], *,
               ylabels: Mapping[str, str] | None = None, references: Mapping[str, float] | None = None,
               marks: Mapping[str, float] | None = None, window: int = 1, height: float = 3.0) -> Figure:
    """Many seeds of a few settings, without a tangle of thin lines.

    ``panels`` maps a panel title to ``{label: runs}`` (``runs``: one
    sequence per seed, all of one length). Each label gets its median over
    the seeds as a thick line (its own line style, marker and colour) and
    the range over the seeds (lowest to highest) as a light band; with
    ``window > 1`` every run is first a running mean over ``window`` steps.
    The x axis ends at the last step. One panel: each line is named in the
    right margin, at its end (direct labels, where no line crosses them); more:
    one legend above. ``references`` (text -> value) are horizontal reference
    lines, named in the right margin (of the last panel), ``marks`` (text ->
    step) vertical ones, named at the top, above every line.
    """
    from ..errors import DepthLabError
    if not isinstance(panels, Mapping) or not 1 <= len(panels) <= 3 or not all(
            isinstance(c, Mapping) and 1 <= len(c) <= len(_CURVE_COLOURS) for c in panels.values()):
        raise DepthLabError("seed bands panels must map 1 to 3 titles to 1 to 4 labelled groups of runs, "
                            f"got {type(panels).__name__} of {len(panels) if isinstance(panels, Mapping) else '?'}")
    if isinstance(window, bool) or not isinstance(window, int) or not 1 <= window <= MAX_BAND_STEPS:
        raise DepthLabError(f"seed bands window must be an integer in [1, {MAX_BAND_STEPS}], got {shown(window)}")
    if isinstance(height, bool) or not isinstance(height, (int, float)) or not 1.5 <= height <= 6:
        raise DepthLabError(f"seed bands height must be a number of inches in [1.5, 6], got {shown(height)}")
    lines = {}
    for key, extra in (("references", references), ("marks", marks), ("ylabels", ylabels)):
        if extra is not None and not isinstance(extra, Mapping):
            raise DepthLabError(f"seed bands {key} must be a mapping, got {type(extra).__name__}")
        lines[key] = dict(extra or {})
    for key in ("references", "marks"):
        for text, value in lines[key].items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value):
                raise DepthLabError(f"seed bands {key}[{shown(text)}] must be a finite number, got {shown(value)}")
    tables = {title: {label: _band_runs(runs, f"{title} / {label}") for label, runs in curves.items()}
              for title, curves in panels.items()}

    fig = new_figure(style.MAX_WIDTH, height)
    axes = fig.subplots(1, len(tables), squeeze=False)[0]
    order: dict[str, int] = {}
    for ax, (title, curves) in zip(axes, tables.items(), strict=True):
        ends = []
        for label, table in curves.items():
            index = order.setdefault(label, len(order))
            if window > 1:
                table = np.stack([_running_mean(run, window)[1] for run in table])
            steps = np.arange(1, table.shape[1] + 1)
            colour = _CURVE_COLOURS[index]
            ax.fill_between(steps, table.min(axis=0), table.max(axis=0), color=colour, alpha=0.16,
                            linewidth=0, label=f"_band {label}")
            median = np.median(table, axis=0)
            ax.plot(steps, median, color=colour, linewidth=2.0, linestyle=LINE_STYLES[index],
                    marker=MARKERS[index], markersize=4, markevery=max(1, len(steps) // 6), label=label)
            ends.append((median[-1], label, colour, steps[-1]))
        for text, value in lines["references"].items():
            ax.axhline(value, label=f"_ref {text}", **REFERENCE_STYLE)
            if len(tables) == 1 or ax is axes[-1]:    # named in the right margin (one panel: among the curves)
                ends.append((value, text, "", 0))
        for text, step in lines["marks"].items():
            ax.axvline(step, label=f"_mark {text}", **REFERENCE_STYLE)
        if lines["marks"]:        # named at the top, in a strip above every curve, band and reference
            _headroom(ax)
        for text, step in lines["marks"].items():
            ax.annotate(text, (step, 1), xycoords=("data", "axes fraction"), xytext=(-3, -3),
                        textcoords="offset points", ha="right", va="top", fontsize=SMALL, color="0.3")
        ax.set_title(title)
        ax.set_xlabel(texts("ch31_figures")["training_curves.step"])
        ax.set_xlim(0, steps[-1])    # the axis ends at the data
        if title in lines["ylabels"]:
            ax.set_ylabel(lines["ylabels"][title])
        ax.grid(True, color="0.9", linewidth=0.6)
        _margin_labels(ax, ends if len(tables) == 1 else [end for end in ends if not end[2]])
    if len(tables) > 1:
        handles, labels = axes[0].get_legend_handles_labels()
        visible = [(h, t) for h, t in zip(handles, labels, strict=True) if not t.startswith("_")]
        fig.legend([h for h, _ in visible], [t for _, t in visible], loc="outside upper center",
                   ncols=len(visible), frameon=False)
    return fig


def _margin_labels(ax: Axes, ends: list[tuple[float, str, str, int]]) -> None:
    """Each ``(value, label, colour, step)`` named in the right margin, outside the axes, at its height,
    nudged apart so that none overlap; a curve's label (``colour``) is joined to the curve's end by a
    short line of its colour. The curves and the reference lines stop at the axes' edge, so no line
    crosses a label."""
    if not ends:
        return
    low, high = ax.get_ylim()
    gap = 0.085 * (high - low)
    placed: list[float] = []
    for value, label, colour, _ in sorted(ends):     # every curve ends at the axes' right edge
        y = max(value, placed[-1] + gap) if placed else value
        placed.append(y)
        line = {"arrowprops": {"arrowstyle": "-", "color": colour or "0.45", "linewidth": 0.8,
                               "shrinkA": 0, "shrinkB": 2}} if colour or y != value else {}
        ax.annotate(label, (1.0, value), xycoords=("axes fraction", "data"), xytext=(1.03, y),
                    textcoords=("axes fraction", "data"), va="center", fontsize=SMALL, annotation_clip=False,
                    color=INK if colour else "0.3", **line)
    ax.set_ylim(low, max(high, placed[-1] + gap / 2))


LABEL_STRIP = 0.14    # the top part of an axis kept free of data, for the labels of vertical lines


def _headroom(ax: Axes) -> None:
    """Raise the top of the y axis so that its top ``LABEL_STRIP`` holds no line, band or point."""
    tops = [float(np.max(line.get_ydata())) for line in ax.get_lines()
            if line.get_transform() == ax.transData and len(line.get_ydata())]
    tops += [float(c.get_paths()[0].vertices[:, 1].max()) for c in ax.collections if c.get_paths()]
    tops += [float(line.get_ydata()[0]) for line in ax.get_lines() if line.get_label().startswith("_ref")]
    low, high = ax.get_ylim()
    top = max(tops, default=high)
    ax.set_ylim(low, max(high, (top - LABEL_STRIP * low) / (1 - LABEL_STRIP)))


_CURVE_COLOURS = ("#440154", "#31688e", "#35b779", "#8f8f8f")
