"""Chapter 31 figures draw the data they are given, readably at the book's width."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.image import AxesImage
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch, Rectangle
from matplotlib.text import Annotation, Text
from matplotlib.transforms import Bbox

from llm_from_scratch import Tensor
from llm_from_scratch import text as edition
from llm_from_scratch.book import figure_style as style
from llm_from_scratch.ch31 import contrasts as history
from llm_from_scratch.ch31 import depth_lab
from llm_from_scratch.ch31 import example as ch31
from llm_from_scratch.ch31 import figures as plots31
from llm_from_scratch.ch31 import lesson as lesson31

BLOCK = ch31.build_block()
FORWARD = BLOCK.forward(Tensor(ch31.example_input()))
ROWS = {"x": ch31.example_input()[0, 1], "N_a": FORWARD.attention_norm.value[0, 1],
        "A": FORWARD.attention.output.value[0, 1], "x'": FORWARD.after_attention.value[0, 1],
        "N_f": FORWARD.feed_forward_norm.value[0, 1], "F": FORWARD.feed_forward.output.value[0, 1],
        "y": FORWARD.output.value[0, 1]}
SHAPES = {**{key: "[1, 3, 4]" for key in ROWS}, "weights": "[1, 2, 3, 3]"}
DERIVATION = lesson31.head0_derivation()
SMALL_LAB = {"heads": 2, "tokens": 4, "batch": 2, "vocabulary": 7}


PRE = lesson31.first_stage(BLOCK, lesson31.scaled_input(), "pre")
POST = lesson31.first_stage(BLOCK, lesson31.scaled_input(), "post")
RUNS = depth_lab.compare(layers=5, width=8, **SMALL_LAB)
SCALED = depth_lab.compare(layers=5, width=8, weight_scale=3 ** 0.5, variants=("pre", "post"), **SMALL_LAB)
PROFILES = {"масштаб весов 1": RUNS, "масштаб √3": SCALED}
CURVES = {"η = 0.01": {"Pre-RMSNorm": np.linspace(3.0, 1.0, 50), "Post-RMSNorm": np.linspace(3.0, 1.2, 50)},
          "η = 0.03": {"Pre-RMSNorm": np.linspace(3.0, 0.9, 50), "Post-RMSNorm": np.full(50, 2.77)}}
REFERENCES = {"ln 16: модель без контекста": np.log(16), "предел задачи": np.log(16) / 4}
SCHEDULES = {"Post-RMSNorm": np.full(50, 0.03), "Post, разогрев 100": 0.03 * np.minimum(1, np.arange(1, 51) / 20)}
TOPS = {"масштаб 1": depth_lab.top_block_gradient(range(1, 4), width=8, **SMALL_LAB),
        "масштаб √3": depth_lab.top_block_gradient(range(1, 4), width=8, tensor="ffn.down.weight",
                                                   variants=("pre", "post"), weight_scale=3 ** 0.5,
                                                   **SMALL_LAB)}
REFERENCE = {"масштаб √3": 0.5}

BANDS = {"Pre-RMSNorm": [np.linspace(3.0, 1.0 + 0.1 * k, 50) for k in range(4)],
         "Post-RMSNorm": [np.full(50, 2.7) + 0.01 * k for k in range(4)],
         "Post, разогрев 100": [np.linspace(3.0, 1.5, 50) ** (1 + 0.1 * k) for k in range(4)]}

# the main page's figure of the three output readings over steps 1-40: one run per label, three panels
READINGS = {title: {label: [np.linspace(1.0, 0.5 + 0.1 * k + 0.05 * i, 40)]
                    for k, label in enumerate(("Pre-RMSNorm", "Post-RMSNorm", "Post, разогрев 100"))}
            for i, title in enumerate(("сдвиг выхода\nза шаг", "RMS выхода", "доля, зависящая\nот позиции"))}

BUILDERS = {
    "residual_stream": lambda: plots31.residual_stream(ROWS, token=1),
    "block_diagram": lambda: plots31.block_diagram(SHAPES, hidden_width=ch31.FEED_FORWARD_WIDTH),
    "sublayer_orders": plots31.sublayer_orders,
    "head0_scores": lambda: plots31.head0_scores(DERIVATION.query, DERIVATION.keys, DERIVATION.scaled,
                                                 DERIVATION.probabilities),
    "attention_maps": lambda: plots31.attention_maps(FORWARD.attention.attention_weights.value[0]),
    "pre_post_orders": lambda: plots31.pre_post_orders(lesson31.token_summary(PRE), lesson31.token_summary(POST)),
    "sequential_vs_parallel": lambda: plots31.sequential_vs_parallel(
        history.rnn_style_states([1.0, -0.5, 0.25]), [1.0, -0.5, 0.25]),
    "depth_profiles": lambda: plots31.depth_profiles(PROFILES, depth_lab.LABELS),
    "gradient_paths": plots31.gradient_paths,
    "training_curves": lambda: plots31.training_curves(CURVES, REFERENCES, window=5),
    "warmup_curves": lambda: plots31.training_curves({"η = 0.03": CURVES["η = 0.03"]}, REFERENCES,
                                                     schedules=SCHEDULES,
                                                     seeds={"η = 0.03": {"Pre-RMSNorm": [np.full(50, 2.0)]}}),
    "top_gradient": lambda: plots31.top_gradient(range(1, 4), TOPS, depth_lab.LABELS, reference=REFERENCE),
    "seed_bands": lambda: plots31.seed_bands({"η = 0.03": BANDS}, window=5, references=REFERENCES,
                                             marks={"конец разогрева": 30}, ylabels={"η = 0.03": "потери"}),
    "seed_bands_two_panels": lambda: plots31.seed_bands({"RMS": BANDS, "доля": BANDS}),
    "output_readings": lambda: plots31.seed_bands(READINGS, height=3.0),
}


@pytest.fixture(scope="module")
def figures():
    return {name: build() for name, build in BUILDERS.items()}


def texts(fig):
    return [t.get_text() for t in fig.findobj(Text) if t.get_text().strip()]


@pytest.mark.parametrize("name", list(BUILDERS))
def test_every_figure_is_readable_at_the_column_width(figures, name):
    fig = figures[name]
    assert fig.get_size_inches()[0] <= style.MAX_WIDTH
    assert style.smallest_text_px(fig) >= 11
    assert fig.get_facecolor()[:3] == (1.0, 1.0, 1.0)


def test_plot_module_uses_no_pyplot_and_no_old_layout_engine():
    source = inspect.getsource(plots31)
    assert "pyplot" not in source and "common" not in source


def test_vector_text_is_short_and_exact_about_zeros():
    assert plots31.vector_text([0.010881, 3.989119, 0.0, -0.0000001]) == "[0.011, 3.989, 0, 0]"
    assert plots31.vector_text([2.0, -0.5734, 1.999993]) == "[2, −0.573, 2.000]"
    assert plots31.vector_text([0.00544, 0.5], 6) == "[0.005440, 0.500000]"
    assert plots31.vector_text([2.0, 0.5, 0.0], short_integers=False) == "[2.000, 0.500, 0.000]"


def test_residual_stream_writes_every_row_along_the_line(figures):
    fig = figures["residual_stream"]
    text = "\n".join(texts(fig))
    for name, row in ROWS.items():
        assert plots31._row_text(row) in text, name
    for name in ("x", "x'", "y"):
        assert f"RMS = {lesson31.rms(ROWS[name]):.3f}" in text
    assert "[0.011, 3.989, 0, 0]" in text and "[0.011, 7.512, 0, 0]" in text
    # one format: x = [0, 2, 0, 0] beside N_f = [0.005, 2.000, 0, 0] read as two kinds of number
    assert "x = [0, 2.000, 0, 0]" in text and "[0.005, 2.000, 0, 0]" in text and "[0, 2, 0, 0]" not in text
    stream = [line for line in fig.findobj(Line2D) if line.get_linewidth() == 4]
    assert len(stream) == 1 and np.allclose(stream[0].get_ydata(), stream[0].get_ydata()[0])
    assert sum(t.get_text() == "+" for t in fig.findobj(Text)) == 2


def test_block_diagram_shows_shapes_once_and_two_skip_paths(figures):
    fig = figures["block_diagram"]
    text = "\n".join(texts(fig))
    assert text.count("[1, 3, 4]") == 1                       # the shapes, once
    assert "x, N$_a$, A, x′, N$_f$, F, y: [1, 3, 4]" in text
    assert "[1, 2, 3, 3]" in text
    assert f"$d_{{ff}}$ = {ch31.FEED_FORWARD_WIDTH}" in text   # the hidden width, with its value
    assert "$\\gamma_a$" in text and "$\\gamma_f$" in text      # each norm its own gain
    assert "остаточный путь 1" in text and "остаточный путь 2" in text


def test_block_diagram_draws_the_stream_straight_and_the_branches_beside_it(figures):
    """The geometry of Fig 31.1 (sublayer_orders): the residual stream is one thick straight line
    through both "+", and each branch leaves it at a dot and comes back at its "+". Fig 31.2 once
    drew the stream through the sublayers and the residual connections as thick bent lines."""
    ax = figures["block_diagram"].axes[0]
    (stream,) = [line for line in ax.get_lines() if line.get_linewidth() == 4]
    xs, ys = stream.get_xdata(), stream.get_ydata()
    assert len(set(xs)) == 1 and ys[0] < ys[-1]                     # straight, bottom to top
    pluses = [t.get_position() for t in ax.texts if t.get_text() == "+"]
    assert len(pluses) == 2 and all(x == xs[0] and ys[0] < y < ys[-1] for x, y in pluses)
    taps = [line.get_xydata()[0] for line in ax.get_lines() if line.get_marker() == "o"]
    assert len(taps) == 2 and all(x == xs[0] for x, _ in taps)       # each branch leaves the stream
    assert not [line for line in ax.get_lines() if 1.2 < line.get_linewidth() < 4 and len(line.get_xdata()) > 1]
    boxes = {t.get_text(): t.get_position() for t in ax.texts if "RMSNorm" in t.get_text() or "MHA" in t.get_text()}
    assert len(boxes) == 3 and all(x > xs[0] for x, _ in boxes.values())    # the branch beside the stream
    returns = sorted(p._posA_posB for p in ax.patches if isinstance(p, FancyArrowPatch)
                     and p._posA_posB[0][1] == p._posA_posB[1][1])   # horizontal arrows: back to the "+"
    assert [(round(end[0], 2), end[1]) for _, end in returns] == [(round(xs[0] + 0.23, 2), y)
                                                                 for _, y in sorted(pluses, key=lambda p: p[1])]
    (first, second) = sorted(y for _, y in taps)
    labels = sorted((t.get_position()[1], t.get_text()) for t in ax.texts if t.get_rotation() == 90)
    (low_plus, high_plus) = sorted(y for _, y in pluses)
    assert first < labels[0][0] < low_plus < second < labels[1][0] < high_plus   # each along its stretch


def test_block_diagram_groups_shapes_that_differ():
    shapes = {**SHAPES, "N_a": "[2, 5, 12]"}
    text = "\n".join(texts(plots31.block_diagram(shapes, hidden_width=32)))
    assert "x, A, x′, N$_f$, F, y: [1, 3, 4]" in text and "N$_a$: [2, 5, 12]" in text
    assert "$d_{ff}$ = 32" in text


def test_sublayer_orders_put_the_norm_in_the_branch_or_on_the_stream(figures):
    fig = figures["sublayer_orders"]
    pre, post = fig.axes
    assert "Pre" in pre.get_title() and "Post" in post.get_title()
    for ax, in_branch in ((pre, True), (post, False)):
        norm = next(t for t in ax.texts if t.get_text() == "RMSNorm")
        plus = next(t for t in ax.texts if t.get_text() == "+")
        stream = next(line for line in ax.lines if line.get_linewidth() == 4)
        line_y = stream.get_ydata()[0]
        assert bool(norm.get_position()[1] > line_y) is in_branch    # above the stream: in the branch
        assert bool(norm.get_position()[0] < plus.get_position()[0]) is in_branch   # before the "+"


def test_head0_scores_draw_the_derivation(figures):
    fig = figures["head0_scores"]
    bars = [p for p in fig.axes[1].patches if isinstance(p, Rectangle)]
    np.testing.assert_allclose([bar.get_width() for bar in bars], DERIVATION.scaled)
    arrows = [a for a in fig.axes[0].texts if isinstance(a, Annotation)]
    tips = {tuple(np.round(a.xy, 6)) for a in arrows}
    assert tuple(np.round(DERIVATION.query, 6)) in tips and (2.0, 0.0) in tips
    text = "\n".join(texts(fig))
    assert "p = 0.005440" in text and "p = 0.994560" in text and "−2.380" in text.replace("-", "−")


def test_attention_maps_draw_both_heads_with_the_mask(figures):
    fig = figures["attention_maps"]
    images = [im for ax in fig.axes for im in ax.get_images() if isinstance(im, AxesImage)]
    assert len(images) == 2
    weights = FORWARD.attention.attention_weights.value[0]
    for head, image in enumerate(images):
        array = image.get_array()
        visible = ~np.ma.getmaskarray(array)
        assert np.array_equal(visible, np.tri(3, dtype=bool))
        np.testing.assert_allclose(array.data[visible], weights[head][visible])
    hatched = [p for ax in fig.axes for p in ax.patches if p.get_hatch() == style.MASK_HATCH]
    assert len(hatched) == 6
    text = texts(fig)
    assert "0.005" in text and "0.995" in text and "0.894" in text and "голова 1" in text


def test_pre_post_orders_move_the_norm_and_report_both_outcomes(figures):
    fig = figures["pre_post_orders"]
    text = "\n".join(texts(fig))
    assert f"{PRE.weights[0, 0, 1, 0]:.3f}" in text and f"{POST.weights[0, 0, 1, 0]:.3f}" in text
    assert "RMS 1.000" in text and "RMS 0.500" in text
    assert plots31.vector_text(PRE.output[0, 1]) in text and plots31.vector_text(POST.output[0, 1]) in text
    ax = fig.axes[0]
    def by_height(label):   # (post row, pre row): the pre row is drawn above
        return sorted((t.get_position() for t in ax.texts if t.get_text() == label), key=lambda xy: xy[1])

    norms, pluses = by_height("RMSNorm"), by_height("+")
    (post_norm, pre_norm), (post_plus, pre_plus) = norms, pluses
    assert pre_norm[0] < pre_plus[0]        # pre: the norm reads the stream before the "+"
    assert post_norm[0] > post_plus[0]      # post: the norm sits on the stream after the "+"


def test_sequential_vs_parallel_counts_the_steps(figures):
    fig = figures["sequential_vs_parallel"]
    rnn, attention = fig.axes
    states = history.rnn_style_states([1.0, -0.5, 0.25])
    rnn_text = "\n".join(t.get_text() for t in rnn.texts)
    for value in states:
        assert f"{value:.3f}" in rnn_text
    for index, value in enumerate(("1", "−0.5", "0.25")):
        assert f"$u_{index}$ = {value}" in rnn_text
    assert [t.get_text() for t in rnn.texts if t.get_text().startswith("шаг")] == ["шаг 1", "шаг 2", "шаг 3"]
    assert {t.get_text() for t in attention.texts if t.get_text().startswith("шаг")} == {"шаг 1"}
    arrows = [t for t in attention.texts if isinstance(t, Annotation)]
    assert len(arrows) == 6                 # y_t reads x_k for every k <= t
    assert not [p for p in fig.findobj(FancyArrowPatch) if p.axes is None]


def _lines(ax):
    return {line.get_label(): line for line in ax.get_lines()}


def _log_share(ax, values):
    """The part of a log axis that the spread of ``values`` covers."""
    low, high = ax.get_ylim()
    return np.log(np.max(values) / np.min(values)) / np.log(high / low)


def test_depth_profiles_draw_each_run_of_each_panel(figures):
    fig = figures["depth_profiles"]
    by_title = {ax.get_title(): ax for ax in fig.axes}
    assert len(fig.axes) == 5          # the row with a third variant splits its gradients in two
    for title, runs in PROFILES.items():
        rms_ax = by_title[f"{title}: поток"]
        grad_ax = by_title[f"{title}: градиенты"]
        pair_ax = by_title["Pre и Post, своя шкала"] if "none" in runs else grad_ax
        assert rms_ax.get_yscale() == "linear" and grad_ax.get_yscale() == pair_ax.get_yscale() == "log"
        for variant, result in runs.items():
            label = depth_lab.LABELS[variant]
            np.testing.assert_array_equal(_lines(rms_ax)[label].get_xydata()[:, 1], result.stream_rms)
            ax = pair_ax if variant in ("pre", "post") else grad_ax
            np.testing.assert_array_equal(_lines(ax)[label].get_xydata()[:, 0], np.arange(1, result.layers + 1))
            np.testing.assert_array_equal(_lines(ax)[label].get_xydata()[:, 1], result.gradient_norms)
    assert len({line.get_linestyle() for line in fig.axes[0].get_lines()}) == 3     # not colour alone
    assert fig.axes[-2].get_xlabel() == "после блока $l$ (0 — вход)" and fig.axes[-1].get_xlabel() == "блок $l$"
    assert [t.get_text() for t in fig.legends[0].get_texts()] == list(depth_lab.LABELS.values())


def test_depth_profiles_give_pre_and_post_an_axis_of_their_own():
    """At c = 1 the stack without residual paths spans ~800x; Pre and Post (< 2x apart) get
    their own axis, which their spread fills, and the other curve is drawn above it, named."""
    runs = depth_lab.compare(layers=12, width=8, **SMALL_LAB)
    fig = plots31.depth_profiles({"c = 1": runs}, depth_lab.LABELS)
    rms_ax, others_ax, pair_ax = fig.axes
    assert set(_lines(rms_ax)) == set(depth_lab.LABELS.values())     # the streams share one axis
    assert set(_lines(pair_ax)) == {"Pre-RMSNorm", "Post-RMSNorm"}
    assert set(_lines(others_ax)) == {"без остаточных путей"}
    assert [t.get_text() for t in others_ax.texts] == ["без остаточных путей"]
    assert pair_ax.get_title() == "Pre и Post, своя шкала" and others_ax.get_title() == "c = 1: градиенты"
    pair = np.concatenate([runs[v].gradient_norms for v in ("pre", "post")])
    assert _log_share(pair_ax, pair) > 0.8      # with the no-residual curve on one axis: well under 0.3
    assert _log_share(others_ax, runs["none"].gradient_norms) > 0.8
    assert pair_ax.get_shared_x_axes().joined(pair_ax, others_ax)
    low, high = pair_ax.get_ylim()
    assert len([t for t in pair_ax.get_yticks() if low <= t <= high]) >= 2     # ticks to read the zoom by
    assert style.smallest_text_px(fig) >= style.MIN_CSS_PX


def test_depth_profiles_can_draw_pre_and_post_on_a_linear_axis():
    """The main page draws the pair (1.2-2.2x apart) on a linear axis that their spread fills;
    the stack without residual connections keeps its log axis above."""
    runs = depth_lab.compare(layers=12, width=8, **SMALL_LAB)
    fig = plots31.depth_profiles({"c = 1": runs}, depth_lab.LABELS, pair_scale="linear")
    _, others_ax, pair_ax = fig.axes
    assert pair_ax.get_yscale() == "linear" and others_ax.get_yscale() == "log"
    pair = np.concatenate([runs[v].gradient_norms for v in ("pre", "post")])
    for variant in ("pre", "post"):
        np.testing.assert_array_equal(_lines(pair_ax)[depth_lab.LABELS[variant]].get_xydata()[:, 1],
                                      runs[variant].gradient_norms)
    low, high = pair_ax.get_ylim()
    assert low < pair.min() and pair.max() < high and np.ptp(pair) / (high - low) > 0.8
    assert style.smallest_text_px(fig) >= style.MIN_CSS_PX
    with pytest.raises(Exception, match="pair_scale"):
        plots31.depth_profiles({"c = 1": runs}, depth_lab.LABELS, pair_scale="symlog")


def test_depth_profiles_on_the_book_s_runs_keep_both_scales_readable(figures):
    fig = figures["depth_profiles"]
    by_title = {ax.get_title(): ax for ax in fig.axes}
    for title, runs in PROFILES.items():
        ax = by_title["Pre и Post, своя шкала"] if "none" in runs else by_title[f"{title}: градиенты"]
        pair = np.concatenate([runs[v].gradient_norms for v in ("pre", "post")])
        assert _log_share(ax, pair) > 0.8


def test_gradient_paths_split_at_every_plus_and_put_a_norm_on_the_post_stream_only(figures):
    ax = figures["gradient_paths"].axes[0]
    text = [t.get_text() for t in ax.texts]
    assert text.count("+") == 4 and text.count("N") == 2          # two sublayers each; norms only in Post
    assert text.count("I") == 4                                    # the path on the stream, at every "+"
    assert text.count("J$_N^T$ J$_f^T$") == 2 and text.count("J$_f^T$") == 2   # the path through the branch
    assert text.count("J$_N^T$: ÷ RMS") == 2 and text.count("x′") == 2
    assert {"f(N(x))", "f(N(x′))", "f(x)", "f(x′)"} <= set(text)   # the second sublayer reads x′
    post_title = next(t for t in ax.texts if t.get_text().startswith("Post"))
    assert all(t.get_position()[1] < post_title.get_position()[1] for t in ax.texts if t.get_text() == "N")
    gradient = [p for p in ax.patches if isinstance(p, FancyArrowPatch) and p.get_linestyle() != "-"]
    ends = [p._posA_posB for p in gradient]
    assert len(ends) == 6                                          # per scheme: the stream and two branches
    along = [e for e in ends if e[0][1] == e[1][1]]
    assert len(along) == 2 and all(a[0] > b[0] for a, b in along)  # to the input
    down = [e for e in ends if e[0][0] == e[1][0]]
    assert len(down) == 4 and all(a[1] > b[1] for a, b in down)    # back to the stream at each tap
    over = [line for line in ax.get_lines() if line.get_linestyle() != "-"]
    assert len(over) == 4 and all(line.get_xdata()[0] > line.get_xdata()[-1] for line in over)
    # Pre's path of identities alone is highlighted, Post has none; it runs under the Pre stream
    (band,) = [line for line in ax.get_lines() if line.get_color() == plots31.IDENTITY_HIGHLIGHT]
    assert band.get_xdata()[0] > band.get_xdata()[-1]
    assert min(band.get_ydata()) > post_title.get_position()[1]
    assert edition.texts("ch31_figures")["gradient_paths.identity_only"] in text
    # J labels: a mathtext sub/superscript is 0.7 of its text; it too shows at >= 11 CSS px
    labels = [t for t in ax.texts if t.get_text().startswith("J$")]
    assert len(labels) == 6
    assert all(0.7 * t.get_fontsize() / 72 * style.DPI >= style.MIN_CSS_PX for t in labels)


def test_training_curves_draw_the_running_mean_and_the_references(figures):
    fig = figures["training_curves"]
    for ax, (title, curves) in zip(fig.axes, CURVES.items(), strict=True):
        assert ax.get_title() == title
        for label, losses in curves.items():
            (line,) = [line for line in ax.get_lines() if line.get_label() == label]
            # steps counted from 1, as Adam counts them; the window expands from step 1 up to 5
            mean = [np.mean(losses[max(0, i - 4):i + 1]) for i in range(len(losses))]
            np.testing.assert_allclose(line.get_ydata(), mean, rtol=1e-12)
            np.testing.assert_array_equal(line.get_xdata(), np.arange(1, len(losses) + 1))
        for label, value in REFERENCES.items():
            (line,) = [line for line in ax.get_lines() if line.get_label() == f"_ref {label}"]
            assert np.all(line.get_ydata() == value)
        assert ax.get_xlim() == (1, 50)                                   # the axis ends at the data
    curves = [line for line in fig.axes[0].get_lines() if line.get_label() in CURVES["η = 0.01"]]
    assert len({(line.get_linestyle(), line.get_marker()) for line in curves}) == 2   # not colour alone
    # the references share one style, so the legend does not name them: each is named in the margin
    assert [t.get_text() for t in fig.legends[0].get_texts()] == list(CURVES["η = 0.01"])
    assert {t.get_text() for t in fig.axes[-1].texts} == set(REFERENCES) and not fig.axes[0].texts


def test_warmup_figure_draws_the_schedules_like_their_curves(figures):
    loss_ax, rate_ax = figures["warmup_curves"].axes
    for label, rates in SCHEDULES.items():
        (line,) = [line for line in rate_ax.get_lines() if line.get_label() == label]
        np.testing.assert_array_equal(line.get_ydata(), rates)
        np.testing.assert_array_equal(line.get_xdata(), np.arange(1, len(rates) + 1))   # rate of step t at t
        same = [c for c in loss_ax.get_lines() if c.get_label() == label]
        if same:
            assert same[0].get_linestyle() == line.get_linestyle() and same[0].get_color() == line.get_color()
    assert rate_ax.get_ylabel() == "скорость\nобучения η" and rate_ax.get_xlabel() == "шаг"


def test_thin_curves_draw_the_other_seeds_in_the_style_of_their_label():
    runs = {"Post-RMSNorm": [np.linspace(3.0, 2.0, 30), np.linspace(2.9, 1.5, 30)]}
    fig = plots31.training_curves({"η = 0.03": CURVES["η = 0.03"]}, REFERENCES, window=5,
                                  seeds={"η = 0.03": runs})
    ax = fig.axes[0]
    (main,) = [line for line in ax.get_lines() if line.get_label() == "Post-RMSNorm"]
    thin = [line for line in ax.get_lines() if line.get_label() == "_seed"]
    assert len(thin) == 2
    for line, run in zip(thin, runs["Post-RMSNorm"], strict=True):
        mean = [np.mean(run[max(0, i - 4):i + 1]) for i in range(len(run))]
        np.testing.assert_allclose(line.get_ydata(), mean, rtol=1e-12)
        assert line.get_linestyle() == main.get_linestyle() and line.get_linewidth() < main.get_linewidth()
    assert edition.texts("ch31_figures")["training_curves.seeds"] in [t.get_text() for t in fig.legends[0].get_texts()]


def _running(run, window):
    return np.array([np.mean(run[max(0, i - window + 1):i + 1]) for i in range(len(run))])


def test_seed_bands_draw_the_median_and_the_range_over_seeds(figures):
    (ax,) = figures["seed_bands"].axes
    assert ax.get_title() == "η = 0.03" and ax.get_ylabel() == "потери"
    bands = [c for c in ax.collections if c.get_label().startswith("_band")]
    assert len(bands) == len(BANDS)
    for index, (label, runs) in enumerate(BANDS.items()):
        table = np.stack([_running(run, 5) for run in runs])
        (line,) = [line for line in ax.get_lines() if line.get_label() == label]
        np.testing.assert_array_equal(line.get_xdata(), np.arange(1, 51))
        np.testing.assert_allclose(line.get_ydata(), np.median(table, axis=0), rtol=1e-12)
        assert line.get_linestyle() == {0: "-", 1: "--", 2: ":"}[index]            # not colour alone
        (band,) = [c for c in bands if c.get_label() == f"_band {label}"]
        corners = band.get_paths()[0].vertices
        for step in (1, 25, 50):
            ys = corners[corners[:, 0] == step][:, 1]
            assert ys.min() == pytest.approx(table[:, step - 1].min(), rel=1e-12)
            assert ys.max() == pytest.approx(table[:, step - 1].max(), rel=1e-12)
    named = [t.get_text() for t in ax.texts]                     # direct labels, no legend
    assert set(BANDS) | set(REFERENCES) | {"конец разогрева"} <= set(named) and not figures["seed_bands"].legends
    for text, value in REFERENCES.items():
        (line,) = [line for line in ax.get_lines() if line.get_label() == f"_ref {text}"]
        assert np.all(line.get_ydata() == value)
    (mark,) = [line for line in ax.get_lines() if line.get_label() == "_mark конец разогрева"]
    assert np.all(np.asarray(mark.get_xdata()) == 30)
    ends = sorted(t.get_position()[1] for t in ax.texts if t.get_text() in {*BANDS, *REFERENCES})
    assert min(np.diff(ends)) > 0                                   # nudged apart
    assert ax.get_xlim() == (0, 50)          # the axis ends at the last step, the labels are beyond it
    assert all(t.get_position()[0] > 1 for t in ax.texts if t.get_text() in {*BANDS, *REFERENCES})


def _label_crossings(fig):
    """(label, line) for every drawn line that passes through a label's box (in pixels). A line is
    clipped to its axes, so only the part of a label's box inside the axes can be crossed."""
    FigureCanvasAgg(fig)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    found = []
    for ax in fig.axes:
        for text in ax.texts:
            box = Bbox.intersection(text.get_window_extent(renderer).shrunk(0.98, 0.9), ax.bbox)
            if box is None or text.get_text() == "+":
                continue
            for line in ax.get_lines():
                path = line.get_transform().transform_path(line.get_path())
                if path.intersects_bbox(box, filled=False):
                    found.append((text.get_text(), line.get_label()))
    return found


