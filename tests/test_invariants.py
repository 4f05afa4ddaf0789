"""Invariants the chapters list, checked on the worked examples and on fresh random layers."""

import numpy as np
import pytest

from llm_from_scratch import (
    DecoderBlock,
    DecoderBlockConfig,
    MultiHeadAttention,
    MultiHeadAttentionError,
    SplitMix64,
    Tensor,
    merge_heads,
    split_heads,
)

from worked_examples import build_chapter30_attention, build_chapter31_block, chapter30_input, chapter31_input


def test_split_then_merge_is_bitwise_identity():
    x = np.random.default_rng(1).normal(size=(2, 5, 12))
    heads = split_heads(Tensor(x), 3)
    assert heads.shape == (2, 3, 5, 4)
    np.testing.assert_array_equal(heads.value[:, 1], x[..., 4:8])  # head i owns columns i*d_h..(i+1)*d_h-1
    assert np.array_equal(merge_heads(heads).value, x)


def test_future_probabilities_are_exactly_zero(attention30):
    weights = attention30.forward(Tensor(chapter30_input())).attention_weights.value
    assert np.all(weights[..., np.triu_indices(3, 1)[0], np.triu_indices(3, 1)[1]] == 0.0)


def test_heads_are_isolated_until_the_output_projection():
    base = build_chapter30_attention().forward(Tensor(chapter30_input()))
    value = np.eye(4)
    value[:, 2:] += 0.5  # only head 1's value columns change
    from llm_from_scratch import Parameter
    layer = MultiHeadAttention.from_parameters(
        Parameter("q", np.eye(4)), Parameter("k", np.eye(4)), Parameter("v", value), Parameter("o", np.eye(4)),
        heads=2, max_positions=6, rope_base=100.0)
    other = layer.forward(Tensor(chapter30_input()))
    assert np.array_equal(other.head_outputs.value[:, 0], base.head_outputs.value[:, 0])
    assert not np.array_equal(other.head_outputs.value[:, 1], base.head_outputs.value[:, 1])


@pytest.mark.parametrize("build, x", [(build_chapter30_attention, chapter30_input),
                                      (build_chapter31_block, chapter31_input)])
def test_prefix_rows_bitwise_unchanged_when_only_the_last_token_changes(build, x):
    layer = build()
    before = layer.forward(Tensor(x())).output.value
    changed = x()
    changed[0, -1] = [0.3, -0.7, 1.1, 0.2]
    after = layer.forward(Tensor(changed)).output.value
    assert np.array_equal(after[0, :2], before[0, :2])
    assert not np.array_equal(after[0, 2], before[0, 2])


def test_common_position_offset_preserves_attention_weights(attention30):
    base = attention30.forward(Tensor(chapter30_input()), position_offset=0).attention_weights.value
    for offset in (1, 2, 3):
        shifted = attention30.forward(Tensor(chapter30_input()), position_offset=offset).attention_weights.value
        assert np.max(np.abs(shifted - base)) <= 1e-12


def test_empty_batch_runs_forward_and_backward(attention30):
    x = Tensor(np.zeros((0, 3, 4)), requires_grad=True)
    f = attention30.forward(x)
    assert f.attention_weights.shape == (0, 2, 3, 3) and f.output.shape == (0, 3, 4)
    f.output.backward(np.zeros((0, 3, 4)))
    assert x.grad.shape == (0, 3, 4)
    assert all(p.grad.shape == (4, 4) and not p.grad.any() for p in attention30.parameters())


def test_single_token_attends_only_to_itself(attention30):
    f = attention30.forward(Tensor(chapter30_input()[:, :1]))
    assert f.attention_weights.shape == (1, 2, 1, 1)
    assert np.all(f.attention_weights.value == 1.0)


@pytest.mark.parametrize("build, x", [(build_chapter30_attention, chapter30_input),
                                      (build_chapter31_block, chapter31_input)])
