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


# -- the seed texts' numbers, six decimals, as their diagram tables print them ----------------------------------
# Keyed like the learner report's lines; each array is the batch row of a [1, ...] stage.

_HEAD_ROWS_30 = [[[1, 0], [0.540302, -0.841471], [-0.416147, -0.909297]], [[1, 0], [0, 1], [1, 1]]]   # [h, T, d_h]
_ROTATED_30 = [[[1, 0], [1, 0], [1, 0]], [[1, 0], [-0.841471, 0.540302], [-1.325444, 0.493151]]]      # [h, T, d_h]
SEED30 = {
    "input": [[1, 0, 1, 0], [0.540302, -0.841471, 0, 1], [-0.416147, -0.909297, 1, 1]],                # [T, d_model]
    "projected_query_heads": _HEAD_ROWS_30, "projected_key_heads": _HEAD_ROWS_30,
    "projected_value_heads": _HEAD_ROWS_30,                                      # identity W_Q = W_K = W_V
    "rotated_query_heads": _ROTATED_30, "rotated_key_heads": _ROTATED_30,
    "attention_weights": [[[1, 0, 0], [0.5, 0.5, 0], [0.333333, 0.333333, 0.333333]],
                          [[1, 0, 0], [0.213809, 0.786191, 0], [0.054696, 0.370956, 0.574348]]],      # [h, T, T]
    "head_outputs": [[[1, 0], [0.770151, -0.420735], [0.374718, -0.583589]],
                     [[1, 0], [0.213809, 0.786191], [0.629044, 0.945304]]],                           # [h, T, d_h]
    "merged": [[1, 0, 1, 0], [0.770151, -0.420735, 0.213809, 0.786191], [0.374718, -0.583589, 0.629044, 0.945304]],
    "output_weight": [[0, 0, 1, 0], [0, 0, 0, 1], [1, 0, 0, 0], [0, 1, 0, 0]],       # [a, b, c, d] -> [c, d, a, b]
    "output": [[1, 0, 1, 0], [0.213809, 0.786191, 0.770151, -0.420735], [0.629044, 0.945304, 0.374718, -0.583589]],
}
SEED30_HEAD_1_TOKEN_1_SCORES = [-0.595010, 0.707107]   # head 1, query 1 against keys 0 and 1, before softmax

SEED31 = {
    "input": [[2, 0, 0, 0], [0, 2, 0, 0], [0, 0, 2, 0]],                                              # [T, d_model]
    "attention_norm": [[2, 0, 0, 0], [0, 2, 0, 0], [0, 0, 2, 0]],
    "attention_branch": [[2, 0, 0, 0], [0.010881, 1.989119, 0, 0], [0.666667, 0.666667, 1.788570, 0]],
    "after_attention": [[4, 0, 0, 0], [0.010881, 3.989119, 0, 0], [0.666667, 0.666667, 3.788570, 0]],
    "feed_forward_norm": [[2, 0, 0, 0], [0.005455, 1.999993, 0, 0], [0.341520, 0.341520, 1.940806, 0]],
    "feed_forward_branch": [[3.523188, 0, 0, 0], [0.000015, 3.523159, 0, 0], [0.068180, 0.068180, 3.293781, 0]],
    "output": [[7.523188, 0, 0, 0], [0.010896, 7.512278, 0, 0], [0.734847, 0.734847, 7.082351, 0]],
    "attention_weights": [[[1, 0, 0], [0.005440, 0.994560, 0], [0.333333, 0.333333, 0.333333]],
                          [[1, 0, 0], [0.5, 0.5, 0], [0.052857, 0.052857, 0.894285]]],                # [h, T, T]
    "probe_logits": [[7.523188, 0, -7.523188], [0.010896, 7.512278, -7.523174], [7.817198, 7.817198, -1.469694]],
}
SEED31_PROBE = [[1, 0, -1], [0, 1, -1], [1, 1, 0], [0, 0, 0]]        # [d_model, 3]: reproduces the nine logits
SEED31_POST_LN_TOKEN_1 = [-0.573144, 1.732042, -0.579449, -0.579449]   # LayerNorm(x + MHA(x)), eps 1e-5, token 1
