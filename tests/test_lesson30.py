"""The lesson's experiments (ch30/lesson.py) against plain NumPy written here."""

from __future__ import annotations

import numpy as np
import pytest

from llm_from_scratch import MultiHeadAttention, SplitMix64, Tensor
from llm_from_scratch.ch30 import example as ch30
from llm_from_scratch.ch30 import lesson as lesson30


def numpy_rope(x: np.ndarray, positions: np.ndarray, base: float) -> np.ndarray:
    """Rotate pairs (2i, 2i+1) of ``x[..., T, d]`` by ``position * base ** (-2i / d)``."""
    width = x.shape[-1]
    angles = positions[:, None] * base ** (-np.arange(0, width, 2) / width)   # [T, d/2]
    cos, sin = np.cos(angles), np.sin(angles)
    out = np.empty_like(x)
    out[..., 0::2] = x[..., 0::2] * cos - x[..., 1::2] * sin
    out[..., 1::2] = x[..., 0::2] * sin + x[..., 1::2] * cos
    return out


def numpy_attention_weights(x: np.ndarray, wq: np.ndarray, wk: np.ndarray, heads: int,
                            base: float) -> np.ndarray:
    """``x: [T, d]`` -> causal weights ``[h, T, T]`` computed head by head with loops."""
    tokens, width = x.shape
    d_h = width // heads
    positions = np.arange(tokens, dtype=float)
    out = np.zeros((heads, tokens, tokens))
    for head in range(heads):
        cols = slice(head * d_h, (head + 1) * d_h)
        q = numpy_rope((x @ wq)[:, cols], positions, base)
        k = numpy_rope((x @ wk)[:, cols], positions, base)
        for m in range(tokens):
            scores = np.array([q[m] @ k[n] for n in range(m + 1)]) / np.sqrt(d_h)
            e = np.exp(scores - scores.max())
            out[head, m, : m + 1] = e / e.sum()
    return out


# -- two heads, two jobs ----------------------------------------------------------------

@pytest.mark.parametrize("heads", [1, 2])
def test_two_job_weights_match_a_loop_over_heads_and_rows(heads):
    x = lesson30.two_job_input()
    w = lesson30.two_job_weights()
    got = lesson30.two_job_layer(heads).forward(Tensor(x)).attention_weights.value[0]
    want = numpy_attention_weights(x[0], w["query"], w["key"], heads, lesson30.JOB_BASE)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_head_0_reads_the_previous_token_and_head_1_the_first():
    forward = lesson30.two_job_layer(2).forward(Tensor(lesson30.two_job_input()))
    weights = forward.attention_weights.value[0]                  # [2, T, T]
    tokens = lesson30.JOB_TOKENS
    assert np.all(weights[0, np.arange(1, tokens), np.arange(tokens - 1)] > 0.99)
    assert np.all(weights[1, :, 0] > 0.999)
    content = 10.0 * np.arange(1, tokens + 1)
    out = forward.output.value[0]                                  # W_O = I
    np.testing.assert_allclose(out[1:, 0], content[:-1], atol=0.1)   # head 0 copies t - 1
    np.testing.assert_allclose(out[:, 4], content[0], atol=0.01)      # head 1 copies token 0


def test_one_full_width_head_does_neither_job():
    weights = lesson30.two_job_layer(1).forward(Tensor(lesson30.two_job_input())).attention_weights.value[0, 0]
    tokens = lesson30.JOB_TOKENS
    previous = weights[np.arange(2, tokens), np.arange(1, tokens - 1)]
    first = weights[2:, 0]
    # from query 2 on, previous token and first token differ: one row cannot put ~1 on both
    assert np.all(previous + first <= 1.0 + 1e-12)
    assert np.any(previous < 0.9) and np.any(first < 0.9)


