"""The learner reports and diagram traces: byte-identical to the golden files, printed by the CLI."""

import subprocess
import sys
from pathlib import Path

import pytest

from llm_from_scratch.chapters import ch30, ch31

GOLDEN = Path(__file__).parent / "golden"
MODULES = {"30": ch30, "31": ch31}


@pytest.mark.parametrize("chapter", sorted(MODULES))
@pytest.mark.parametrize("kind", ["report", "trace"])
def test_rendering_matches_golden_file(chapter, kind):
    module = MODULES[chapter]
    text = module.render_report() if kind == "report" else module.render_trace()
    assert text == (GOLDEN / f"ch{chapter}-{kind}.txt").read_text(encoding="utf-8")


@pytest.mark.parametrize("chapter, lines", [("30", 34), ("31", 33)])
def test_trace_line_counts(chapter, lines):
    assert len(MODULES[chapter].render_trace().splitlines()) == lines


@pytest.mark.parametrize("chapter", sorted(MODULES))
@pytest.mark.parametrize("flag", [[], ["--trace"]])
def test_command_line_prints_the_golden_text(chapter, flag):
    result = subprocess.run([sys.executable, "-m", f"llm_from_scratch.chapters.ch{chapter}", *flag],
                            capture_output=True, text=True, check=True)
    kind = "trace" if flag else "report"
    assert result.stdout == (GOLDEN / f"ch{chapter}-{kind}.txt").read_text(encoding="utf-8")
    assert result.stderr == ""


def test_reports_never_print_negative_zero():
    for module in MODULES.values():
        assert "-0.000000" not in module.render_report() + module.render_trace()


@pytest.mark.parametrize("chapter", sorted(MODULES))
def test_every_check_in_the_report_passes(chapter):
    report = MODULES[chapter].render_report().replace("bias:false", "bias-free")
    assert ":false" not in report and "mismatch" not in report
    assert ":true" in report


def test_chapter30_report_carries_the_seed_values():
    report = ch30.render_report()
    for expected in ("0.213809,0.786191", "0.054696,0.370956,0.574348", "0.770151,-0.420735",
                     "0.629044,0.945304,0.374718,-0.583589", "count:64", "total:76", "tolerance:0.000008"):
        assert expected in report


def test_chapter31_trace_carries_the_seed_values():
    trace = ch31.render_trace()
    for expected in ("post_norm_token_1=[-0.573144,1.732042,-0.579449,-0.579449]",
                     "pre_norm_token_1=[0.010881,3.989119,0.000000,0.000000]",
                     "PROBE|token=2|values=[7.817198,7.817198,-1.469694]", "scalars=120", "total=132"):
        assert expected in trace
