"""The figures draw what their captions promise, from the evidence, in greyscale, deterministically."""

import dataclasses
import inspect
import io
import re

import matplotlib
import matplotlib.image
import numpy as np
import pytest
from matplotlib.colors import to_rgba_array
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.text import Text

from llm_from_scratch.chapters import ch30 as chapter30
from llm_from_scratch.chapters.formatting import format_number, format_vector
from llm_from_scratch.errors import LlmFromScratchError
from llm_from_scratch.plots import ch30, common
from llm_from_scratch.plots.common import PlotError

E30 = chapter30.learner_evidence()
WEIGHTS30 = E30.primary.value("attention_weights")[0]     # [h, T, T]

BUILDERS = {
    "ch30.stage_flow": lambda: ch30.stage_flow(E30),
    "ch30.projections_by_head": lambda: ch30.projections_by_head(E30),
    "ch30.causal_tables": lambda: ch30.causal_tables(E30),
    "ch30.output_projection": lambda: ch30.output_projection(E30),
    "ch30.prefix_and_invariants": lambda: ch30.prefix_and_invariants(E30),
    "ch30.random_heads_heatmaps": lambda: ch30.random_heads_heatmaps(ch30.random_layer_weights(seed=7)),
}
ALT_TEXTS = {
    "ch30.stage_flow": lambda: ch30.stage_flow_alt(E30),
    "ch30.projections_by_head": lambda: ch30.projections_by_head_alt(E30),
    "ch30.causal_tables": lambda: ch30.causal_tables_alt(E30),
    "ch30.output_projection": lambda: ch30.output_projection_alt(E30),
    "ch30.prefix_and_invariants": lambda: ch30.prefix_and_invariants_alt(E30),
    "ch30.random_heads_heatmaps": lambda: ch30.random_heads_heatmaps_alt(ch30.random_layer_weights(seed=7)),
}
NAMES = list(BUILDERS)


@pytest.fixture(scope="module")
def figures():
    return {name: build() for name, build in BUILDERS.items()}


def with_gid(fig, pattern):
    """Artists whose gid matches the regular expression ``pattern`` entirely."""
    regex = re.compile(pattern)
    return [a for a in fig.findobj() if a.get_gid() and regex.fullmatch(a.get_gid())]


def one(fig, gid):
    found = with_gid(fig, re.escape(gid))
    assert len(found) == 1, (gid, len(found))
    return found[0]


def all_text(fig):
    return "\n".join(t.get_text() for t in fig.findobj(Text))


def text_of(fig, gid):
    return one(fig, gid).get_text()


def png(fig):
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()


def is_grey(colors):
    rgba = to_rgba_array(colors)
    return bool(np.all(rgba[:, 0] == rgba[:, 1]) and np.all(rgba[:, 1] == rgba[:, 2]))


# -- every figure -----------------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_every_function_returns_a_book_width_figure(figures, name):
    fig = figures[name]
    assert type(fig) is Figure
    width, height = fig.get_size_inches() * fig.dpi
    assert (fig.dpi, width) == (100, 1000)
    assert 250 <= height <= 650


@pytest.mark.parametrize("name", NAMES)
def test_alt_text_is_russian_and_carries_numbers(name):
    alt = ALT_TEXTS[name]()
    assert isinstance(alt, str) and len(alt) > 100
    assert re.search("[а-яё]", alt)
    assert re.search(r"\d", alt)


@pytest.mark.parametrize("name", NAMES)
def test_every_artist_is_grey(figures, name):
    fig = figures[name]
    for artist in fig.findobj():
        if isinstance(artist, Patch):
            assert is_grey(artist.get_edgecolor()) and is_grey(artist.get_facecolor()), artist
            assert is_grey(artist.get_hatchcolor()), artist
        elif isinstance(artist, Line2D) or isinstance(artist, Text):
            assert is_grey(artist.get_color()), artist
        elif isinstance(artist, AxesImage):
            assert is_grey(artist.to_rgba(artist.get_array())[..., :3].reshape(-1, 3)), artist
        elif isinstance(artist, matplotlib.collections.Collection) and artist.get_array() is not None:
            assert is_grey(artist.to_rgba(np.asarray(artist.get_array()).ravel())), artist     # colour-mapped
        elif isinstance(artist, matplotlib.collections.Collection):
            for colors in (artist.get_edgecolor(), artist.get_facecolor()):
                if len(colors):
                    assert is_grey(colors), artist


