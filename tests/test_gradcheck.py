"""The gradient checker itself: it fails a wrong VJP and says where, and it puts back what it moved.

(The worked examples' gradients are checked in the chapters' reports, tests/test_reports.py; random layers are
checked in test_properties.py.)
"""

import numpy as np
import pytest

from llm_from_scratch import MultiHeadAttention, Parameter, SplitMix64, Tensor, gradcheck
from llm_from_scratch.errors import GradcheckError, MultiHeadAttentionError

from worked_examples import build_chapter30_attention, chapter30_input


def test_attention_with_wide_heads():
    layer = MultiHeadAttention.new("a", 12, 2, 5, 10.0, SplitMix64(5))  # d_h = 6: three RoPE pairs a head
    x = np.random.default_rng(5).normal(size=(2, 4, 12))
    upstream = np.random.default_rng(6).normal(size=x.shape)
    report = gradcheck(lambda t: layer.forward(t, position_offset=1).output, x, list(layer.parameters()), upstream,
                       tolerance=8e-6)
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
    upstream = np.random.default_rng(0).normal(size=(1, 3, 4))
    gradcheck(lambda x: layer.forward(x).output, chapter30_input(), list(layer.parameters()), upstream)
    assert all(p.value is value for p, value in zip(layer.parameters(), before, strict=True))
    assert all(not p.value.flags.writeable for p in layer.parameters())


def test_gradcheck_bounds_the_coordinates_it_would_move_before_running():
    calls = []

    def forward(x):
        calls.append(1)
        return x

    with pytest.raises(GradcheckError, match="would move 100000 coordinates, more than the limit 20000"):
        gradcheck(forward, np.ones(10**5), [], np.ones(10**5))
    assert not calls


@pytest.mark.parametrize("failure", ["forward", "backward"])
def test_a_failing_gradcheck_leaves_the_gradients_as_they_were(failure):
    layer = build_chapter30_attention()
    x = chapter30_input()
    layer.forward(Tensor(x)).output.backward(np.ones((1, 3, 4)))     # gradients a learner is reading
    before = [p.grad for p in layer.parameters()]

    def forward(t):
        if failure == "forward":
            raise MultiHeadAttentionError("broken forward")
        return layer.forward(t).output

    upstream = np.ones((1, 3, 5)) if failure == "backward" else np.ones((1, 3, 4))   # the wrong shape
    with pytest.raises(GradcheckError):
        gradcheck(forward, x, list(layer.parameters()), upstream)
    assert all(p.grad is grad for p, grad in zip(layer.parameters(), before, strict=True))