def test_matched_full_width_head_scores_are_the_sum_of_the_two_heads():
    """Same scale and pair frequencies as the two heads: the wide head's score
    is exactly s^(0) + s^(1), and one table still cannot do both jobs."""
    x = Tensor(lesson30.two_job_input())
    two = lesson30.two_job_layer(2).forward(x)
    wide = lesson30.two_job_layer(1, matched=True).forward(x)
    assert wide.attention_weights.shape == (1, 1, 6, 6)

    def scores(forward):
        return (forward.rotated_query_heads.value @ np.swapaxes(forward.rotated_key_heads.value, -1, -2)
                / np.sqrt(forward.rotated_query_heads.shape[-1]))[0]

    visible = np.tril(np.ones((6, 6), bool))
    summed = scores(two)[0] + scores(two)[1]
    np.testing.assert_allclose(scores(wide)[0][visible], summed[visible], rtol=0, atol=1e-12)
    weights = wide.attention_weights.value[0, 0]
    assert weights[2, 0] > 0.99 and weights[3, 2] > 0.98     # row 2 takes the first token, row 3 the previous
    np.testing.assert_allclose(wide.output.value[0, 3, 0], 30.0, atol=0.2)   # the first token (10) is lost


# -- why sqrt(d_h) ------------------------------------------------------------------------

def test_score_spread_matches_numpy_and_grows_like_sqrt_width():
    widths = (2, 8, 32, 128)
    spread = lesson30.score_spread(widths, tokens=8, samples=500, seed=3)
    rng = np.random.default_rng(3)
    for i, width in enumerate(widths):
        q = rng.standard_normal((500, 1, width))
        k = rng.standard_normal((500, 8, width))
        raw = np.einsum("sqd,skd->sk", q, k)
        top = np.exp(raw - raw.max(axis=1, keepdims=True))
        top = (top / top.sum(axis=1, keepdims=True)).max(axis=1).mean()
        assert spread.raw_std[i] == pytest.approx(raw.std(), rel=1e-12)
        assert spread.scaled_std[i] == pytest.approx(raw.std() / np.sqrt(width), rel=1e-12)
        assert spread.raw_top[i] == pytest.approx(top, rel=1e-12)
        assert spread.raw_std[i] == pytest.approx(np.sqrt(width), rel=0.1)
    assert np.all(np.diff(spread.raw_top) > 0)                       # raw softmax saturates
    assert np.ptp(spread.scaled_top) < 0.1                           # scaled one does not


def test_softmax_jacobian_norm_is_the_norm_of_the_numeric_jacobian():
    rng = np.random.default_rng(5)
    scores = 4.0 * rng.standard_normal((3, 6))
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    for row, p in zip(scores, weights, strict=True):
        step = 1e-6
        numeric = np.empty((6, 6))
        for j in range(6):                     # central differences, column j
            plus, minus = row.copy(), row.copy()
            plus[j] += step
            minus[j] -= step
            soft = [np.exp(s - s.max()) / np.exp(s - s.max()).sum() for s in (plus, minus)]
            numeric[:, j] = (soft[0] - soft[1]) / (2 * step)
        want = np.linalg.norm(numeric)
        assert lesson30.softmax_jacobian_norm(p) == pytest.approx(want, rel=1e-6)
    assert lesson30.softmax_jacobian_norm(np.eye(4)[1]) == 0.0   # one-hot: no gradient
    even = np.full(4, 0.25)                    # J = I/4 - 1/16: ||J||^2 = 3/16
    assert lesson30.softmax_jacobian_norm(even) == pytest.approx(np.sqrt(3 / 16), rel=1e-12)


def test_unscaled_wide_heads_pass_almost_no_gradient_to_the_scores():
    spread = lesson30.score_spread((4, 64, 256), samples=2000)   # one sample; the page: jacobian_spread
    assert spread.raw_jacobian[-1] < 0.01 < 0.3 < spread.scaled_jacobian[-1]
    assert np.all(np.diff(spread.raw_jacobian) < 0)               # shrinks with d_h
    assert np.ptp(spread.scaled_jacobian) < 0.02                   # scaled: steady


