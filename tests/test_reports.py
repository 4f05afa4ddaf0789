"""The learner reports and diagram traces: the command line prints the golden files byte for byte, and quits
with one line when it cannot write them. Their numbers are measured: the same code reports the opposite when
the model differs."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from llm_from_scratch import SwiGluForward, Tensor
from llm_from_scratch.book.worked_example import zero_stays_zero
from llm_from_scratch.ch30 import example as ch30
from llm_from_scratch.ch31 import example as ch31

GOLDEN = Path(__file__).parent / "golden"


def command(chapter, *flags, **streams):
    return subprocess.run([sys.executable, "-m", f"llm_from_scratch.ch{chapter}", *flags],
                          stderr=subprocess.PIPE, text=True, **streams)


@pytest.mark.parametrize("chapter", ["30", "31"])
@pytest.mark.parametrize("flag", [[], ["--trace"]])
def test_command_line_prints_the_golden_text(chapter, flag):
    result = command(chapter, *flag, stdout=subprocess.PIPE)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == (GOLDEN / f"ch{chapter}-{'trace' if flag else 'report'}.txt").read_text(encoding="utf-8")


@pytest.mark.parametrize("chapter", ["30", "31"])
def test_a_closed_pipe_ends_the_command_with_one_line(chapter):
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first byte: every write fails with EPIPE
    result = command(chapter, "--trace", stdout=write)
    os.close(write)
    assert result.returncode == 1
    prog = f"python -m llm_from_scratch.ch{chapter}"
    assert result.stderr.splitlines() == [f"{prog}: output not written: the reader closed the pipe"]


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("chapter", ["30", "31"])
def test_a_full_disk_ends_the_command_with_one_line(chapter):
    with open("/dev/full", "w") as full:
        result = command(chapter, stdout=full)
    assert result.returncode == 1
    prog = f"python -m llm_from_scratch.ch{chapter}"
    assert result.stderr.splitlines() == [f"{prog}: output not written: No space left on device"]


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
    assert zero_stays_zero(ch30.build_attention().forward(Tensor(np.zeros((1, 3, 4)))))
    assert ch31.bias_free(ch31.build_block())