@pytest.mark.parametrize("name", ["seed_bands", "seed_bands_two_panels", "training_curves", "warmup_curves"])
def test_no_line_crosses_a_label_of_the_loss_figures(figures, name):
    """Figs 31.14 and 31.16 wrote their labels inside the axes, where the reference lines and the
    curves ran through them, and ran the x axis to 170 past data ending at 120; the labels now sit
    in the right margin and at the top, clear of every line."""
    assert _label_crossings(figures[name]) == []


def test_the_label_test_sees_a_crossed_label():
    fig = style.new_figure(4, 3)
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1], label="diagonal")
    ax.text(0.5, 0.5, "on the line", ha="center", va="center")
    assert _label_crossings(fig) == [("on the line", "diagonal")]


def test_every_reference_line_of_the_chapter_has_one_style(figures):
    """A reference (a loss to compare with, a mark, c/√L, the circle a rotation keeps) was dotted in
    one figure, dash-dotted or dashed in another: now each is drawn in REFERENCE_STYLE."""
    def look(line):
        return (line.get_color(), line.get_linewidth(), line.get_linestyle(), line.get_dashes()
                if hasattr(line, "get_dashes") else line._unscaled_dash_pattern)
    model = Line2D([], [], **plots31.REFERENCE_STYLE)
    references = [line for fig in figures.values() for ax in fig.axes for line in ax.get_lines()
                  if line.get_label().startswith(("_ref", "_mark")) or line.get_label() == plots31.REFERENCE_LABEL]
    references += [figures["head0_scores"].axes[0].get_lines()[0]]       # the circle of radius 2
    assert len(references) >= 10
    assert {look(line) for line in references} == {look(model)}