def test_jacobian_spread_draws_the_rows_of_score_spread():
    """Rows drawn as |q| z have the distribution of q . k: over 20 samples the medians
    agree with the full experiment's, and the ratio at d_h = 256 is in the hundreds."""
    spread = lesson30.jacobian_spread()                      # as the page
    assert spread.raw.shape == spread.scaled.shape == (20, 3)
    full = np.array([lesson30.score_spread((4, 64), samples=2000, seed=seed).raw_jacobian
                     for seed in range(100, 108)])
    np.testing.assert_allclose(np.median(spread.raw[:, :2], axis=0), np.median(full, axis=0), rtol=0.1)
    ratio = spread.scaled / spread.raw
    assert 0.9 < ratio[:, 0].min() <= ratio[:, 0].max() < 1.0  # d_h = 4: about equal, raw a little larger
    assert 100 < ratio[:, 2].min() <= ratio[:, 2].max() < 500   # d_h = 256: hundreds, by sample
    assert np.ptp(spread.scaled) < 0.02                            # scaled: steady at every width
    again = lesson30.jacobian_spread()
    assert np.array_equal(again.raw, spread.raw)                   # deterministic


def test_the_divisor_gains_much_less_gradient_to_q_dot_k_than_to_the_softmax_input():
    """The page's column «по q·k»: with the divisor, s = q . k / sqrt(d_h), so the gradient
    reaching q . k (and W_Q, W_K) carries an extra 1 / sqrt(d_h). The gain over no divisor is
    then 13.2 at d_h = 256 (not 211), and below 1 at d_h = 64 and 4."""
    spread = lesson30.jacobian_spread()                      # as the page
    per_q_dot_k = spread.scaled / spread.raw / np.sqrt(spread.widths)
    medians = [float(f"{m:.3g}") for m in np.median(per_q_dot_k, axis=0)]
    assert list(spread.widths) == [4, 64, 256]
    assert medians == [0.486, 0.739, 13.2]


def test_without_the_divisor_a_third_to_most_rows_are_saturated_and_none_with_it():
    """The page's last two columns: the rows of jacobian_spread with ||J||_F < 0.01. Without
    the divisor 32 % (d_h = 64) and 60 % (d_h = 256) by the median over samples, with it none;
    the mean over rows (the page's prose) reverses the median's gain at d_h = 256."""
    sat = lesson30.saturated_rows()                          # as the page
    assert sat.raw.shape == sat.scaled.shape == (20, 3)
    assert [round(100 * float(m)) for m in np.median(sat.raw, axis=0)] == [0, 32, 60]
    assert np.all(sat.scaled == 0)
    assert np.all(np.diff(sat.raw, axis=1) > 0)                    # grows with d_h in every sample
    norms = lesson30._spread_norms("test", (4, 64, 256), 8, 2000, 20, 30)
    share = [np.mean(raw < 0.01, axis=1) for _, raw, _ in norms]    # counted by hand
    np.testing.assert_array_equal(np.stack(share, axis=1), sat.raw)
    mean_gain = [float(f"{s.mean() / r.mean() / np.sqrt(w):.2g}") for w, r, s in norms]
    assert mean_gain == [0.53, 0.30, 0.28]
    loose = lesson30.saturated_rows(below=0.1)
    assert np.all(loose.raw >= sat.raw) and np.any(loose.raw > sat.raw)
    with pytest.raises(lesson30.CausalAttentionError):
        lesson30.saturated_rows(below=0)


# -- RoPE -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("width", "base"), [(2, 100.0), (4, 100.0), (8, 10_000.0)])
def test_pair_angles_and_arrows(width, base):
    steps = base ** (-np.arange(0, width, 2) / width)
    np.testing.assert_allclose(lesson30.pair_angles(width, base), steps, rtol=1e-12)
    arrows = lesson30.pair_arrows(width, base, 6)                   # [P, d/2, 2]
    angles = np.arange(6)[:, None] * steps
    np.testing.assert_allclose(arrows, np.stack([np.cos(angles), np.sin(angles)], axis=-1), atol=1e-12)


def test_rope_base_does_not_matter_for_one_pair():
    np.testing.assert_array_equal(lesson30.pair_arrows(2, 100.0, 6), lesson30.pair_arrows(2, 10_000.0, 6))
    assert not np.allclose(lesson30.pair_arrows(4, 100.0, 6), lesson30.pair_arrows(4, 10_000.0, 6))


