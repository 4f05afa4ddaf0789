"""Chapter 30 figures draw the data they are given, readable at the book's width."""

from __future__ import annotations

import io

import numpy as np
import pytest
from matplotlib.collections import QuadMesh
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.patches import FancyArrowPatch, Rectangle
from matplotlib.quiver import Quiver
from matplotlib.text import Text

from llm_from_scratch import HeadLayoutError, MultiHeadAttention, SplitMix64, Tensor
from llm_from_scratch.book import figure_style as style
from llm_from_scratch.ch30 import example as ch30
from llm_from_scratch.ch30 import figures as plots30
from llm_from_scratch.ch30 import lesson as lesson30
from llm_from_scratch.errors import LearnedHeadsError

EXAMPLE = ch30.build_attention().forward(Tensor(ch30.example_input()))
WEIGHTS = EXAMPLE.attention_weights.value[0]                      # [2, 3, 3]
JOBS_TWO = lesson30.two_job_layer(2).forward(Tensor(lesson30.two_job_input())).attention_weights.value[0]
JOBS_ONE = lesson30.two_job_layer(1).forward(Tensor(lesson30.two_job_input())).attention_weights.value[0, 0]
SPREAD = lesson30.score_spread((2, 8, 32), samples=200)
SCORES = lesson30.relative_scores([1.0, 0.5, 0.3, -0.2], [0.4, 1.0, 0.2, 0.5], 100.0, 6)
SWAP, MIXING = ch30.swap_output_weight(), lesson30.mixing_output_weight()
STAGES = lesson30.stage_values(EXAMPLE)
STEPS = np.arange(0, 101, 10)
LOSSES = [("две головы", STEPS, np.geomspace(1.0, 1e-4, 11)), ("одна голова", STEPS, 0.5 + 0.01 * np.sin(STEPS))]
PROBE_QUERY = MultiHeadAttention.new("probe", model_width=4, heads=2, max_positions=6, rope_base=100.0,
                                    rng=SplitMix64(30)).parameters()[0].value      # the chapter's random W_Q
TABLES = np.tril(np.random.default_rng(0).uniform(size=(2, 3, 6, 6)))
_Z = np.random.default_rng(1).standard_normal((40, 2))
PAIRS = [("line", np.column_stack([_Z[:, 0], 0.1 + 0.2 * _Z[:, 0]]), _Z),  # one head: outputs on a line
         ("cloud", _Z + 0.01, _Z)]                                          # two heads: on their targets
LINES = [("a", np.column_stack([_Z[:, 0], _Z[:, 0]])), ("b", np.column_stack([0.1 * _Z[:, 1], 0.2 - 0.05 * _Z[:, 1]]))]
LINE_LOSSES = [0.9718, 0.4963]                                           # each layer's loss, in its legend entry


def build(name: str) -> Figure:
    x = ch30.example_input()[0]
    return {
        "whole_layer": lambda: plots30.whole_layer(x, STAGES, SWAP),
        "learned_losses": lambda: plots30.learned_losses(LOSSES, 0.49),
        "output_pairs": lambda: plots30.output_pairs(PAIRS),
        "one_head_line": lambda: plots30.one_head_line(_Z, LINES, losses=LINE_LOSSES, bound=0.5),
        "learned_maps": lambda: plots30.learned_maps([[(f"{r}{c}", TABLES[r, c]) for c in range(3)]
                                                      for r in range(2)]),
        "two_jobs": lambda: plots30.two_jobs(JOBS_TWO, JOBS_ONE),
        "head_split": lambda: plots30.head_split(x, x @ PROBE_QUERY, 2),
        "score_spread": lambda: plots30.score_spread(SPREAD.widths, SPREAD.raw_std, SPREAD.scaled_std,
                                                     SPREAD.raw_top, SPREAD.scaled_top, SPREAD.tokens),
        "rope_circle": lambda: plots30.rope_circle([
            ("a", lesson30.pair_arrows(4, 100.0, 6)[:, 0], range(6)),
            ("b", lesson30.pair_arrows(4, 100.0, 6)[:, 1], (0, 5)),
            ("c", lesson30.pair_arrows(8, 100.0, 6)[:, 1], (0, 5))]),
        "rope_relative": lambda: plots30.rope_relative(SCORES),
        "output_mixing": lambda: plots30.output_mixing([
            ("swap", SWAP, lesson30.symbolic_output(SWAP), []),
            ("mix", MIXING, lesson30.symbolic_output(MIXING), [(0, 2)])]),
        "split_layout": lambda: plots30.split_layout(),
    }[name]()


