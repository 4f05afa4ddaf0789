"""The learner reports and diagram traces: byte-identical to the golden files, printed by the CLI."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from llm_from_scratch import SwiGluForward, Tensor
from llm_from_scratch.chapters import ch30, ch31
from llm_from_scratch.chapters.common import zero_stays_zero

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
    lines = MODULES[chapter].render_report().splitlines()
    findings = [line for line in lines if not line.startswith("config=")]  # config: settings such as bias:false
    assert [line for line in findings if ":false" in line or "mismatch" in line] == []
    assert sum(line.count(":true") for line in findings) >= 10


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


# -- evidence is measured: the same code reports the opposite when the model differs --

def test_the_mixing_stage_is_the_first_stage_where_another_heads_part_differs():
    reference = ch30.build_attention().forward(Tensor(ch30.example_input()))
    assert ch30.first_mixing_stage(reference) == "output"  # head 1's change reaches head 0 only at W_O
    weights = ch30.example_weights()
    weights["query"] = weights["query"] + 0.25  # every head's queries change: mixing "before" the heads
    other = ch30.build_attention(weights).forward(Tensor(ch30.example_input()))
    assert ch30.first_mixing_stage(other) == "projected_query_heads"
    assert ch30.mixing_label("output") == "after-concatenation"
    assert ch30.mixing_label("projected_query_heads") == "projected-query-heads"


def test_bias_free_is_measured_on_a_zero_input():
    zero, shifted = Tensor(np.zeros((1, 3, 4))), Tensor(np.full((1, 3, 4), 0.5))
    assert zero_stays_zero(SwiGluForward(zero, zero, zero, zero, zero))
    assert not zero_stays_zero(SwiGluForward(zero, zero, zero, zero, shifted))  # e.g. a bias in W_down
    assert ch30.learner_evidence().parameters.bias_free
    assert ch31.bias_free(ch31.build_block())
