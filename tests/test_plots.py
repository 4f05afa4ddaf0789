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

from llm_from_scratch.chapters import ch31 as chapter31
from llm_from_scratch.chapters.formatting import format_number, format_vector
from llm_from_scratch.errors import LlmFromScratchError
from llm_from_scratch.plots import ch30, ch31, common
from llm_from_scratch.plots.common import PlotError

E31 = chapter31.learner_evidence()
WEIGHTS31 = E31.primary.value("attention_weights")[0]

BUILDERS = {
    "ch31.block_stage_flow": lambda: ch31.block_stage_flow(E31),
    "ch31.residual_flow": lambda: ch31.residual_flow(E31),
    "ch31.stage_tables": lambda: ch31.stage_tables(E31),
    "ch31.causal_probabilities": lambda: ch31.causal_probabilities(E31),
    "ch31.pre_post_contrast": lambda: ch31.pre_post_contrast(E31),
    "ch31.proofs_panel": lambda: ch31.proofs_panel(E31),
}
ALT_TEXTS = {
    "ch31.block_stage_flow": lambda: ch31.block_stage_flow_alt(E31),
    "ch31.residual_flow": lambda: ch31.residual_flow_alt(E31),
    "ch31.stage_tables": lambda: ch31.stage_tables_alt(E31),
    "ch31.causal_probabilities": lambda: ch31.causal_probabilities_alt(E31),
    "ch31.pre_post_contrast": lambda: ch31.pre_post_contrast_alt(E31),
    "ch31.proofs_panel": lambda: ch31.proofs_panel_alt(E31),
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
    for module in (common, ch30, ch31):
        source = inspect.getsource(module)
        assert "import matplotlib.pyplot" not in source and "from matplotlib import pyplot" not in source


# -- shared by the chapter tests ---------------------------------------------------------------

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


# -- chapter 31 --------------------------------------------------------------------------------

def test_ch31_causal_probabilities_reuse_the_table(figures):
    fig = figures["ch31.causal_probabilities"]
    check_causal_table(fig, WEIGHTS31)
    assert "0.994560" in all_text(fig) and "0.894285" in all_text(fig)
    assert not with_gid(fig, r"head-output-.+")


def test_ch31_block_stage_flow_reads_every_shape(figures):
    fig = figures["ch31.block_stage_flow"]
    assert len(with_gid(fig, r"stage-[a-z_]+(-outer|-inner)?")) == 9 + 2      # x' and y have double frames
    for key, shape in E31.shapes.items():
        assert "[" + ",".join(map(str, shape)) + "]" in text_of(fig, f"stage-{key}-text")
    assert one(fig, "stage-input").get_linestyle() == "-"
    assert one(fig, "stage-attention_branch").get_linestyle() == "--"
    assert len(with_gid(fig, r"stage-after_attention-(outer|inner)")) == 2


def test_ch31_residual_flow_roles_and_values(figures):
    fig = figures["ch31.residual_flow"]
    text = all_text(fig)
    for value in ("3.989119", "0.010881", "1.989119", "7.512278", "0.005455", "3.523159"):
        assert value in text
    for half in range(2):
        assert one(fig, f"value-{half}-stream").get_linestyle() == "-"
        assert one(fig, f"value-{half}-norm").get_linestyle() == "--"
        assert one(fig, f"value-{half}-branch").get_linestyle() == "--"
        assert len(with_gid(fig, rf"residual-add-{half}-(outer|inner)")) == 2
        assert one(fig, f"identity-path-{half}").get_linestyle() == "-"
        assert one(fig, f"branch-arrow-{half}-2").get_linestyle() == "--"
    assert "4.000000" in all_text(ch31.residual_flow(E31, token=0))


@pytest.mark.parametrize("token", [3, -1, 1.5, "1", True, None])
def test_ch31_token_arguments_raise_plot_errors(token):
    for function, stage in ((ch31.residual_flow, "residual flow"), (ch31.residual_flow_alt, "residual flow"),
                            (ch31.pre_post_contrast, "pre/post contrast"),
                            (ch31.pre_post_contrast_alt, "pre/post contrast")):
        with pytest.raises(PlotError, match=f"^{re.escape(stage)} token must be") as caught:
            function(E31, token=token)
        assert caught.value.stage == stage and isinstance(caught.value, LlmFromScratchError)
        assert repr(token) in str(caught.value) or str(token) in str(caught.value)


def test_ch31_stage_tables_frame_columns_by_role(figures):
    fig = figures["ch31.stage_tables"]
    assert one(fig, "column-input").get_linestyle() == "-"
    assert one(fig, "column-attention_branch").get_linestyle() == "--"
    assert len(with_gid(fig, r"column-(after_attention|output)-(outer|inner)")) == 4
    assert one(fig, "column-probe_logits").get_linestyle() == ":"
    assert text_of(fig, "stages-2-r1-c1") == format_vector(E31.primary.probe_logits[0, 1])
    assert "3.989119" in all_text(fig) and "-7.523174" in all_text(fig)


def test_ch31_pre_post_contrast_bars_and_values(figures):
    fig = figures["ch31.pre_post_contrast"]
    pre, post = with_gid(fig, r"bar-pre-\d"), with_gid(fig, r"bar-post-\d")
    assert len(pre) == len(post) == 4
    assert all(b.get_linestyle() == "--" and b.get_hatch() == common.BAR_HATCH for b in post)
    assert all(b.get_linestyle() == "-" and not b.get_hatch() for b in pre)
    text = all_text(fig)
    for value in ("-0.573144", "1.732042", "-0.579449", "3.989119", "0.010881"):
        assert value in text
    assert np.isclose(one(fig, "bar-post-0").get_height(), E31.primary.post_norm_first_stage[0, 1, 0])


def test_ch31_pre_post_contrast_draws_the_evidence_not_constants():
    post = E31.primary.post_norm_first_stage.copy()
    post[0, 1] = [0.25, -0.5, 0.125, 0.125]
    primary = dataclasses.replace(E31.primary, post_norm_first_stage=post, post_norm_differs=False)
    text = all_text(ch31.pre_post_contrast(dataclasses.replace(E31, primary=primary)))
    assert "-0.500000" in text and "-0.573144" not in text and "Результаты совпадают" in text


def test_ch31_proofs_panel(figures):
    fig = figures["ch31.proofs_panel"]
    text = all_text(fig)
    for name in E31.parameters.names:
        assert name in text
    assert "120" in text_of(fig, "parameters-title") and "9" in text_of(fig, "parameters-title")
    assert text_of(fig, "gradients-title").endswith("n = 132")
    assert "0.000020" in text
    assert [text_of(fig, f"prefix-status-t{t}-text") for t in range(3)] == [
        "побитово без изменений", "побитово без изменений", "изменилось"]
    assert all(r.get_linestyle() == "-" for r in with_gid(fig, r"check-\d"))