def test_seed_bands_with_two_panels_share_one_legend(figures):
    fig = figures["seed_bands_two_panels"]
    assert [ax.get_title() for ax in fig.axes] == ["RMS", "доля"]
    assert [t.get_text() for t in fig.legends[0].get_texts()] == list(BANDS)
    for ax in fig.axes:
        (line,) = [line for line in ax.get_lines() if line.get_label() == "Post-RMSNorm"]
        np.testing.assert_allclose(line.get_ydata(), np.median(np.stack(BANDS["Post-RMSNorm"]), axis=0))


def test_top_gradient_draws_one_point_per_depth(figures):
    fig = figures["top_gradient"]
    for ax, (title, tops) in zip(fig.axes, TOPS.items(), strict=True):
        assert ax.get_title() == title
        for variant, values in tops.items():
            (line,) = [line for line in ax.get_lines() if line.get_label() == depth_lab.LABELS[variant]]
            np.testing.assert_array_equal(line.get_xydata(), np.column_stack([[1, 2, 3], values]))
    plain, scaled = fig.axes
    assert [tick.get_text() for tick in plain.get_xticklabels()] == ["1", "2", "3"]   # a few depths: each ticked
    assert not [line for line in plain.get_lines() if line.get_label() == plots31.REFERENCE_LABEL]
    (reference,) = [line for line in scaled.get_lines() if line.get_label() == plots31.REFERENCE_LABEL]
    np.testing.assert_allclose(reference.get_ydata(), 0.5 / np.sqrt([1, 2, 3]))