def test_bitwise_replay(build, x):
    runs = []
    for _ in range(2):
        layer = build()
        t = Tensor(x(), requires_grad=True)
        out = layer.forward(t).output
        out.backward(np.linspace(-1, 1, out.value.size).reshape(out.shape))
        runs.append([out.value, t.grad] + [p.grad for p in layer.parameters()])
    assert all(np.array_equal(a, b) for a, b in zip(*runs, strict=True))


def test_transactional_initialisation_leaves_the_generator_unchanged_after_an_error():
    rng = SplitMix64(7)
    with pytest.raises(MultiHeadAttentionError):
        MultiHeadAttention.new("a", 4, 3, 6, 100.0, rng)
    assert rng.state == 7
    layer = MultiHeadAttention.new("a", 4, 2, 6, 100.0, rng)
    assert rng.state != 7
    again = MultiHeadAttention.new("a", 4, 2, 6, 100.0, SplitMix64(7))
    assert all(np.array_equal(p.value, q.value) for p, q in zip(layer.parameters(), again.parameters(), strict=True))


def test_fresh_block_names_are_stable_and_distinct():
    block = DecoderBlock.new("block", DecoderBlockConfig(model_width=8, heads=2, feed_forward_width=6,
                                                         max_positions=8), SplitMix64(3))
    assert block.parameters().names == [
        "block.attention_norm.gain", "block.attention.query.weight", "block.attention.key.weight",
        "block.attention.value.weight", "block.attention.output.weight", "block.ffn_norm.gain",
        "block.ffn.gate.weight", "block.ffn.up.weight", "block.ffn.down.weight"]
    assert len({id(p) for p in block.parameters()}) == 9
    assert block.parameter_count() == 2 * 8 + 4 * 8 ** 2 + 3 * 8 * 6


@pytest.mark.parametrize("d_model, heads", [(4, 2), (8, 2), (12, 3), (16, 4)])
def test_attention_parameter_count_is_four_d_squared(d_model, heads):
    layer = MultiHeadAttention.new("a", d_model, heads, 4, 100.0, SplitMix64(1))
    assert layer.parameters().count() == layer.parameter_count() == 4 * d_model ** 2


def test_splitmix64_matches_the_reference_generator():
    # SplitMix64 (Steele, Lea, Flood 2014) from state 0: its first output is 0xe220a8397b1dcdaf
    assert int(SplitMix64(0).next_u64(1)[0]) == 0xE220A8397B1DCDAF
    assert [hex(int(v)) for v in SplitMix64(2024).next_u64(2)] == ["0x9f6d8fecf88eecd5", "0x18e430bb1511f2d2"]


def test_seeded_weights_are_the_first_editions_draws():
    """W_Q, W_K, W_V, W_O then gate, up, down, uniform on +-1/sqrt(fan_in), row-major: the sums of the
    weights that the first edition's DecoderBlock.new drew from SplitMix64(7), to the last bit."""
    block = DecoderBlock.new("b", DecoderBlockConfig(4, 2, 3, 6, 100.0, 1e-5), SplitMix64(7))
    sums = {p.name: float(p.value.sum()).hex() for p in block.parameters()}
    assert sums == {
        "b.attention_norm.gain": "0x1.0000000000000p+2", "b.attention.query.weight": "0x1.9b049363cf75cp-3",
        "b.attention.key.weight": "0x1.a4381a3b72a54p-1", "b.attention.value.weight": "-0x1.0ca281a5189c2p+0",
        "b.attention.output.weight": "-0x1.5f18f0be910bep-2", "b.ffn_norm.gain": "0x1.0000000000000p+2",
        "b.ffn.gate.weight": "0x1.530f810225e17p+0", "b.ffn.up.weight": "-0x1.0b98566c6ef15p+0",
        "b.ffn.down.weight": "0x1.f8651ba085dbfp+0",
    }
    assert block.attention.query.weight.value[0, :2].tolist() == [-0.11017025160872851, -0.4832117054718439]