@pytest.mark.parametrize("name", NAMES)
def test_gids_are_unique_and_numbers_never_negative_zero(figures, name):
    fig = figures[name]
    gids = [a.get_gid() for a in fig.findobj() if a.get_gid()]
    assert len(gids) == len(set(gids))
    assert "-0.000000" not in all_text(fig)


@pytest.mark.parametrize("name", NAMES)
def test_png_is_greyscale_and_deterministic_even_under_a_foreign_style(figures, name):
    first = png(figures[name])
    pixels = matplotlib.image.imread(io.BytesIO(first), format="png")
    assert pixels.shape[:2] == tuple(int(v) for v in figures[name].get_size_inches()[::-1] * 100)
    assert np.array_equal(pixels[..., 0], pixels[..., 1]) and np.array_equal(pixels[..., 1], pixels[..., 2])
    with matplotlib.rc_context({"font.size": 17, "lines.linewidth": 4, "hatch.linewidth": 3,
                                "axes.prop_cycle": matplotlib.cycler(color=["red"]), "image.cmap": "viridis",
                                "text.color": "blue", "axes.edgecolor": "green"}):
        second = png(BUILDERS[name]())
    assert first == second


def test_plot_modules_do_not_use_pyplot():
    for module in (common, ch30):
        source = inspect.getsource(module)
        assert "import matplotlib.pyplot" not in source and "from matplotlib import pyplot" not in source


# -- chapter 30 --------------------------------------------------------------------------------

def check_causal_table(fig, weights):
    heads, tokens = weights.shape[0], weights.shape[1]
    cells = with_gid(fig, r"cell-h\d+-q\d+-k\d+-(visible|masked)")
    masked = with_gid(fig, r"cell-h\d+-q\d+-k\d+-masked")
    masked_count = heads * tokens * (tokens - 1) // 2
    assert len(cells) == heads * tokens * tokens
    assert len(masked) == masked_count and all(c.get_hatch() == "///" for c in masked)
    assert all(not c.get_hatch() for c in with_gid(fig, r"cell-h\d+-q\d+-k\d+-visible"))
    visible_lines = with_gid(fig, r"underline-visible-h\d+-q\d+-k\d+")
    masked_lines = with_gid(fig, r"underline-masked-h\d+-q\d+-k\d+")
    assert len(visible_lines) == heads * tokens * tokens - masked_count
    assert len(masked_lines) == masked_count
    assert {line.get_linestyle() for line in visible_lines} == {"-"}
    assert {line.get_linestyle() for line in masked_lines} == {"--"}
    diagonal = with_gid(fig, r"diagonal-h\d+-q\d+-(outer|inner)")
    assert len(diagonal) == 2 * heads * tokens and {r.get_linestyle() for r in diagonal} == {"-"}
    assert one(fig, "head-0-frame").get_linestyle() == "-"
    assert one(fig, "head-1-frame").get_linestyle() == "--"
    for h in range(heads):
        for q in range(tokens):
            assert text_of(fig, f"rowsum-h{h}-q{q}") == format_number(weights[h, q].sum())
            for k in range(tokens):
                assert text_of(fig, f"prob-h{h}-q{q}-k{k}") == format_number(weights[h, q, k])
                if k > q:
                    assert weights[h, q, k] == 0.0


def test_ch30_causal_tables_mark_visible_masked_and_diagonal(figures):
    fig = figures["ch30.causal_tables"]
    assert WEIGHTS30.shape == (2, 3, 3)
    check_causal_table(fig, WEIGHTS30)          # 18 cells, 6 masked, 12 + 6 underlines, 12 diagonal rectangles
    text = all_text(fig)
    for value in ("0.213809", "0.786191", "0.770151", "-0.420735", "0.054696", "0.574348"):
        assert value in text
    outputs = E30.primary.value("head_outputs")[0]
    assert text_of(fig, "head-output-h0-q1").replace("\n", "") == format_vector(outputs[0, 1])


def test_ch30_stage_flow_reads_every_shape(figures):
    fig = figures["ch30.stage_flow"]
    stages = with_gid(fig, r"stage-[a-z_]+")
    assert len(stages) == 8
    assert {one(fig, f"stage-{k}").get_linestyle() for k in ("split", "rotated", "weights", "head_output")} == {"--"}
    assert one(fig, "stage-output_weight").get_linestyle() == ":"
    assert "[1,3,4]" in text_of(fig, "stage-input-text") and "[1,2,3,3]" in text_of(fig, "stage-weights-text")
    assert "[4,4]" in text_of(fig, "stage-output_weight-text")
    assert len(with_gid(fig, r"arrow-.+")) == 7