def test_top_gradient_labels_a_tick_on_either_side_of_the_points():
    """The output-shift figure's lowest point (0.11) sat below its lowest label (0.15): the axis
    now reaches the labelled tick at or beyond the smallest and the largest value."""
    shift = {"pre": [0.11, 0.17, 0.21], "post": [0.14, 0.27, 0.44]}
    fig = plots31.top_gradient([1, 2, 4], {"η": shift}, depth_lab.LABELS)
    (ax,) = fig.axes
    fig.canvas.draw()
    low, high = ax.get_ylim()
    labelled = [tick for tick, text in zip(ax.get_yticks(), ax.get_yticklabels(), strict=True)
                if text.get_text() and low <= tick <= high]
    assert min(labelled) <= 0.11 and max(labelled) >= 0.44
    assert [f"{tick:g}" for tick in labelled] == ["0.1", "0.2", "0.3", "0.4", "0.5"]
    fig.clear()


def test_output_readings_draw_each_run_in_each_panel(figures):
    """The main page's figure of the output's three readings (shift per step, RMS, position-dependent
    share) over steps 1-40: one run per placement, drawn as given, told apart by style, one legend."""
    fig = figures["output_readings"]
    assert [ax.get_title() for ax in fig.axes] == list(READINGS)
    for ax, curves in zip(fig.axes, READINGS.values(), strict=True):
        drawn = [line for line in ax.get_lines() if not line.get_label().startswith("_")]
        assert len({(line.get_linestyle(), line.get_marker()) for line in drawn}) == 3   # not colour alone
        for label, (run,) in curves.items():
            (line,) = [line for line in drawn if line.get_label() == label]
            np.testing.assert_array_equal(line.get_xdata(), np.arange(1, 41))
            np.testing.assert_array_equal(line.get_ydata(), run)
        assert ax.get_xlim() == (0, 40)
    assert [t.get_text() for t in fig.legends[0].get_texts()] == list(READINGS["RMS выхода"])
