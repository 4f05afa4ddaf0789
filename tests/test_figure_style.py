"""The course's figure style: a figure is built under its rcParams, whatever the notebook set."""

import matplotlib

from llm_from_scratch.book import figure_style as style


@style.styled
def titled_figure():
    fig = style.new_figure(3.0, 2.0)
    ax = fig.add_subplot()
    ax.set_title("title")
    return ax.title.get_fontsize(), matplotlib.rcParams["font.size"]


def test_a_styled_figure_uses_the_course_fonts_at_every_call_and_leaves_the_notebooks_settings():
    with matplotlib.rc_context({"font.size": 30.0, "axes.titlesize": 30.0}):
        for _ in range(2):   # the context is entered afresh at every call
            assert titled_figure() == (style.FONT, style.FONT)
        assert matplotlib.rcParams["font.size"] == 30.0
