"""An error raised inside a stage of the multi-head forward pass names the stage, as the
seed's ``{input} RoPE: {source}`` does: the query path's RoPE says "query RoPE"."""

from __future__ import annotations

import numpy as np
import pytest

from llm_from_scratch import MultiHeadAttentionError, RopeError, RotaryEmbedding, Tensor
from llm_from_scratch.ch30 import example as ch30


class KeyOnlyFails(RotaryEmbedding):
    """RoPE that turns the first call (the queries) and refuses the second (the keys)."""

    calls = 0

    def rotate(self, x, position_offset=0):
        type(self).calls += 1
        if type(self).calls == 2:
            raise RopeError("key path refused on purpose")
        return super().rotate(x, position_offset)


def test_an_error_inside_the_query_rope_names_the_query_path():
    layer = ch30.build_attention()                    # heads of width 2
    layer.rope = RotaryEmbedding(4, 6, 100.0)         # a RoPE table for heads of width 4
    with pytest.raises(MultiHeadAttentionError) as raised:
        layer.forward(Tensor(ch30.example_input()))
    assert str(raised.value) == ("multi-head: query RoPE: RoPE input must have shape [..., tokens, 4], "
                                 "got [1, 2, 3, 2]")
    assert isinstance(raised.value.__cause__.__cause__, RopeError)


def test_an_error_inside_the_key_rope_names_the_key_path():
    layer = ch30.build_attention()
    layer.rope = KeyOnlyFails(2, 6, 100.0)
    with pytest.raises(MultiHeadAttentionError, match=r"^multi-head: key RoPE: key path refused on purpose$"):
        layer.forward(Tensor(ch30.example_input()))


def test_the_stage_names_change_no_number():
    layer = ch30.build_attention()
    forward = layer.forward(Tensor(ch30.example_input()))
    expected = ch30.build_attention().rope.rotate(forward.projected_query_heads)
    np.testing.assert_array_equal(forward.rotated_query_heads.value, expected.value)
