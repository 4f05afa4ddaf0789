"""The fused tape steps (``fused.py``): attention and SwiGLU as one step each give the numbers of their
staged ``forward`` bit for bit, forward and every gradient, and training with them is the same run."""

import numpy as np
import pytest

from llm_from_scratch import MultiHeadAttention, SplitMix64, SwiGlu, Tensor, fused, gradcheck
from llm_from_scratch.ch31 import depth_lab, training_lab
from llm_from_scratch.errors import MultiHeadAttentionError, SwiGluError, TensorError

RNG = np.random.default_rng(7)


def attention():
    return MultiHeadAttention.new("a", 8, 2, 6, 10.0, SplitMix64(3))       # d_h = 4: two RoPE pairs


def feed_forward():
    return SwiGlu.new("f", 8, 12, 8, SplitMix64(4))


LAYERS = {  # the staged forward, the fused step, the layer
    "attention": (lambda layer, x: layer.forward(x, position_offset=1).output,
                  lambda layer, x: layer.output(x, position_offset=1), attention),
    "swiglu": (lambda layer, x: layer.forward(x).output, lambda layer, x: layer.output(x), feed_forward),
}


def gradients(step, make, x, upstream, residual):
    """Output, input gradient and every weight's gradient of ``step`` (or ``x + step(x)``, whose input
    gradient adds four terms and so depends on their order), on a fresh layer."""
    layer, leaf = make(), Tensor(x, requires_grad=True)
    out = step(layer, leaf)
    out = leaf + out if residual else out
    out.backward(upstream)
    return [out.value, leaf.grad, *(p.grad for p in layer.parameters())]


def differences(a, b):
    """The largest |a - b| relative to max |a|, per array."""
    return [float(np.max(np.abs(u - v)) / np.max(np.abs(u))) for u, v in zip(a, b, strict=True)]


@pytest.mark.parametrize("residual", [False, True], ids=["alone", "residual"])
@pytest.mark.parametrize("name", LAYERS)
def test_the_fused_step_is_the_staged_forward_bit_for_bit(name, residual):
    staged, fused_step, make = LAYERS[name]
    x, upstream = RNG.normal(size=(3, 5, 8)), RNG.normal(size=(3, 5, 8))
    expected = gradients(staged, make, x, upstream, residual)
    got = gradients(fused_step, make, x, upstream, residual)
    assert max(differences(expected, got)) <= 1e-10
    assert all(np.array_equal(e, g) for e, g in zip(expected, got, strict=True))


def test_the_comparison_sees_a_gradient_off_by_one_part_in_a_billion(monkeypatch):
    """A fused VJP that is wrong by 1e-9 in one gradient fails the comparison above."""
    staged, fused_step, make = LAYERS["swiglu"]
    x, upstream = RNG.normal(size=(3, 5, 8)), RNG.normal(size=(3, 5, 8))
    expected = gradients(staged, make, x, upstream, False)
    original = fused._weight_grad
    monkeypatch.setattr(fused, "_weight_grad", lambda a, g: original(a, g) * (1 + 1e-9))
    got = gradients(fused_step, make, x, upstream, False)
    assert np.array_equal(expected[0], got[0]) and np.array_equal(expected[1], got[1])
    assert max(differences(expected, got)) > 1e-10


@pytest.mark.parametrize("name", LAYERS)
def test_the_fused_step_against_central_differences(name):
    _, fused_step, make = LAYERS[name]
    layer = make()
    x, upstream = RNG.normal(size=(2, 4, 8)), RNG.normal(size=(2, 4, 8))
    report = gradcheck(lambda t: fused_step(layer, t), x, list(layer.parameters()), upstream, tolerance=1e-7)
    assert report.passed, str(report)


def test_an_input_without_gradient_gets_none_and_the_weights_theirs():
    layer = attention()
    out = layer.output(Tensor(RNG.normal(size=(1, 3, 8))))
    out.backward()
    assert all(p.grad is not None for p in layer.parameters())


def test_a_block_part_is_one_tape_step():
    block = depth_lab.build_stack(layers=1, width=8, heads=2, tokens=4, seed=3)[0]
    parts, x = depth_lab.parts_of(block), Tensor(RNG.normal(size=(2, 4, 8)), requires_grad=True)
    for part in (parts.attention, parts.feed_forward):
        out = part(x)
        assert all(parent is x or parent in block.parameters() for parent in out.parents)


def staged_parts(block, norm="rms", ffn="swiglu"):
    """``parts_of`` as it was: attention and SwiGLU through their staged ``forward``."""
    return depth_lab.Parts(attention_norm=block.attention_norm.forward,
                           attention=lambda z: block.attention.forward(z).output,
                           feed_forward_norm=block.feed_forward_norm.forward,
                           feed_forward=lambda z: block.feed_forward.forward(z).output)


@pytest.mark.parametrize("variant", ["pre", "post"])
def test_training_with_fused_steps_is_the_same_run(variant, monkeypatch):
    settings = training_lab.Settings(variant=variant, layers=2, lr=0.03, steps=12, batch=4)
    fused_run = training_lab.train_stack(settings, probe=True)
    monkeypatch.setattr(depth_lab, "parts_of", staged_parts)
    staged_run = training_lab.train_stack(settings, probe=True)
    assert np.array_equal(fused_run.losses, staged_run.losses)
    assert np.array_equal(fused_run.top.moves, staged_run.top.moves)


@pytest.mark.parametrize("call, error, message", [
    (lambda: attention().output(np.ones((1, 2, 8))), MultiHeadAttentionError, "must be a Tensor"),
    (lambda: attention().output(Tensor(np.ones((1, 2, 6)))), MultiHeadAttentionError, "model width 8, got 6"),
    (lambda: attention().output(Tensor(np.ones((1, 4, 8))), 3), MultiHeadAttentionError, "exceeds capacity 6"),
    (lambda: feed_forward().output(Tensor(np.ones((1, 2, 6)))), SwiGluError, "input width 8, got 6"),
    (lambda: fused.swiglu(np.ones((1, 8)), *feed_forward().parameters()), TensorError, "needs Tensor operands"),
])
def test_the_fused_entries_check_their_input(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_the_fused_attention_step_checks_heads_and_rope_rows_before_computing():
    layer = attention()
    x = Tensor(np.ones((1, 3, 8)))
    rows = layer.rope.cos[:3], layer.rope.sin[:3]
    weights = (layer.w_q, layer.w_k, layer.w_v, layer.w_o)
    for heads in (0, 3, 8, 2.0, "2", None):           # 8 heads of width 1: RoPE needs even widths
        with pytest.raises(TensorError, match="heads must be an integer that splits width 8"):
            fused.causal_self_attention(x, *weights, heads, *rows)
    for cos, got in ((np.full((3, 2), np.nan), r"float64 \[3, 2\]"), (rows[0][:2], r"got float64 \[2, 2\]"),
                     (rows[0].astype(complex), "got complex128"), ([[1.0]], "got list")):
        with pytest.raises(TensorError, match=f"cos must be finite {got}" if got.startswith("float") else got):
            fused.causal_self_attention(x, *weights, layer.heads, cos, rows[1])
