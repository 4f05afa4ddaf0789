"""Every number in the seed texts' tables, to six decimals, from the public API."""

import numpy as np
import pytest

from llm_from_scratch import Tensor
from llm_from_scratch.ch31.contrasts import layer_norm_rows

from worked_examples import build_chapter30_attention, build_chapter31_block, chapter30_input, chapter31_input


def close(actual, expected):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), atol=5e-7, rtol=0)


@pytest.fixture(scope="module")
def ch30():
    return build_chapter30_attention().forward(Tensor(chapter30_input()), position_offset=0)


@pytest.fixture(scope="module")
def ch31():
    return build_chapter31_block().forward(Tensor(chapter31_input()), position_offset=0)


# -- chapter 30 -----------------------------------------------------------------

def test_ch30_projected_heads(ch30):
    head0 = [[1.0, 0.0], [0.540302, -0.841471], [-0.416147, -0.909297]]
    head1 = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
    for stage in ("projected_query_heads", "projected_key_heads", "projected_value_heads"):
        close(getattr(ch30, stage).value[0], [head0, head1])


def test_ch30_rotated_query_and_key(ch30):
    head0 = [[1.0, 0.0]] * 3
    head1 = [[1.0, 0.0], [-0.841471, 0.540302], [-1.325444, 0.493151]]
    close(ch30.rotated_query_heads.value[0], [head0, head1])
    close(ch30.rotated_key_heads.value[0], [head0, head1])


def test_ch30_attention_tables(ch30):
    close(ch30.attention_weights.value[0, 0], [[1, 0, 0], [0.5, 0.5, 0], [1 / 3, 1 / 3, 1 / 3]])
    close(ch30.attention_weights.value[0, 1],
          [[1, 0, 0], [0.213809, 0.786191, 0], [0.054696, 0.370956, 0.574348]])
    close(ch30.attention_weights.value.sum(-1), np.ones((1, 2, 3)))


def test_ch30_head1_token1_scores():
    scores = build_chapter30_attention()
    q = scores.forward(Tensor(chapter30_input())).rotated_query_heads.value[0, 1]
    s = q[1] @ q[:2].T / np.sqrt(2)  # head 1: Q = K after RoPE
    close(s, [-0.595010, 0.707107])


def test_ch30_head_outputs_concatenation_and_output(ch30):
    close(ch30.head_outputs.value[0, 0], [[1, 0], [0.770151, -0.420735], [0.374718, -0.583589]])
    close(ch30.head_outputs.value[0, 1], [[1, 0], [0.213809, 0.786191], [0.629044, 0.945304]])
    close(ch30.merged.value[0], [[1, 0, 1, 0], [0.770151, -0.420735, 0.213809, 0.786191],
                                 [0.374718, -0.583589, 0.629044, 0.945304]])
    close(ch30.output.value[0], [[1, 0, 1, 0], [0.213809, 0.786191, 0.770151, -0.420735],
                                 [0.629044, 0.945304, 0.374718, -0.583589]])


def test_ch30_parameter_count():
    attention = build_chapter30_attention()
    assert attention.parameters().count() == 4 * 4 ** 2 == 64


# -- chapter 31 -----------------------------------------------------------------

def test_ch31_stage_rows(ch31):
    close(ch31.attention_norm.value[0], chapter31_input()[0])
    close(ch31.attention.output.value[0], [[2, 0, 0, 0], [0.010881, 1.989119, 0, 0], [0.666667, 0.666667, 1.788570, 0]])
    close(ch31.after_attention.value[0], [[4, 0, 0, 0], [0.010881, 3.989119, 0, 0], [0.666667, 0.666667, 3.788570, 0]])
    close(ch31.feed_forward_norm.value[0],
          [[2, 0, 0, 0], [0.005455, 1.999993, 0, 0], [0.341520, 0.341520, 1.940806, 0]])
    close(ch31.feed_forward.output.value[0], [[3.523188, 0, 0, 0], [0.000015, 3.523159, 0, 0],
                                              [0.068180, 0.068180, 3.293781, 0]])
    close(ch31.output.value[0], [[7.523188, 0, 0, 0], [0.010896, 7.512278, 0, 0], [0.734847, 0.734847, 7.082351, 0]])


def test_ch31_attention_probabilities(ch31):
    close(ch31.attention.attention_weights.value[0, 0], [[1, 0, 0], [0.005440, 0.994560, 0], [1 / 3, 1 / 3, 1 / 3]])
    close(ch31.attention.attention_weights.value[0, 1], [[1, 0, 0], [0.5, 0.5, 0], [0.052857, 0.052857, 0.894285]])


def test_ch31_probe_logits(ch31):
    probe = np.array([[1, 0, -1], [0, 1, -1], [1, 1, 0], [0, 0, 0]], dtype=np.float64)
    close(ch31.output.value[0] @ probe, [[7.523188, 0, -7.523188], [0.010896, 7.512278, -7.523174],
                                         [7.817198, 7.817198, -1.469694]])


def test_ch31_post_ln_contrast_token_1():
    block = build_chapter31_block()
    x = chapter31_input()
    post = layer_norm_rows(x + block.attention.forward(Tensor(x)).output.value, 1e-5)
    close(post[0, 1], [-0.573144, 1.732042, -0.579449, -0.579449])


def test_ch31_parameter_counts():
    block = build_chapter31_block()
    d, d_ff = 4, 4
    assert block.parameters().count() == 2 * d + 4 * d * d + 3 * d * d_ff == 120
    assert len(block.parameters()) == 9