NAMES = ["whole_layer", "learned_losses", "output_pairs", "one_head_line", "learned_maps",
         "two_jobs", "head_split", "score_spread", "rope_circle", "rope_relative",
         "output_mixing", "split_layout"]


def images(fig: Figure) -> list[np.ndarray]:
    return [np.ma.getdata(image.get_array()) for ax in fig.axes for image in ax.get_images()
            if isinstance(image, AxesImage)]


def texts(fig) -> list[str]:
    return [t.get_text() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]


@pytest.mark.parametrize("name", NAMES)
def test_every_text_is_readable_in_the_column(name):
    fig = build(name)
    assert fig.get_figwidth() <= style.MAX_WIDTH
    assert style.smallest_text_px(fig) >= 11
    png = io.BytesIO()
    fig.savefig(png, format="png", dpi=fig.dpi, bbox_inches="tight")     # as the notebook shows it
    assert int.from_bytes(png.getvalue()[16:20], "big") <= style.COLUMN_PX  # never scaled down


def numbers(fig: Figure) -> list[str]:
    """The numbers written in the figure, in the order they were drawn."""
    return [t for t in texts(fig) if t.replace("−", "").replace(".", "").isdigit()]


def three(values) -> list[str]:
    return [f"{round(float(v), 3) + 0.0:.3f}".replace("-", "−") for v in np.ravel(values)]


def test_whole_layer_writes_every_stage_of_the_example():
    fig = build("whole_layer")
    x = ch30.example_input()[0]
    visible = np.tril_indices(3)
    want = three(x) + three(x)                                     # X, then Q = K = V = X W with W = I
    for head in (0, 1):                                            # each head's lane, one after the other
        want += three(STAGES["projected_query_heads"][head]) + three(STAGES["rotated_query_heads"][head])
        want += three(WEIGHTS[head][visible])                      # future keys carry no number
        want += three(STAGES["head_outputs"][head])
    want += three(STAGES["merged"]) + [f"{v:.0f}" for v in SWAP.ravel()] + three(STAGES["output"])
    assert numbers(fig) == want
    assert "0.214" in want and "−0.421" in want and "0.945" in want         # the seed's numbers, rounded
    shown = texts(fig)
    for label in ("X: [1, 3, 4]", "Q = K = V: [1, 3, 4]", "split_heads: [1, 2, 3, 2]", "в примере $W=I$",
                  "$A^{(0)}$: [1, 3, 3]", "$A^{(1)}$: [1, 3, 3]", "$H^{(1)}=A^{(1)}V^{(1)}$\n[1, 3, 2]",
                  "$V^{(0)}$:\nбез поворота", "$V^{(1)}$:\nбез поворота", "RoPE",
                  "u = Concat(H): [1, 3, 4]", "$W_O$: [4, 4]", "голова 0", "голова 1"):
        assert label in shown
    assert shown.count("n=2") == 2 and shown.count("m=2") == 1       # key columns in both lanes, rows once
    patches = fig.axes[0].patches
    assert len([p for p in patches if p.get_hatch() == style.MASK_HATCH]) == 2 * 3   # 3 future cells per head
    dashed = [p for p in patches if isinstance(p, Rectangle) and not p.get_fill() and p.get_linestyle() == "--"]
    assert len(dashed) == 1 + 4 + 1           # head 1's columns of Q, K, V, its four grids, its part of u
    lane = [p for p in patches if isinstance(p, Rectangle) and p.get_fill() and p.get_linestyle() == "--"]
    assert len(lane) == 1                     # head 1's lane, framed apart from head 0's


def test_whole_layer_refuses_a_layer_it_would_draw_wrongly():
    other = dict(STAGES, projected_key_heads=STAGES["projected_key_heads"] * 2)
    with pytest.raises(ValueError, match="must be equal"):
        plots30.whole_layer(ch30.example_input()[0], other, SWAP)


def test_learned_losses_draws_the_held_out_losses_and_the_bound():
    fig = build("learned_losses")
    (ax,) = fig.axes
    bound, *lines = ax.get_lines()
    np.testing.assert_allclose(bound.get_ydata(), [0.49, 0.49])
    assert bound.get_label() == "нижняя граница одной головы: 0.490"
    for line, (label, steps, losses) in zip(lines, LOSSES, strict=True):
        assert line.get_label() == label
        np.testing.assert_array_equal(line.get_xydata(), np.column_stack([steps, losses]))
    assert lines[0].get_linestyle() != lines[1].get_linestyle()              # told apart without colour
    assert lines[0].get_marker() != lines[1].get_marker()
    assert ax.get_yscale() == "log"


