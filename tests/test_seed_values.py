"""Every number in the seed texts' tables, to six decimals, from the public API."""

import numpy as np
import pytest

from llm_from_scratch import Tensor
from llm_from_scratch.ch31.contrasts import layer_norm_rows

from worked_examples import (
    SEED30,
    SEED30_HEAD_1_TOKEN_1_SCORES,
    SEED31,
    SEED31_POST_LN_TOKEN_1,
    SEED31_PROBE,
    build_chapter30_attention,
    build_chapter31_block,
    chapter30_input,
    chapter31_input,
)


def close(actual, expected):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), atol=5e-7, rtol=0)


# -- chapter 30 -----------------------------------------------------------------

@pytest.mark.parametrize("stage", SEED30)
def test_ch30_stage(stage):
    layer = build_chapter30_attention()
    forward = layer.forward(Tensor(chapter30_input()), position_offset=0)
    outside = {"input": chapter30_input()[0], "output_weight": layer.w_o.value}   # not stages of the record
    close(outside[stage] if stage in outside else getattr(forward, stage).value[0], SEED30[stage])


def test_ch30_attention_rows_sum_to_one():
    weights = build_chapter30_attention().forward(Tensor(chapter30_input())).attention_weights.value
    close(weights.sum(-1), np.ones((1, 2, 3)))


def test_ch30_head1_token1_scores():
    q = build_chapter30_attention().forward(Tensor(chapter30_input())).rotated_query_heads.value[0, 1]
    s = q[1] @ q[:2].T / np.sqrt(2)  # head 1: Q = K after RoPE
    close(s, SEED30_HEAD_1_TOKEN_1_SCORES)


def test_ch30_parameter_count():
    attention = build_chapter30_attention()
    assert attention.parameters().count() == 4 * 4 ** 2 == 64


# -- chapter 31 -----------------------------------------------------------------

@pytest.mark.parametrize("stage", SEED31)
def test_ch31_stage(stage):
    f = build_chapter31_block().forward(Tensor(chapter31_input()), position_offset=0)
    value = {"input": chapter31_input(), "attention_norm": f.attention_norm.value,
             "attention_branch": f.attention.output.value, "after_attention": f.after_attention.value,
             "feed_forward_norm": f.feed_forward_norm.value, "feed_forward_branch": f.feed_forward.output.value,
             "output": f.output.value, "attention_weights": f.attention.attention_weights.value,
             "probe_logits": f.output.value @ np.array(SEED31_PROBE, dtype=np.float64)}[stage]
    close(value[0], SEED31[stage])


def test_ch31_post_ln_contrast_token_1():
    block = build_chapter31_block()
    x = chapter31_input()
    post = layer_norm_rows(x + block.attention.forward(Tensor(x)).output.value, 1e-5)
    close(post[0, 1], SEED31_POST_LN_TOKEN_1)


def test_ch31_parameter_counts():
    block = build_chapter31_block()
    d, d_ff = 4, 4
    assert block.parameters().count() == 2 * d + 4 * d * d + 3 * d * d_ff == 120
    assert len(block.parameters()) == 9
