"""Central-difference gradient checks: the worked examples and random small configurations."""

import numpy as np
import pytest

from llm_from_scratch import (
    DecoderBlock,
    DecoderBlockConfig,
    MultiHeadAttention,
    Parameter,
    SplitMix64,
    Tensor,
    gradcheck,
)

from worked_examples import build_chapter30_attention, build_chapter31_block, chapter30_input, chapter31_input


def upstream_like(shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape)


def test_chapter30_worked_example_76_coordinates_within_8e_6():
    layer = build_chapter30_attention()
    report = gradcheck(lambda x: layer.forward(x).output, chapter30_input(), list(layer.parameters()),
                       upstream_like((1, 3, 4)), delta=1e-6, tolerance=8e-6)
    assert report.total == 76 and [c.coordinates for c in report.checks] == [12, 16, 16, 16, 16]
    assert report.passed, str(report)


def test_chapter31_worked_example_132_coordinates_within_2e_5():
    block = build_chapter31_block()
    report = gradcheck(lambda x: block.forward(x).output, chapter31_input(), list(block.parameters()),
                       upstream_like((1, 3, 4), 1), delta=1e-6, tolerance=2e-5)
    assert report.total == 132 and report.checks[0].coordinates == 12
    assert report.passed, str(report)


@pytest.mark.parametrize("batch, tokens, d_model, heads, d_ff, offset, eps, seed", [
    (2, 3, 8, 4, 5, 1, 1e-5, 11),   # batch > 1, more than two heads, offset > 0, eps > 0
    (1, 4, 8, 2, 3, 2, 1e-3, 12),   # head width 4 > 2
    (3, 2, 12, 3, 4, 0, 0.1, 13),
])
def test_random_small_blocks(batch, tokens, d_model, heads, d_ff, offset, eps, seed):
    config = DecoderBlockConfig(model_width=d_model, heads=heads, feed_forward_width=d_ff,
                                max_positions=tokens + offset, rope_base=50.0, rms_epsilon=eps)
    block = DecoderBlock.new("b", config, SplitMix64(seed))
    x = np.random.default_rng(seed).normal(size=(batch, tokens, d_model))
    report = gradcheck(lambda t: block.forward(t, position_offset=offset).output, x, list(block.parameters()),
                       upstream_like(x.shape, seed), delta=1e-6, tolerance=2e-5)
    assert report.total == x.size + block.parameter_count()
    assert report.passed, str(report)


def test_random_attention_with_wide_heads():
    layer = MultiHeadAttention.new("a", 12, 2, 5, 10.0, SplitMix64(5))  # d_h = 6
    x = np.random.default_rng(5).normal(size=(2, 4, 12))
    report = gradcheck(lambda t: layer.forward(t, position_offset=1).output, x, list(layer.parameters()),
                       upstream_like(x.shape, 5), tolerance=8e-6)
    assert report.passed, str(report)


def test_a_wrong_gradient_fails_and_the_report_shows_both_values():
    w = Parameter("w", np.array([[2.0]]))

    def broken(x):  # x @ w with a VJP that forgets both gradients
        return Tensor.result(x.value @ w.value, (x, w), lambda g: (g * 0.0, g * 0.0))

    report = gradcheck(broken, np.array([[3.0]]), [w], np.array([[1.0]]), tolerance=1e-6)
    assert not report.passed
    text = str(report)
    assert "FAILED" in text and "analytic=0.000000000" in text and "numeric=2.000000" in text


def test_gradcheck_puts_back_every_parameter_it_moved():
    layer = build_chapter30_attention()
    before = [p.value for p in layer.parameters()]
    gradcheck(lambda x: layer.forward(x).output, chapter30_input(), list(layer.parameters()), upstream_like((1, 3, 4)))
    assert all(p.value is value for p, value in zip(layer.parameters(), before, strict=True))
    assert all(not p.value.flags.writeable for p in layer.parameters())
