"""Invariants of the chapters that the property tests do not draw: head isolation, an empty batch's
backward pass, stable parameter names, one way to build each layer, and the seeded generator against
its reference values."""

import numpy as np
import pytest

from llm_from_scratch import DecoderBlock, DecoderBlockConfig, MultiHeadAttention, Parameter, RmsNorm, SwiGlu
from llm_from_scratch.parameter import Layer
from llm_from_scratch.rng import SplitMix64
from llm_from_scratch.tensor import Tensor

from worked_examples import build_chapter30_attention, chapter30_input


def test_heads_are_isolated_until_the_output_projection():
    base = build_chapter30_attention().forward(Tensor(chapter30_input()))
    value = np.eye(4)
    value[:, 2:] += 0.5  # only head 1's value columns change
    layer = MultiHeadAttention(
        Parameter("q", np.eye(4)), Parameter("k", np.eye(4)), Parameter("v", value), Parameter("o", np.eye(4)),
        heads=2, max_positions=6, rope_base=100.0)
    other = layer.forward(Tensor(chapter30_input()))
    assert np.array_equal(other.head_outputs.value[:, 0], base.head_outputs.value[:, 0])
    assert not np.array_equal(other.head_outputs.value[:, 1], base.head_outputs.value[:, 1])


def test_empty_batch_runs_forward_and_backward(attention30):
    x = Tensor(np.zeros((0, 3, 4)), requires_grad=True)
    f = attention30.forward(x)
    assert f.attention_weights.shape == (0, 2, 3, 3) and f.output.shape == (0, 3, 4)
    f.output.backward(np.zeros((0, 3, 4)))
    assert x.grad.shape == (0, 3, 4)
    assert all(p.grad.shape == (4, 4) and not p.grad.any() for p in attention30.parameters())


def test_fresh_block_names_are_stable_and_distinct():
    block = DecoderBlock.new("block", DecoderBlockConfig(model_width=8, heads=2, feed_forward_width=6,
                                                         max_positions=8), SplitMix64(3))
    assert block.parameters().names == [
        "block.attention_norm.gain", "block.attention.query.weight", "block.attention.key.weight",
        "block.attention.value.weight", "block.attention.output.weight", "block.ffn_norm.gain",
        "block.ffn.gate.weight", "block.ffn.up.weight", "block.ffn.down.weight"]
    assert len({id(p) for p in block.parameters()}) == 9
    assert block.parameters().count() == 2 * 8 + 4 * 8 ** 2 + 3 * 8 * 6


@pytest.mark.parametrize("layer", [Layer, MultiHeadAttention, RmsNorm, SwiGlu, DecoderBlock])
def test_a_layer_is_built_from_its_parts_by_the_class_and_fresh_only_by_new(layer):
    builders = {name for name, value in vars(layer).items() if isinstance(value, classmethod)}
    assert builders == (set() if layer is Layer else {"new"})


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
    assert block.attention.w_q.value[0, :2].tolist() == [-0.11017025160872851, -0.4832117054718439]