def test_output_pairs_draws_each_column_against_its_target_and_the_line_y_equals_z():
    fig = build("output_pairs")
    axes = np.reshape(fig.axes, (2, 2))
    for row, (title, outputs, targets) in zip(axes, PAIRS, strict=True):
        for column, ax in enumerate(row):
            (points,) = ax.collections
            np.testing.assert_array_equal(points.get_offsets(), np.column_stack([targets[:, column],
                                                                                 outputs[:, column]]))
            assert points.get_facecolor().size == 0 and points.get_label() != ""   # hollow, in the legend
            (exact,) = ax.get_lines()
            x, y = exact.get_xydata().T
            np.testing.assert_array_equal(x, y)                                 # the line y = z
            assert x.min() <= min(targets.min(), outputs.min()) and x.max() >= max(targets.max(), outputs.max())
            assert exact.get_linestyle() == "--"                                # told apart without colour
            assert ax.get_title().startswith(f"{title}: ")
            assert ax.get_xlabel() == ("цель $z_{m-1}$ (предыдущий токен)", "цель $z_0$ (первый токен)")[column]
            assert ax.get_ylabel() == ("выход $y_0$", "выход $y_4$")[column]
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == ["$y = z$: выход равен цели",
                                                          "строка m = 2…5 одной последовательности"]


def test_one_head_line_draws_the_targets_and_each_layer_on_its_line():
    fig = build("one_head_line")
    ax, zoom = fig.axes                                      # layer b's cluster is magnified on the right
    for panel in (ax, zoom):                                 # both panels draw the same data
        np.testing.assert_array_equal(panel.collections[0].get_offsets(), _Z)
        for points, (_, drawn) in zip(panel.collections[1:], LINES, strict=True):
            np.testing.assert_array_equal(points.get_offsets(), drawn)
    (low_x, high_x), (low_y, high_y) = zoom.get_xlim(), zoom.get_ylim()
    small = LINES[1][1]
    assert np.isclose(high_x - low_x, high_y - low_y) and high_x - low_x < ax.get_xlim()[1] / 2   # square, zoomed
    assert low_x < small[:, 0].min() and small[:, 0].max() < high_x                               # every point of b
    assert low_y < small[:, 1].min() and small[:, 1].max() < high_y
    times = round(np.ptp(ax.get_xlim()) / (high_x - low_x))                  # the magnification it names
    assert zoom.get_title() == f"квадрат в рамке слева,\nувеличенный ×{times}" and times > 2
    targets, *outputs = ax.collections
    np.testing.assert_array_equal(targets.get_offsets(), _Z)
    assert targets.get_facecolor().size == 0                                   # hollow circles
    lines = ax.get_lines()
    assert len(outputs) == len(lines) == 2
    for points, line, (_, drawn) in zip(outputs, lines, LINES, strict=True):
        np.testing.assert_array_equal(points.get_offsets(), drawn)
        (x0, y0), (x1, y1) = line.get_xydata()
        across = (x1 - x0) * (drawn[:, 1] - y0) - (y1 - y0) * (drawn[:, 0] - x0)
        np.testing.assert_allclose(across / np.hypot(x1 - x0, y1 - y0), 0, atol=1e-9)   # the points' own line
        mid = np.mean(drawn, axis=0)
        assert abs(mid[0]) < ax.get_xlim()[1] and abs(mid[1]) < ax.get_ylim()[1]   # through the panel ...
        assert min(np.hypot(x0 - mid[0], y0 - mid[1]), np.hypot(x1 - mid[0], y1 - mid[1])) > np.hypot(
            *np.diff([ax.get_xlim(), ax.get_ylim()], axis=1).ravel())           # ... and out of it both ways
    assert lines[0].get_linestyle() != lines[1].get_linestyle()                # told apart without colour
    assert not np.array_equal(*(p.get_paths()[0].vertices for p in outputs))  # and by marker
    assert ax.get_xlim() == ax.get_ylim() and ax.get_xlim()[1] >= np.abs(_Z).max()
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == [
        "цель строки $(z_{m-1}, z_0)$", "одна голова, a: выходы $(y_0, y_4)$ и их прямая; ошибка 0.972",
        "одна голова, b: выходы $(y_0, y_4)$ и их прямая; ошибка 0.496"]          # each loss beside the bound
    assert legend.get_title().get_text() == "нижняя граница одной головы: ошибка в среднем ≥ 0.5 при любых параметрах"
    (bare,) = plots30.one_head_line(_Z, LINES[:1]).legends                      # no losses, no bound: no numbers
    assert [t.get_text() for t in bare.get_texts()][1] == "одна голова, a: выходы $(y_0, y_4)$ и их прямая"
    assert bare.get_title().get_text() == ""
    with pytest.raises(LearnedHeadsError, match="one line"):
        plots30.one_head_line(_Z, [("cloud", _Z)])                              # two heads: not a line
    with pytest.raises(LearnedHeadsError, match="losses must be 2 finite numbers"):
        plots30.one_head_line(_Z, LINES, losses=[0.5])
    with pytest.raises(LearnedHeadsError, match="losses must be 2 finite numbers"):
        plots30.one_head_line(_Z, LINES, losses=[0.5, np.nan])
    with pytest.raises(LearnedHeadsError, match="bound must be a finite number"):
        plots30.one_head_line(_Z, LINES, bound="half")


