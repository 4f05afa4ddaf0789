"""Properties of the core that hold for every small configuration, checked with hypothesis.

Shapes drawn: batch 0..3 (where an empty batch is allowed), tokens 1..6, heads 1..4,
even head width 2..6, SwiGLU width 1..8, RMSNorm epsilon > 0 or exactly 0 (rows are
non-zero), RoPE base 2..10000 and a position offset 0..5 inside the capacity. Weights
come from SplitMix64 through the public ``new`` constructors; inputs from NumPy's
``default_rng`` seeded by a drawn integer. ``derandomize=True`` makes every run draw
the same examples, so the suite is deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from llm_from_scratch import (
    DecoderBlock,
    DecoderBlockConfig,
    MultiHeadAttention,
    RmsNorm,
    RotaryEmbedding,
    SplitMix64,
    Tensor,
    causal_scaled_dot_product_self_attention,
    gradcheck,
    merge_heads,
    split_heads,
)

FAST = settings(max_examples=80, deadline=None, derandomize=True)
SLOW = settings(max_examples=20, deadline=None, derandomize=True)  # gradcheck: 2 forwards per coordinate


@dataclass(frozen=True)
class Shape:
    batch: int
    tokens: int
    heads: int
    head_width: int
    feed_forward_width: int
    epsilon: float
    rope_base: float
    offset: int
    spare: int   # capacity left after the last position
    seed: int

    @property
    def model_width(self) -> int:
        return self.heads * self.head_width

    @property
    def max_positions(self) -> int:
        return self.offset + self.tokens + self.spare

    def config(self) -> DecoderBlockConfig:
        return DecoderBlockConfig(model_width=self.model_width, heads=self.heads,
                                  feed_forward_width=self.feed_forward_width, max_positions=self.max_positions,
                                  rope_base=self.rope_base, rms_epsilon=self.epsilon)

    def attention(self) -> MultiHeadAttention:
        return MultiHeadAttention.new("p.attention", self.model_width, self.heads, self.max_positions,
                                      self.rope_base, SplitMix64(self.seed))

    def block(self) -> DecoderBlock:
        return DecoderBlock.new("p", self.config(), SplitMix64(self.seed))

    def input(self, salt: int = 0) -> np.ndarray:
        """``[B, T, d_model]`` standard normal values: every row is non-zero."""
        rng = np.random.default_rng([self.seed, salt])
        return rng.standard_normal((self.batch, self.tokens, self.model_width))


EPSILONS = st.one_of(st.just(0.0), st.floats(1e-8, 1.0))

# Edges every run covers, whatever hypothesis draws: an empty batch with epsilon 0, the
# largest shape at the largest offset, one token and one head of width 2.
EMPTY_BATCH = Shape(batch=0, tokens=3, heads=2, head_width=2, feed_forward_width=3, epsilon=0.0,
                    rope_base=10000.0, offset=1, spare=0, seed=1)
LARGEST = Shape(batch=3, tokens=6, heads=4, head_width=6, feed_forward_width=8, epsilon=1e-5,
                rope_base=2.0, offset=5, spare=0, seed=2)
SMALLEST = Shape(batch=1, tokens=1, heads=1, head_width=2, feed_forward_width=1, epsilon=0.0,
                 rope_base=10000.0, offset=0, spare=0, seed=3)


def edges(test):
    return example(EMPTY_BATCH)(example(LARGEST)(example(SMALLEST)(test)))


@st.composite
def shapes(draw, min_batch=0, max_batch=3, min_tokens=1, max_tokens=6, max_heads=4, head_widths=(2, 4, 6),
           max_ffn=8, max_offset=5):
    return Shape(batch=draw(st.integers(min_batch, max_batch)), tokens=draw(st.integers(min_tokens, max_tokens)),
                 heads=draw(st.integers(1, max_heads)), head_width=draw(st.sampled_from(head_widths)),
                 feed_forward_width=draw(st.integers(1, max_ffn)), epsilon=draw(EPSILONS),
                 rope_base=draw(st.floats(2.0, 10000.0)), offset=draw(st.integers(0, max_offset)),
                 spare=draw(st.integers(0, 3)), seed=draw(st.integers(0, 2**32 - 1)))


# --- head layout ----------------------------------------------------------------------

@FAST
@given(shapes())
@edges
def test_split_and_merge_heads_are_bitwise_inverses(shape):
    x = shape.input()
    heads = split_heads(Tensor(x), shape.heads)                       # [B, h, T, d_h]
    assert heads.shape == (shape.batch, shape.heads, shape.tokens, shape.head_width)
    assert np.array_equal(merge_heads(heads).value, x)
    for i in range(shape.heads):  # head i owns columns i*d_h .. (i+1)*d_h - 1
        assert np.array_equal(heads.value[:, i], x[..., i * shape.head_width:(i + 1) * shape.head_width])
    y = np.random.default_rng(shape.seed).standard_normal(heads.shape)
    assert np.array_equal(split_heads(merge_heads(Tensor(y)), shape.heads).value, y)


# --- causal attention -----------------------------------------------------------------

def assert_causal_distribution(weights: np.ndarray) -> None:
    tokens = weights.shape[-1]
    future = np.triu(np.ones((tokens, tokens), dtype=bool), k=1)
    assert np.all(weights[..., future] == 0.0)        # exactly zero, not merely small
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, rtol=0, atol=1e-12)


@FAST
@given(shapes())
@edges
def test_multi_head_attention_rows_sum_to_one_and_the_future_is_exactly_zero(shape):
    weights = shape.attention().forward(Tensor(shape.input()), shape.offset).attention_weights.value
    assert weights.shape == (shape.batch, shape.heads, shape.tokens, shape.tokens)
    assert_causal_distribution(weights)


@FAST
@given(shapes(), st.sampled_from([1.0, 30.0, 1e3]))
def test_causal_attention_stays_a_distribution_for_large_scores(shape, magnitude):
    rng = np.random.default_rng(shape.seed)
    q, k, v = (Tensor(magnitude * rng.standard_normal((shape.batch, shape.heads, shape.tokens, shape.head_width)))
               for _ in range(3))
    attended = causal_scaled_dot_product_self_attention(q, k, v)
    assert_causal_distribution(attended.weights.value)
    assert np.all(np.isfinite(attended.output.value))


@FAST
@given(shapes(min_tokens=2), st.data())
def test_later_tokens_leave_earlier_attention_rows_bitwise_unchanged(shape, data):
    position = data.draw(st.integers(0, shape.tokens - 2), label="last unchanged position")
    layer = shape.attention()
    x = shape.input()
    changed = x.copy()
    changed[:, position + 1:] = shape.input(salt=1)[:, position + 1:]
    before = layer.forward(Tensor(x), shape.offset)
    after = layer.forward(Tensor(changed), shape.offset)
    kept = slice(0, position + 1)
    assert np.array_equal(before.output.value[:, kept], after.output.value[:, kept])
    assert np.array_equal(before.attention_weights.value[:, :, kept], after.attention_weights.value[:, :, kept])


@FAST
@given(shapes(min_tokens=2), st.data())
def test_later_tokens_leave_earlier_block_rows_bitwise_unchanged(shape, data):
    position = data.draw(st.integers(0, shape.tokens - 2), label="last unchanged position")
    block = shape.block()
    x = shape.input()
    changed = x.copy()
    changed[:, position + 1:] = shape.input(salt=1)[:, position + 1:]
    kept = slice(0, position + 1)
    before = block.forward(Tensor(x), shape.offset).output.value
    after = block.forward(Tensor(changed), shape.offset).output.value
    assert np.array_equal(before[:, kept], after[:, kept])


@FAST
@given(shapes(), st.data())
def test_a_common_position_shift_leaves_attention_weights_unchanged(shape, data):
    layer = shape.attention()
    last_offset = shape.max_positions - shape.tokens
    first, second = (data.draw(st.integers(0, last_offset), label=name) for name in ("offset", "other offset"))
    x = Tensor(shape.input())
    np.testing.assert_allclose(layer.forward(x, first).attention_weights.value,
                               layer.forward(x, second).attention_weights.value, rtol=0, atol=1e-12)


# --- RoPE ------------------------------------------------------------------------------

@st.composite
def rope_cases(draw):
    head_width = draw(st.sampled_from([2, 4, 6]))
    capacity = draw(st.integers(1, 32))
    base = draw(st.floats(2.0, 10000.0))
    return RotaryEmbedding(head_width, capacity, base), draw(st.integers(0, 2**32 - 1))


@FAST
@given(rope_cases(), st.integers(1, 6), st.data())
def test_rope_preserves_the_norm_of_every_pair(case, tokens, data):
    rope, seed = case
    tokens = min(tokens, rope.max_positions)
    offset = data.draw(st.integers(0, rope.max_positions - tokens), label="offset")
    x = np.random.default_rng(seed).standard_normal((2, tokens, rope.head_width))
    rotated = rope.rotate(Tensor(x), offset).value
    pair_norm = lambda a: np.hypot(a[..., 0::2], a[..., 1::2])  # noqa: E731
    np.testing.assert_allclose(pair_norm(rotated), pair_norm(x), rtol=1e-12, atol=0)


@FAST
@given(rope_cases(), st.data())
def test_rope_scores_depend_only_on_the_position_difference(case, data):
    rope, seed = case
    last = rope.max_positions - 1
    m = data.draw(st.integers(0, last), label="query position")
    n = data.draw(st.integers(0, last), label="key position")
    shift = data.draw(st.integers(-min(m, n), last - max(m, n)), label="common shift")
    q, k = np.random.default_rng(seed).standard_normal((2, 1, rope.head_width))

    def score(query_position, key_position):
        rotated_q = rope.rotate(Tensor(q), query_position).value[0]
        rotated_k = rope.rotate(Tensor(k), key_position).value[0]
        return float(rotated_q @ rotated_k)

    scale = float(np.linalg.norm(q) * np.linalg.norm(k))
    assert abs(score(m, n) - score(m + shift, n + shift)) <= 1e-12 * scale
    if m >= n:  # the same score as a query m - n tokens after a key at position 0
        assert abs(score(m, n) - score(m - n, 0)) <= 1e-12 * scale


# --- RMSNorm and the residual stream ---------------------------------------------------

@FAST
@given(shapes(), st.integers(1, 8))
def test_rmsnorm_rows_have_the_predicted_root_mean_square(shape, width):
    x = np.random.default_rng(shape.seed).standard_normal((shape.batch, shape.tokens, width))
    out = RmsNorm.new("n.gain", width, shape.epsilon).forward(Tensor(x)).value
    mean_square = np.mean(x * x, axis=-1)
    np.testing.assert_allclose(np.sqrt(np.mean(out * out, axis=-1)),
                               np.sqrt(mean_square / (mean_square + shape.epsilon)), rtol=1e-12, atol=0)


@FAST
@given(shapes())
@edges
def test_the_residual_stream_keeps_its_shape_through_the_block(shape):
    x = shape.input()
    forward = shape.block().forward(Tensor(x), shape.offset)
    stream = (shape.batch, shape.tokens, shape.model_width)
    a, f = forward.attention, forward.feed_forward  # the two branches' records
    for tensor in (forward.attention_norm, a.output, forward.after_attention,
                   forward.feed_forward_norm, f.output, forward.output):
        assert tensor.shape == stream
    assert a.attention_weights.shape == (shape.batch, shape.heads, shape.tokens, shape.tokens)
    assert f.hidden.shape == (shape.batch, shape.tokens, shape.feed_forward_width)
    # each residual add takes the unnormalised stream that entered its branch
    assert np.array_equal(forward.after_attention.value, x + a.output.value)
    assert np.array_equal(forward.output.value, forward.after_attention.value + f.output.value)


# --- gradients -------------------------------------------------------------------------

SMALL = dict(min_batch=1, max_batch=2, max_tokens=3, max_heads=2, head_widths=(2, 4), max_ffn=4, max_offset=2)


@SLOW
@given(shapes(**SMALL))
def test_gradcheck_passes_on_small_random_blocks(shape):
    block = shape.block()
    x = shape.input()
    upstream = np.random.default_rng([shape.seed, 2]).standard_normal(x.shape)
    report = gradcheck(lambda t: block.forward(t, shape.offset).output, x, list(block.parameters()), upstream,
                       delta=1e-6, tolerance=2e-5)
    assert report.total == x.size + block.parameters().count()
    assert report.passed, str(report)


@SLOW
@given(shapes(**SMALL))
def test_gradcheck_passes_on_small_random_attention(shape):
    layer = shape.attention()
    x = shape.input()
    upstream = np.random.default_rng([shape.seed, 3]).standard_normal(x.shape)
    report = gradcheck(lambda t: layer.forward(t, shape.offset).output, x, list(layer.parameters()), upstream,
                       delta=1e-6, tolerance=1e-5)
    assert report.passed, str(report)
