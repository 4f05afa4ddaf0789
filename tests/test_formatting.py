"""The one line-wrapper of the chapters and the report formats."""

import itertools
import re

import pytest

from llm_from_scratch.book.formats import format_list, format_number, format_shape, wrap
from llm_from_scratch.ch30 import example as ch30
from llm_from_scratch.ch31 import example as ch31
from llm_from_scratch.errors import FormatError

TEXTS = [ch30.render_report(), ch30.render_trace(), ch31.render_report(), ch31.render_trace(),
         "short", "", "a,b c", "x" * 200, "  indented " + "word " * 40]


@pytest.mark.parametrize("text", TEXTS, ids=range(len(TEXTS)))
def test_wrap_fits_the_width_and_gives_the_text_back(text):
    wrapped = wrap(text)
    assert all(len(line) <= 75 for line in wrapped.splitlines())
    lines = iter(wrapped.splitlines())
    for original in text.splitlines():  # continuation lines: the line's indent plus four spaces
        indent = " " * (len(original) - len(original.lstrip(" ")) + 4)
        rebuilt = next(lines)
        while len(rebuilt) < len(original):
            rebuilt += next(lines).removeprefix(indent)
        assert rebuilt == original


@pytest.mark.parametrize("text", TEXTS[:4], ids=["ch30-report", "ch30-trace", "ch31-report", "ch31-trace"])
def test_wrap_breaks_the_reports_after_a_separator_so_no_number_is_cut(text):
    lines = wrap(text).splitlines()
    breaks = [(a, b) for a, b in itertools.pairwise(lines) if b.startswith("    ")]
    assert breaks and all(a[-1] in " ,|" for a, _ in breaks if any(c.isdigit() for c in a[-3:]))


def test_formats():
    assert format_shape((1, 3, 4)) == "[1, 3, 4]"  # prose, errors and feedback
    assert format_list((1, 3, 4)) == "[1,3,4]"     # the seed's report lines
    assert format_number(-1e-9) == "0.000000"


@pytest.mark.parametrize("call, message", [
    (lambda: wrap("a b", 0), "wrap width must be an integer in [8, 10000], got 0"),
    (lambda: wrap("a b", -1), "got -1"),
    (lambda: wrap("a b", 2.5), "got 2.5"),
    (lambda: wrap(None), "wrap text must be a str, got NoneType"),
    (lambda: format_number(10**400), "must fit a float, got an integer of 1329 bits"),
    (lambda: format_number(None), "must be a real number, got NoneType"),
    (lambda: format_number("1"), "must be a real number, got str"),
    (lambda: format_number(1.0, -1), "decimals must be an integer in [0, 20], got -1"),
])
def test_the_formats_answer_bad_input_with_a_format_error(call, message):
    with pytest.raises(FormatError, match=re.escape(message)):
        call()