def test_learned_maps_draws_every_table_in_its_place():
    fig = build("learned_maps")
    drawn = images(fig)
    assert len(drawn) == 6
    for got, want in zip(drawn, TABLES.reshape(6, 6, 6), strict=True):
        visible = np.tril(np.ones((6, 6), bool))
        np.testing.assert_array_equal(got[visible], want[visible])
    assert [ax.get_title() for ax in fig.axes[:6]] == ["00", "01", "02", "10", "11", "12"]
    assert [ax.get_xlabel() for ax in fig.axes[:6]] == [""] * 3 + ["позиция ключа n"] * 3


def test_two_jobs_draws_both_heads_and_the_one_head_table():
    fig = build("two_jobs")
    drawn = images(fig)
    assert len(drawn) == 3
    for got, want in zip(drawn, [JOBS_TWO[0], JOBS_TWO[1], JOBS_ONE], strict=True):
        visible = np.tril(np.ones_like(want, bool))
        np.testing.assert_array_equal(got[visible], want[visible])
    assert "голова 0:\nпредыдущий токен" in texts(fig)
    assert "ключ закрыт каузальной маской" in texts(fig)          # the legend names the hatch it draws
    assert [ax.get_xlabel() for ax in fig.axes[:3]] == ["позиция ключа n"] * 3
    assert [ax.get_ylabel() for ax in fig.axes[:3]] == ["позиция запроса m", "", ""]
    hatched = [p for ax in fig.axes[:3] for p in ax.patches if p.get_hatch()]
    assert len(hatched) == 3 * 15                                  # 15 future cells in a 6 x 6 table


def test_head_split_writes_the_input_the_projection_and_each_head():
    fig = build("head_split")
    shown = texts(fig)
    x = ch30.example_input()[0]
    q = x @ PROBE_QUERY

    def two(values):
        return [f"{round(v, 2) + 0.0:.2f}".replace("-", "−") for v in np.ravel(values)]

    numbers = [t for t in shown if t.replace("−", "").replace(".", "").isdigit()]
    assert numbers == two(x) + two(q) + two(q[:, :2]) + two(q[:, 2:])    # X, Q = X W_Q, head 0, head 1
    assert two(q[:, :2]) != two(x[:, :2])             # a random W_Q: head 0 is not a slice of X
    for label in ("X: [1, 3, 4]", "$Q=XW_Q$: [1, 3, 4]", "[1, 2, 3, 2]", "голова 1\n[1, 3, 2]", "p=0", "p=2"):
        assert label in shown


def test_score_spread_plots_the_experiment():
    fig = build("score_spread")
    left, right = fig.axes
    lines = {line.get_label(): line.get_xydata() for line in left.get_lines()}
    np.testing.assert_allclose(lines[r"$q\cdot k$"], np.column_stack([SPREAD.widths, SPREAD.raw_std]))
    np.testing.assert_allclose(lines[r"$\sqrt{d_h}$"][:, 1], np.sqrt(SPREAD.widths))
    right_lines = {line.get_label(): line.get_xydata() for line in right.get_lines()}
    np.testing.assert_allclose(right_lines[r"оценки $q\cdot k\,/\sqrt{d_h}$"][:, 1], SPREAD.scaled_top)
    assert [t.get_text() for t in right.get_legend().get_texts()][-1] == "поровну: 1/8"
    # log-log on the left: sqrt(d_h) is a straight line of slope 1/2, not a curve
    assert left.get_xscale() == left.get_yscale() == "log" and right.get_yscale() == "linear"
    root = lines[r"$\sqrt{d_h}$"]
    np.testing.assert_allclose(np.diff(np.log2(root[:, 1])) / np.diff(np.log2(root[:, 0])), 0.5)
    ticks = [t.get_text() for t in left.get_yticklabels()]
    assert ticks == ["1", "2", "4", "8"]                          # spreads from 1 to sqrt(32) here
    low, high = left.get_ylim()
    assert low <= SPREAD.scaled_std.min() and SPREAD.raw_std.max() <= high