def test_relative_scores_depend_only_on_the_offset():
    q, k = np.array([1.0, 0.5, 0.3, -0.2]), np.array([0.4, 1.0, 0.2, 0.5])
    scores = lesson30.relative_scores(q, k, 100.0, 6)
    positions = np.arange(6.0)
    want = numpy_rope(np.tile(q, (6, 1)), positions, 100.0) @ numpy_rope(np.tile(k, (6, 1)), positions, 100.0).T
    np.testing.assert_allclose(scores, want, atol=1e-12)
    np.testing.assert_allclose(scores[1:, 1:], scores[:-1, :-1], atol=1e-12)   # constant diagonals


# -- W_O ----------------------------------------------------------------------------------------

def test_symbolic_output_of_the_two_output_matrices():
    assert lesson30.symbolic_output(ch30.swap_output_weight()) == ["c", "d", "a", "b"]
    mixing = lesson30.mixing_output_weight()
    assert lesson30.symbolic_output(mixing) == ["a", "b", "a + c", "d"]
    a, b, c, d = 2.0, 3.0, 5.0, 7.0
    np.testing.assert_array_equal(np.array([a, b, c, d]) @ mixing, [a, b, a + c, d])
    assert lesson30.symbolic_output(2 * np.eye(2), "ab") == ["2·a", "2·b"]


# -- the example with other weights ----------------------------------------------------------

def test_example_layer_is_the_chapter_layer_unless_told_otherwise():
    x = Tensor(ch30.example_input())
    same = lesson30.example_layer().forward(x).output.value
    np.testing.assert_array_equal(same, ch30.build_attention().forward(x).output.value)
    other_base = lesson30.example_layer(rope_base=10_000.0).forward(x).attention_weights.value
    np.testing.assert_array_equal(other_base, ch30.build_attention().forward(x).attention_weights.value)


@pytest.mark.parametrize("output", ["swap", "mixing"])
@pytest.mark.parametrize("head", [0, 1])
def test_changed_output_columns_follow_the_rows_of_w_o(output, head):
    weight = ch30.swap_output_weight() if output == "swap" else lesson30.mixing_output_weight()
    rows = weight[2 * head: 2 * head + 2]                          # what the head's coordinates feed
    want = [j for j in range(4) if np.any(rows[:, j] != 0)]
    assert lesson30.changed_output_columns(weight, head) == want


# -- packed = h separate heads, and the stages of one sequence ------------------------------

@pytest.mark.parametrize(("heads", "offset"), [(1, 0), (2, 0), (2, 1), (4, 0)])
def test_packed_matrices_equal_separate_heads(heads, offset):
    """Attention per head on x @ W_Q^(i), x @ W_K^(i), x @ W_V^(i), concatenated, times W_O."""
    layer = MultiHeadAttention.new("packed", model_width=8, heads=heads, max_positions=6, rope_base=100.0,
                                   rng=SplitMix64(7 + heads))
    x = np.random.default_rng(heads).standard_normal((2, 4, 8))
    w_q, w_k, w_v, w_o = (p.value for p in layer.parameters())
    d_h, positions = 8 // heads, offset + np.arange(4.0)
    outputs = []
    for head in range(heads):
        cols = slice(head * d_h, (head + 1) * d_h)
        q, k = numpy_rope(x @ w_q[:, cols], positions, 100.0), numpy_rope(x @ w_k[:, cols], positions, 100.0)
        scores = np.where(np.tril(np.ones((4, 4), bool)), q @ np.swapaxes(k, 1, 2) / np.sqrt(d_h), -np.inf)
        table = np.exp(scores - scores.max(axis=-1, keepdims=True))
        outputs.append(table / table.sum(axis=-1, keepdims=True) @ (x @ w_v[:, cols]))
    separate = np.concatenate(outputs, axis=-1) @ w_o
    packed = layer.forward(Tensor(x), position_offset=offset).output.value
    np.testing.assert_allclose(packed, separate, rtol=0, atol=1e-12)


def test_stage_values_are_one_sequence_of_every_stage():
    forward = ch30.build_attention().forward(Tensor(np.concatenate([ch30.example_input(), ch30.perturbed_input()])))
    for sequence in (0, 1):
        stages = lesson30.stage_values(forward, sequence)
        assert list(stages) == list(ch30.STAGES)
        for name, value in stages.items():
            np.testing.assert_array_equal(value, getattr(forward, name).value[sequence])