def test_ch30_projections_by_head_frames_and_values(figures):
    fig = figures["ch30.projections_by_head"]
    assert one(fig, "head-0-frame").get_linestyle() == "-"
    assert one(fig, "head-1-frame").get_linestyle() == "--"
    rotated = E30.primary.value("rotated_key_heads")[0]
    assert text_of(fig, "projections-h1-r4-c3") == format_vector(rotated[1, 2]) == "[-1.325444,0.493151]"
    assert "V остаётся без поворота" in all_text(fig)


def test_ch30_output_projection_shows_the_swap(figures):
    fig = figures["ch30.output_projection"]
    merged, output = E30.primary.value("merged")[0], E30.primary.value("output")[0]
    assert text_of(fig, "before-t1-g0-text") == format_vector(merged[1, :2]) == "[0.770151,-0.420735]"
    assert text_of(fig, "after-t1-g0-text") == format_vector(output[1, :2]) == "[0.213809,0.786191]"
    assert one(fig, "after-t1-g0").get_linestyle() == "--"          # head 1's group moved to the front
    assert one(fig, "after-t1-g1").get_linestyle() == "-"
    assert {a.get_gid() for a in with_gid(fig, r"link-t1-g\d-g\d")} == {"link-t1-g0-g1", "link-t1-g1-g0"}
    assert one(fig, "wo-head-0-frame").get_linestyle() == "-" and one(fig, "wo-head-1-frame").get_linestyle() == "--"


def test_ch30_prefix_and_invariants_read_the_evidence(figures):
    fig = figures["ch30.prefix_and_invariants"]
    assert [text_of(fig, f"prefix-status-t{t}-text") for t in range(3)] == [
        "побитово без изменений", "побитово без изменений", "изменилось"]
    assert [one(fig, f"prefix-status-t{t}").get_linestyle() for t in range(3)] == ["-", "-", "--"]
    invariants = with_gid(fig, r"invariant-\d")
    assert len(invariants) == 6 and all(r.get_linestyle() == "-" and not r.get_hatch() for r in invariants)
    assert text_of(fig, "invariant-4-text").startswith("64") and text_of(fig, "invariant-5-text").startswith("76")
    assert format_number(E30.primary.common_offset_max_difference, 12) in text_of(fig, "invariant-3-text")


def test_ch30_statuses_follow_the_evidence_booleans():
    primary = dataclasses.replace(E30.primary, prefix_one_unchanged=False, split_merge_bitwise=False)
    fig = ch30.prefix_and_invariants(dataclasses.replace(E30, primary=primary))
    assert text_of(fig, "prefix-status-t1-text") == "изменилось"
    assert one(fig, "prefix-status-t1").get_linestyle() == "--"
    assert one(fig, "invariant-0").get_linestyle() == "--" and one(fig, "invariant-0").get_hatch() == "///"
    assert text_of(fig, "invariant-0-text") == "не восстанавливает тензор"


def test_ch30_random_layer_weights_are_seeded_causal_probabilities():
    weights = ch30.random_layer_weights(heads=4, tokens=8, model_width=16, seed=7)
    assert weights.shape == (4, 8, 8)
    assert np.allclose(weights.sum(axis=-1), 1.0)
    assert np.all(weights[:, np.triu_indices(8, 1)[0], np.triu_indices(8, 1)[1]] == 0.0)
    assert np.array_equal(weights, ch30.random_layer_weights(seed=7))
    assert not np.array_equal(weights, ch30.random_layer_weights(seed=8))


def test_ch30_heatmaps_hatch_masked_cells_and_label_heads(figures):
    fig = figures["ch30.random_heads_heatmaps"]
    masked = with_gid(fig, r"heatmap-h\d-q\d-k\d-masked")
    assert len(masked) == 4 * 28 and {m.get_hatch() for m in masked} == {"///"}
    assert [a.get_title() for a in fig.axes[1:5]] == [f"голова {h}" for h in range(4)]
    assert len(fig.axes) == 6                                   # the sheet, four heads and the colorbar
    assert all(one(fig, f"heatmap-h{h}").get_cmap().name == "Greys" for h in range(4))


@pytest.mark.parametrize("weights", [np.zeros((3, 3)), np.zeros((2, 3, 4)), np.zeros((0, 3, 3)),
                                     np.full((1, 2, 2), np.nan), -np.ones((1, 2, 2)), 2 * np.ones((1, 2, 2)),
                                     "weights"])
def test_ch30_heatmaps_reject_what_they_cannot_draw(weights):
    with pytest.raises(PlotError, match="random heads heatmaps weights") as caught:
        ch30.random_heads_heatmaps(weights)
    assert isinstance(caught.value, LlmFromScratchError)