def test_rope_circle_fits_a_folded_cell():
    png = io.BytesIO()
    build("rope_circle").savefig(png, format="png", dpi=100, bbox_inches="tight")
    assert int.from_bytes(png.getvalue()[16:20], "big") <= 649          # a fold leaves 650 px


def test_rope_circle_draws_one_arrow_per_position_and_keys_the_colours():
    fig = build("rope_circle")
    arrows = [c for ax in fig.axes for c in ax.collections if isinstance(c, Quiver)]
    assert len(arrows) == 3
    angles = np.arange(6.0)
    np.testing.assert_allclose(np.column_stack([arrows[0].U, arrows[0].V]),
                               np.column_stack([np.cos(angles), np.sin(angles)]), atol=1e-12)
    np.testing.assert_allclose(np.arctan2(arrows[1].V, arrows[1].U), 0.1 * angles, atol=1e-12)   # d_h = 4
    np.testing.assert_allclose(np.arctan2(arrows[2].V, arrows[2].U), 100 ** -0.25 * angles, atol=1e-12)
    shown = texts(fig)
    assert "p=0" in shown and "p=5" in shown and "p=3" in shown and "0" not in shown
    bar = fig.axes[-1]                                           # the colour key of the positions
    assert bar.get_ylabel() == "позиция p"
    assert [t.get_text() for t in bar.get_yticklabels()] == [str(p) for p in range(6)]
    # the colours of the key are the arrows' colours, position by position
    (solids,) = [c for c in bar.collections if isinstance(c, QuadMesh)]  # the key's colour patches
    key_colours = solids.get_cmap()(solids.norm(np.asarray(solids.get_array()).ravel()))
    np.testing.assert_allclose(arrows[0].get_facecolors(), key_colours)


def test_rope_relative_draws_the_scores_and_the_offsets():
    fig = build("rope_relative")
    (drawn,) = images(fig)
    np.testing.assert_array_equal(drawn, SCORES)
    labels = [t for t in texts(fig) if "." in t][:36]                # the cells, to two decimals
    assert labels == [f"{round(v, 2) + 0.0:.2f}".replace("-", "−") for v in SCORES.ravel()]
    left, right = fig.axes[:2]
    assert (left.get_xlabel(), left.get_ylabel()) == ("позиция ключа n", "позиция запроса m")
    curve, *rows = right.get_lines()
    offsets = np.arange(-5, 6)
    np.testing.assert_allclose(curve.get_xydata(),
                               np.column_stack([offsets, [SCORES[max(d, 0), max(-d, 0)] for d in offsets]]))
    assert len(rows) == 6
    for m, line in enumerate(rows):                                # markers only, every one on the curve
        assert line.get_linestyle() == "None" and line.get_label() == f"m={m}"
        np.testing.assert_allclose(line.get_xydata(), np.column_stack([m - np.arange(6), SCORES[m]]))


def routes(ax) -> list[tuple[int, int, float]]:
    """The arrows ``u_r -> y_j`` drawn in a panel, as ``(r, j, line width)``: ``u_r`` sits at
    ``(r, 1)`` and ``y_j`` at ``(j, 0)`` in data coordinates."""
    found = []
    for patch in ax.patches:
        if isinstance(patch, FancyArrowPatch):
            (x0, y0), (x1, y1) = patch._posA_posB
            assert y0 > y1                                        # from the Concat row down to y
            found.append((round(x0), round(x1), patch.get_linewidth()))
    return sorted(found)


def segment_distance(point, start, end) -> float:
    """From ``point`` to the segment ``start``-``end``, in the units they are given in."""
    step = end - start
    t = np.clip(np.dot(point - start, step) / np.dot(step, step), 0.0, 1.0)
    return float(np.linalg.norm(point - (start + t * step)))


