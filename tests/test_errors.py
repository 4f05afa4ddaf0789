"""Every rejection the seed texts list, with its class and its message."""

import numpy as np
import pytest

from llm_from_scratch import (DecoderBlock, DecoderBlockConfig, DecoderBlockError, HeadLayoutError,
                              LlmFromScratchError, MultiHeadAttention, MultiHeadAttentionError, Parameter,
                              RmsNorm, SplitMix64, Tensor, merge_heads, split_heads)

from worked_examples import build_chapter30_attention, build_chapter31_block, chapter30_input, chapter31_input

RNG = SplitMix64(0)
X30 = chapter30_input()
X31 = chapter31_input()


def released(build, x):
    layer = build()
    tensor = Tensor(x)
    layer.forward(tensor).output.release()
    return lambda: layer.forward(tensor)


def wide_ffn_norm_block():
    good = build_chapter31_block()
    wide = RmsNorm.from_parameters(Parameter("block.ffn_norm.gain", np.ones(5)), epsilon=0.0)
    return DecoderBlock.from_parts(good.attention_norm, good.attention, wide, good.feed_forward)


CASES = [
    # chapter 30: configuration
    ("zero_model_width", lambda: MultiHeadAttention.new("a", 0, 2, 6, 100.0, RNG), MultiHeadAttentionError,
     "multi-head model width must be a positive integer, got 0"),
    ("zero_heads", lambda: MultiHeadAttention.new("a", 4, 0, 6, 100.0, RNG), MultiHeadAttentionError,
     "multi-head head count must be a positive integer, got 0"),
    ("nondivisible", lambda: MultiHeadAttention.new("a", 4, 3, 6, 100.0, RNG), MultiHeadAttentionError,
     "multi-head model width 4 must be divisible by head count 3"),
    ("odd_head_width", lambda: MultiHeadAttention.new("a", 4, 4, 6, 100.0, RNG), MultiHeadAttentionError,
     "multi-head per-head width must be even for RoPE, got 1"),
    ("bad_rope_base", lambda: MultiHeadAttention.new("a", 4, 2, 6, -1.0, RNG), MultiHeadAttentionError,
     "multi-head RoPE configuration: RoPE base must be a finite positive number, got -1.0"),
    ("zero_capacity", lambda: MultiHeadAttention.new("a", 4, 2, 0, 100.0, RNG), MultiHeadAttentionError,
     "RoPE max positions must be a positive integer, got 0"),
    ("output_width", lambda: MultiHeadAttention.from_parameters(
        Parameter("q", np.eye(4)), Parameter("k", np.eye(4)), Parameter("v", np.eye(4)),
        Parameter("o", np.ones((4, 5))), heads=2, max_positions=6, rope_base=100.0), MultiHeadAttentionError,
     "output projection width must equal model width 4, got 5"),
    ("qkv_width", lambda: MultiHeadAttention.from_parameters(
        Parameter("q", np.eye(4)), Parameter("k", np.ones((4, 6))), Parameter("v", np.eye(4)),
        Parameter("o", np.eye(4)), heads=2, max_positions=6, rope_base=100.0), MultiHeadAttentionError,
     "Q/K/V projected width must equal model width 4, got 6 for key"),
    ("duplicate_names", lambda: MultiHeadAttention.from_parameters(
        Parameter("w", np.eye(4)), Parameter("w", np.eye(4)), Parameter("v", np.eye(4)),
        Parameter("o", np.eye(4)), heads=2, max_positions=6, rope_base=100.0), MultiHeadAttentionError,
     "parameter name 'w' appears twice"),
    # chapter 30: input, in the order rank, width, tokens, positions, tape
    ("input_rank", lambda: build_chapter30_attention().forward(Tensor(X30[0])), MultiHeadAttentionError,
     "multi-head input must have rank three [batch, tokens, model_width], got rank 2"),
    ("input_width", lambda: build_chapter30_attention().forward(Tensor(np.zeros((1, 3, 5)))),
     MultiHeadAttentionError, "multi-head input final width must equal model width 4, got 5"),
    ("empty_tokens", lambda: build_chapter30_attention().forward(Tensor(np.zeros((1, 0, 4)))),
     MultiHeadAttentionError, "multi-head input needs at least one token so every causal row has a key"),
    ("negative_offset", lambda: build_chapter30_attention().forward(Tensor(X30), position_offset=-1),
     MultiHeadAttentionError, "multi-head position offset must be non-negative, got -1"),
    ("float_offset", lambda: build_chapter30_attention().forward(Tensor(X30), position_offset=1.0),
     MultiHeadAttentionError, "multi-head position offset must be an integer, got 1.0"),
    ("position_range", lambda: build_chapter30_attention().forward(Tensor(X30), position_offset=4),
     MultiHeadAttentionError, "multi-head position interval [4, 7) exceeds capacity 6"),
    ("released_input", released(build_chapter30_attention, X30), MultiHeadAttentionError,
     "input tensor of shape [1, 3, 4] belongs to a released tape"),
    ("numpy_input", lambda: build_chapter30_attention().forward(X30), MultiHeadAttentionError,
     "multi-head input must be a Tensor, got ndarray"),
    # head layout
    ("split_rank", lambda: split_heads(Tensor(np.zeros((3, 4))), 2), HeadLayoutError,
     "head split input must have rank three [batch, tokens, model_width], got rank 2"),
    ("split_divisible", lambda: split_heads(Tensor(np.zeros((1, 3, 4))), 3), HeadLayoutError,
     "model width 4 must be divisible by head count 3"),
    ("merge_rank", lambda: merge_heads(Tensor(np.zeros((1, 3, 4)))), HeadLayoutError,
     "head merge input must have rank four [batch, heads, tokens, head_width], got rank 3"),
    # chapter 31
    ("configuration", lambda: DecoderBlock.new("b", DecoderBlockConfig(4, 3, 4, 6, 100.0, 1e-5), RNG),
     DecoderBlockError, "causal multi-head attention: multi-head model width 4 must be divisible by head count 3"),
    ("negative_epsilon", lambda: DecoderBlock.new("b", DecoderBlockConfig(4, 2, 4, 6, 100.0, -1e-5), RNG),
     DecoderBlockError, "attention RMSNorm: RMSNorm epsilon must be a finite number >= 0, got -1e-05"),
    ("component_width", wide_ffn_norm_block, DecoderBlockError,
     "decoder-block feed-forward RMSNorm width must be 4, got 5"),
    ("block_input_rank", lambda: build_chapter31_block().forward(Tensor(X31[0])), DecoderBlockError,
     "decoder-block input must have rank three [batch, tokens, model_width], got rank 2"),
    ("block_input_width", lambda: build_chapter31_block().forward(Tensor(np.ones((1, 3, 5)))), DecoderBlockError,
     "decoder-block input final width must equal model width 4, got 5"),
    ("block_empty_tokens", lambda: build_chapter31_block().forward(Tensor(np.zeros((1, 0, 4)))),
     DecoderBlockError, "decoder-block input needs at least one token"),
    ("block_position_range", lambda: build_chapter31_block().forward(Tensor(X31), position_offset=4),
     DecoderBlockError, "decoder-block position interval [4, 7) exceeds capacity 6"),
    ("block_released_input", released(build_chapter31_block, X31), DecoderBlockError,
     "belongs to a released tape"),
    ("zero_row_with_zero_epsilon", lambda: build_chapter31_block().forward(Tensor(np.zeros((1, 3, 4)))),
     DecoderBlockError, "attention RMSNorm: RMSNorm with epsilon 0 cannot scale an all-zero row, got 3 such rows"),
]


@pytest.mark.parametrize("key, attempt, error, message", CASES, ids=[case[0] for case in CASES])
def test_rejection_has_its_typed_error_and_message(key, attempt, error, message):
    with pytest.raises(error) as caught:
        attempt()
    assert isinstance(caught.value, LlmFromScratchError)
    assert message in str(caught.value)


def test_wrapped_errors_keep_the_component_error_chained():
    with pytest.raises(DecoderBlockError) as caught:
        DecoderBlock.new("b", DecoderBlockConfig(4, 3, 4, 6, 100.0, 1e-5), SplitMix64(1))
    assert isinstance(caught.value.__cause__, MultiHeadAttentionError)


def test_a_released_input_with_a_bad_interval_reports_the_interval():
    layer = build_chapter30_attention()
    tensor = Tensor(X30)
    layer.forward(tensor).output.release()
    with pytest.raises(MultiHeadAttentionError, match=r"position interval \[4, 7\) exceeds capacity 6"):
        layer.forward(tensor, position_offset=4)
