"""The two worked examples, built through the public API (shared by the unit tests)."""

import numpy as np

from llm_from_scratch import DecoderBlock, MultiHeadAttention, Parameter, RmsNorm, SwiGlu


def swap_output_weight():
    w = np.zeros((4, 4))
    w[0, 2] = w[1, 3] = w[2, 0] = w[3, 1] = 1.0
    return w


def chapter30_input():
    c1, s1, c2, s2 = np.cos(1), np.sin(1), np.cos(2), np.sin(2)
    return np.array([[[1, 0, 1, 0], [c1, -s1, 0, 1], [c2, -s2, 1, 1]]], dtype=np.float64)


def build_chapter30_attention(prefix="attention", output=None):
    identity = np.eye(4)
    return MultiHeadAttention(
        Parameter(f"{prefix}.query.weight", identity), Parameter(f"{prefix}.key.weight", identity),
        Parameter(f"{prefix}.value.weight", identity),
        Parameter(f"{prefix}.output.weight", swap_output_weight() if output is None else output),
        heads=2, max_positions=6, rope_base=100.0)


def build_chapter31_block(epsilon=0.0):
    identity = np.eye(4)
    attention = MultiHeadAttention(
        Parameter("block.attention.query.weight", identity), Parameter("block.attention.key.weight", identity),
        Parameter("block.attention.value.weight", identity), Parameter("block.attention.output.weight", identity),
        heads=2, max_positions=6, rope_base=100.0)
    return DecoderBlock(
        RmsNorm(Parameter("block.attention_norm.gain", np.ones(4)), epsilon=epsilon),
        attention,
        RmsNorm(Parameter("block.ffn_norm.gain", np.ones(4)), epsilon=epsilon),
        SwiGlu(Parameter("block.ffn.gate.weight", identity), Parameter("block.ffn.up.weight", identity),
                               Parameter("block.ffn.down.weight", identity)))


def chapter31_input():
    return 2.0 * np.eye(4)[:3][None]