def test_output_mixing_draws_one_route_per_nonzero_entry_of_w_o():
    fig = build("output_mixing")
    for ax, weight in zip(fig.axes, (SWAP, MIXING), strict=True):
        drawn = routes(ax)
        assert [(r, j) for r, j, _ in drawn] == sorted(zip(*map(list, np.nonzero(weight)), strict=True))
        labels = [t for t in texts(ax) if "," in t and "$" not in t]
        assert sorted(labels) == sorted(f"{r},{j}" for r, j, _ in drawn)    # each route names its entry
    fig.draw_without_rendering()                                  # the layout the reader sees
    for ax in fig.axes:                                           # each label on its own arrow, not a neighbour's
        arrows = {}
        for patch in ax.patches:
            if isinstance(patch, FancyArrowPatch):
                (x0, y0), (x1, y1) = patch._posA_posB
                arrows[f"{round(x0)},{round(x1)}"] = ax.transData.transform([(x0, y0), (x1, y1)])
        for text in ax.texts:
            if text.get_text() in arrows:
                at = ax.transData.transform(text.get_position())
                gap = {name: segment_distance(at, *ends) for name, ends in arrows.items()}
                own = gap.pop(text.get_text())
                assert own < 1.0 and min(gap.values()) > 12.0, (text.get_text(), own, gap)   # pixels
    thick = [(r, j) for r, j, w in routes(fig.axes[1]) if w > 2]
    assert thick == [(0, 2)]                                    # the entry that mixes the heads
    written = texts(fig)
    assert [t for t in written if t.startswith("$y_")] == (
        [f"$y_{j}$={v}" for j, v in enumerate("cdab")] + [f"$y_{j}$={v}" for j, v in enumerate(
            ["a", "b", "a + c", "d"])])


def test_split_layout_moves_the_cells_as_split_heads_and_a_lone_reshape_do():
    fig = plots30.split_layout(tokens=3, width=4, heads=2)
    cells = [t for t in texts(fig) if len(t) == 3 and t[0] in "012" and t[1] == "," and t[2].isdigit()]
    x = np.array([[f"{t},{f}" for f in range(4)] for t in range(3)])   # token, feature: numbered as elsewhere
    grid = list(x.ravel())
    right = list(x.reshape(3, 2, 2).transpose(1, 0, 2).ravel())
    wrong = list(x.reshape(2, 3, 2).ravel())
    # top row: X, the reshape [T, h, d_h], the heads; bottom row: X, the lone reshape
    assert cells == grid + grid + right + grid + wrong
    assert right[:6] == ["0,0", "0,1", "1,0", "1,1", "2,0", "2,1"]  # head 0: its features, every token
    assert wrong[:6] == ["0,0", "0,1", "0,2", "0,3", "1,0", "1,1"]  # head 0: all of token 0, half of 1
    colours = [p.get_facecolor() for p in fig.axes[0].patches if isinstance(p, Rectangle) and p.get_fill()]
    head_of = {c: int(c[2]) // 2 for c in grid}
    assert colours == [plots30.SPLIT_COLOURS[head_of[c]] for c in cells]   # colour follows the feature
    # the middle panel [T, h, d_h]: one framed row per token, not two head blocks
    frames = [p for p in fig.axes[0].patches if isinstance(p, Rectangle) and not p.get_fill()]
    assert len(frames) == 3
    centres = [(t.get_position(), t.get_text()) for t in fig.axes[0].texts if t.get_text() in cells]
    middle = [c for c in centres[12:24]]                                  # the 12 cells after X
    for frame, token in zip(frames, range(3), strict=True):
        (x0, y0), (x1, y1) = frame.get_bbox().get_points()
        inside = [text for (x, y), text in middle if x0 < x < x1 and y0 < y < y1]
        assert inside == [f"{token},{f}" for f in range(4)]               # a whole token, both heads
    written = texts(fig)
    shapes = [t.split("\n") for t in written if t.startswith("$[")]
    assert shapes == [["$[T, d_{\\mathrm{model}}]$ = [3, 4]", "строка — токен"],
                      ["$[T, h, d_h]$ = [3, 2, 2]", "строка — токен, разрезанный по головам"],
                      ["$[h, T, d_h]$ = [2, 3, 2]", "блок — голова"],
                      ["$[T, d_{\\mathrm{model}}]$ = [3, 4]", "строка — токен"],
                      ["$[h, T, d_h]$ = [2, 3, 2]", "блок — голова"]]
    with pytest.raises(HeadLayoutError, match="dividing"):
        plots30.split_layout(width=4, heads=3)
