"""Every public entry point fed bad input: one table row per case.

A row either documents an accepted input (with a check of what came out) or names the
exact typed error and a piece of its message that shows the value received. Each row runs
with warnings turned into errors and stderr captured: anything else that escapes - a raw
``ValueError``, ``TypeError``, ``OverflowError``, a NumPy warning, a typed error of another
class, or a word on stderr - fails it. The rows are grouped by class of input, one section a class.
"""

from __future__ import annotations

import dataclasses
import decimal
import fractions
import os
import subprocess
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from llm_from_scratch import (
    CausalAttentionError,
    DecoderBlock,
    DecoderBlockConfig,
    DecoderBlockError,
    GradcheckError,
    HeadLayoutError,
    InitializationError,
    LlmFromScratchError,
    MultiHeadAttention,
    MultiHeadAttentionError,
    Parameter,
    ParameterError,
    ParameterList,
    RmsNorm,
    RmsNormError,
    RopeError,
    RotaryEmbedding,
    SplitMix64,
    SwiGlu,
    SwiGluError,
    Tensor,
    TensorError,
    causal_scaled_dot_product_self_attention,
    errors,
    gradcheck,
    merge_heads,
    split_heads,
)
from llm_from_scratch.book.optim import Adam
from llm_from_scratch.book.training import cross_entropy, fit, train
from llm_from_scratch.ch30 import figures as plots30
from llm_from_scratch.ch30 import learned_heads
from llm_from_scratch.ch30 import lesson as lesson30
from llm_from_scratch.ch31 import depth_lab, gradient_gain, training_lab
from llm_from_scratch.ch31 import figures as plots31
from llm_from_scratch.checks import MAX_SIZE, checked
from llm_from_scratch.errors import DepthLabError, LearnedHeadsError, OptimizerError, TrainingError
from llm_from_scratch.rng import GAMMA, MASK, uniform_weight
from llm_from_scratch.tensor import add, matmul, scale

D, H, T, FF, P = 4, 2, 3, 3, 6   # model width, heads, tokens, SwiGLU width, RoPE capacity


@dataclass(frozen=True)
class Row:
    id: str
    attempt: Callable[[], object]
    error: type | None = None          # None: the input is accepted
    message: str = ""                  # a substring of the error message
    check: Callable[[object], bool] | None = None  # for an accepted input: what came out


def ok(id, attempt, check=None):
    return Row(id, attempt, None, "", check)


def bad(id, attempt, error, message):
    return Row(id, attempt, error, message)


# --- builders: every row builds its own objects ----------------------------------------

def x(*shape, value=1.0):
    return Tensor(np.full(shape, value))


def leaf(*shape):
    return Tensor(np.ones(shape), requires_grad=True)


def released(*shape):
    """A Tensor whose tape was released: its value is kept, layers refuse it."""
    tensor = Tensor(np.ones(shape))
    add(tensor, Parameter("helper.zero", 0.0)).release()
    assert tensor.released
    return tensor


def eye(name, n=D):
    return Parameter(name, np.eye(n))


def attention(**overrides):
    arguments = dict(query_weight=eye("a.query.weight"), key_weight=eye("a.key.weight"),
                     value_weight=eye("a.value.weight"), output_weight=eye("a.output.weight"),
                     heads=H, max_positions=P, rope_base=100.0)
    arguments.update(overrides)
    return MultiHeadAttention(**arguments)


def attention_new(**overrides):
    arguments = dict(prefix="a", model_width=D, heads=H, max_positions=P, rope_base=100.0, rng=SplitMix64(1))
    arguments.update(overrides)
    return MultiHeadAttention.new(**arguments)


def swiglu(gate=None, up=None, down=None):
    return SwiGlu(gate or Parameter("f.gate.weight", np.ones((D, FF))),
                  up or Parameter("f.up.weight", np.ones((D, FF))),
                  down or Parameter("f.down.weight", np.ones((FF, D))))


def swiglu_new(**overrides):
    arguments = dict(prefix="f", input_width=D, hidden_width=FF, output_width=D, rng=SplitMix64(1))
    arguments.update(overrides)
    return SwiGlu.new(**arguments)


def norm(name="n.gain", width=D, epsilon=1e-5):
    return RmsNorm(Parameter(name, np.ones(width)), epsilon)


def parts(**overrides):
    arguments = dict(attention_norm=norm("b.attention_norm.gain"), attention=attention(),
                     feed_forward_norm=norm("b.ffn_norm.gain"), feed_forward=swiglu())
    arguments.update(overrides)
    return DecoderBlock(**arguments)


def zero_after_attention():
    """A block whose attention branch writes -x: x' = x + A = 0 exactly for a row of ones."""
    return parts(attention_norm=norm("b.attention_norm.gain", epsilon=0.0),
                 attention=attention(output_weight=Parameter("a.output.weight", -np.eye(D))),
                 feed_forward_norm=norm("b.ffn_norm.gain", epsilon=0.0))


def config(**overrides):
    arguments = dict(model_width=D, heads=H, feed_forward_width=FF, max_positions=P, rope_base=100.0,
                     rms_epsilon=1e-5)
    arguments.update(overrides)
    return DecoderBlockConfig(**arguments)


def block_new(prefix="b", rng=None, **overrides):
    return DecoderBlock.new(prefix, config(**overrides), SplitMix64(1) if rng is None else rng)


def check(forward, x, upstream=None, **options):
    parameter = Parameter("c.w", np.ones((D, D)))
    return gradcheck(forward if forward is not None else (lambda t: t @ parameter),
                     x, [parameter], np.ones((2, D)) if upstream is None else upstream, **options)


def huge_output_attention():
    """W_O = 1e160 I: the attention branch writes rows near 1e160 into the stream, which the second
    norm of a block cannot square (the case that inner checks used to skip)."""
    return attention(output_weight=Parameter("a.output.weight", 1e160 * np.eye(D)))


def varied(*shape):
    """A Tensor whose rows differ, so that attention weights are not uniform."""
    return Tensor(np.random.default_rng(0).normal(size=shape))


class ArrayRefuses:
    """An object that claims to be an array but fails when NumPy asks for it."""

    def __array__(self, *args, **kwargs):
        raise RuntimeError("no array today")


def shape_is(*shape):
    return lambda result: result.shape == shape


def output_shape_is(*shape):
    return lambda result: result.output.shape == shape


def float64_equal(expected):
    return lambda result: result.value.dtype == np.float64 and np.array_equal(result.value, expected)


NAN = float("nan")
LINE = np.column_stack([np.arange(3.0), 2.0 * np.arange(3.0)])    # three points on one line
INF = float("inf")

ROWS = [
    # --- Tensor: float64 copies of real numbers --------------------------------------
    ok("tensor-python-list-of-ints", lambda: Tensor([[1, 2], [3, 4]]), float64_equal([[1.0, 2.0], [3.0, 4.0]])),
    ok("tensor-tuple", lambda: Tensor((1.5, -2.0)), float64_equal([1.5, -2.0])),
    ok("tensor-int-array", lambda: Tensor(np.arange(3)), float64_equal([0.0, 1.0, 2.0])),
    ok("tensor-uint8-array", lambda: Tensor(np.array([255], dtype=np.uint8)), float64_equal([255.0])),
    ok("tensor-float32-array", lambda: Tensor(np.ones(2, dtype=np.float32)), float64_equal([1.0, 1.0])),
    ok("tensor-python-scalar", lambda: Tensor(2.5), float64_equal(2.5)),
    ok("tensor-empty-axis", lambda: Tensor(np.zeros((0, 3))), shape_is(0, 3)),
    bad("tensor-bool-array", lambda: Tensor(np.array([True, False])), TensorError, "got dtype bool"),
    bad("tensor-bool-list", lambda: Tensor([True, False]), TensorError, "got dtype bool"),
    bad("tensor-complex", lambda: Tensor(np.array([1 + 2j])), TensorError, "got dtype complex128"),
    bad("tensor-object-array", lambda: Tensor(np.array([1.0, None], dtype=object)), TensorError,
        "got dtype object"),
    bad("tensor-python-int-too-large", lambda: Tensor([10 ** 30]), TensorError, "got dtype object"),
    bad("tensor-str", lambda: Tensor("1.0"), TensorError, "got str"),
    bad("tensor-bytes", lambda: Tensor(b"1"), TensorError, "got bytes"),
    bad("tensor-str-array", lambda: Tensor(np.array(["a", "b"])), TensorError, "got dtype <U1"),
    bad("tensor-list-with-a-str", lambda: Tensor([1.0, "a"]), TensorError, "got dtype <U32"),
    bad("tensor-datetime", lambda: Tensor(np.array(["2020-01-01"], dtype="datetime64[D]")), TensorError,
        "got dtype datetime64[D]"),
    bad("tensor-dict", lambda: Tensor({"a": 1.0}), TensorError, "got dtype object"),
    bad("tensor-none", lambda: Tensor(None), TensorError, "got NoneType"),
    bad("tensor-ragged-list", lambda: Tensor([[1.0, 2.0], [3.0]]), TensorError, "rectangular"),
    bad("tensor-nan", lambda: Tensor([1.0, NAN, 2.0]), TensorError, "got 1 NaN or infinite of 3"),
    bad("tensor-inf", lambda: Tensor([[INF, 0.0]]), TensorError, "got 1 NaN or infinite of 2"),
    bad("tensor-minus-inf", lambda: Tensor(np.array([-INF, -INF])), TensorError, "got 2 NaN or infinite of 2"),
    bad("tensor-longdouble-past-float64", lambda: Tensor(np.array([np.finfo(np.longdouble).max])),
        TensorError, "NaN or infinite") if np.finfo(np.longdouble).max > np.finfo(np.float64).max else
    bad("tensor-longdouble-past-float64", lambda: Tensor(np.array([INF], dtype=np.longdouble)),
        TensorError, "NaN or infinite"),
    bad("tensor-of-a-tensor", lambda: Tensor(Tensor([1.0])), TensorError, "got Tensor"),
    bad("tensor-requires-grad-int", lambda: Tensor([1.0], requires_grad=1), TensorError, "got 1"),
    bad("tensor-requires-grad-str", lambda: Tensor([1.0], requires_grad="yes"), TensorError, "got 'yes'"),
    # --- Tensor.backward ---------------------------------------------------------------
    bad("backward-without-grad", lambda: x(2).backward(), TensorError, "requires_grad=True"),
    bad("backward-upstream-shape", lambda: (x(2, D) @ eye("w")).backward(np.ones(D)),
        TensorError, "output shape [2, 4], got [4]"),
    bad("backward-upstream-nan", lambda: (x(1, D) @ eye("w")).backward([[NAN, 0, 0, 0]]),
        TensorError, "got 1 NaN or infinite of 4"),
    bad("backward-upstream-str", lambda: (x(1, D) @ eye("w")).backward("ones"), TensorError, "got str"),
    bad("backward-released", lambda: released(2).backward(), TensorError, "belongs to a released tape"),
    # --- Parameter and ParameterList ---------------------------------------------------
    ok("parameter-list-value", lambda: Parameter("w", [[1, 2]]), float64_equal([[1.0, 2.0]])),
    bad("parameter-empty-name", lambda: Parameter("", [1.0]), ParameterError, "got ''"),
    bad("parameter-blank-name", lambda: Parameter("  ", [1.0]), ParameterError, "got '  '"),
    bad("parameter-none-name", lambda: Parameter(None, [1.0]), ParameterError, "got None"),
    bad("parameter-int-name", lambda: Parameter(5, [1.0]), ParameterError, "got 5"),
    bad("parameter-nan-value", lambda: Parameter("w", [NAN]), TensorError, "got 1 NaN or infinite of 1"),
    bad("parameter-none-value", lambda: Parameter("w", None), TensorError, "got NoneType"),
    bad("parameter-bool-value", lambda: Parameter("w", np.ones(2, dtype=bool)), TensorError, "got dtype bool"),
    ok("parameter-list-empty", lambda: ParameterList([]), lambda result: len(result) == 0),
    ok("parameter-list-generator", lambda: ParameterList(Parameter(n, 1.0) for n in "ab"),
       lambda result: result.names == ["a", "b"]),
    bad("parameter-list-none", lambda: ParameterList(None), ParameterError, "got NoneType"),
    bad("parameter-list-int", lambda: ParameterList(5), ParameterError, "got int"),
    bad("parameter-list-single-parameter", lambda: ParameterList(Parameter("w", 1.0)), ParameterError,
        "got Parameter"),
    bad("parameter-list-tensor-entry", lambda: ParameterList([Parameter("w", 1.0), Tensor(1.0)]), ParameterError,
        "entry 1 must be a Parameter, got Tensor"),
    bad("parameter-list-array-entry", lambda: ParameterList([np.ones(2)]), ParameterError,
        "entry 0 must be a Parameter, got ndarray"),
    bad("parameter-list-duplicate-names", lambda: ParameterList([Parameter("w", 1.0), Parameter("w", 2.0)]),
        ParameterError, "parameter name 'w' appears twice (entries 0 and 1)"),
    # --- SplitMix64 --------------------------------------------------------------------
    ok("splitmix-seed-zero", lambda: SplitMix64(0), lambda rng: rng.state == 0),
    ok("splitmix-seed-max", lambda: SplitMix64(2 ** 64 - 1), lambda rng: rng.state == 2 ** 64 - 1),
    ok("splitmix-seed-numpy-uint64", lambda: SplitMix64(np.uint64(7)), lambda rng: rng.state == 7),
    bad("splitmix-seed-negative", lambda: SplitMix64(-1), InitializationError, "got -1"),
    bad("splitmix-seed-too-large", lambda: SplitMix64(2 ** 64), InitializationError, "got 18446744073709551616"),
    bad("splitmix-seed-float", lambda: SplitMix64(1.0), InitializationError, "got 1.0"),
    bad("splitmix-seed-bool", lambda: SplitMix64(True), InitializationError, "got True"),
    bad("splitmix-seed-str", lambda: SplitMix64("7"), InitializationError, "got '7'"),
    bad("splitmix-seed-none", lambda: SplitMix64(None), InitializationError, "got None"),
    ok("splitmix-zero-draws", lambda: SplitMix64(1).next_u64(0), shape_is(0)),
    bad("splitmix-negative-draws", lambda: SplitMix64(1).next_u64(-1), InitializationError, "got -1"),
    bad("splitmix-float-draws", lambda: SplitMix64(1).next_f64(2.5), InitializationError, "got 2.5"),
    bad("splitmix-bool-draws", lambda: SplitMix64(1).next_u64(True), InitializationError, "got True"),
    # --- RotaryEmbedding ---------------------------------------------------------------
    ok("rope-integer-base", lambda: RotaryEmbedding(4, 8, 10), lambda rope: rope.rope_base == 10.0),
    ok("rope-one-position", lambda: RotaryEmbedding(2, 1, 2.0), lambda rope: rope.cos.shape == (1, 1)),
    bad("rope-odd-width", lambda: RotaryEmbedding(3, 8, 100.0), RopeError, "must be even, got 3"),
    bad("rope-zero-width", lambda: RotaryEmbedding(0, 8, 100.0), RopeError, "got 0"),
    bad("rope-float-width", lambda: RotaryEmbedding(4.0, 8, 100.0), RopeError, "got 4.0"),
    bad("rope-bool-width", lambda: RotaryEmbedding(True, 8, 100.0), RopeError, "got True"),
    bad("rope-zero-capacity", lambda: RotaryEmbedding(4, 0, 100.0), RopeError, "got 0"),
    bad("rope-float-capacity", lambda: RotaryEmbedding(4, 1.5, 100.0), RopeError, "got 1.5"),
    bad("rope-zero-base", lambda: RotaryEmbedding(4, 8, 0.0), RopeError, "got 0.0"),
    bad("rope-negative-base", lambda: RotaryEmbedding(4, 8, -100), RopeError, "got -100"),
    bad("rope-nan-base", lambda: RotaryEmbedding(4, 8, NAN), RopeError, "got nan"),
    bad("rope-inf-base", lambda: RotaryEmbedding(4, 8, INF), RopeError, "got inf"),
    bad("rope-str-base", lambda: RotaryEmbedding(4, 8, "100"), RopeError, "got '100'"),
    bad("rope-bool-base", lambda: RotaryEmbedding(4, 8, True), RopeError, "got True"),
    bad("rope-base-overflows-angles", lambda: RotaryEmbedding(64, 8, 5e-324), RopeError,
        "got overflow for base 5e-324 with head width 64"),
    ok("rope-rotate-offset", lambda: RotaryEmbedding(4, 8, 100.0).rotate(x(3, 4), 5), shape_is(3, 4)),
    ok("rope-rotate-numpy-offset", lambda: RotaryEmbedding(4, 8, 100.0).rotate(x(2, 3, 4), np.int64(2)),
       shape_is(2, 3, 4)),
    ok("rope-rotate-no-tokens", lambda: RotaryEmbedding(4, 8, 100.0).rotate(x(0, 4)), shape_is(0, 4)),
    bad("rope-rotate-array", lambda: RotaryEmbedding(4, 8, 100.0).rotate(np.ones((3, 4))), RopeError,
        "got ndarray"),
    bad("rope-rotate-rank-1", lambda: RotaryEmbedding(4, 8, 100.0).rotate(x(4)), RopeError, "got [4]"),
    bad("rope-rotate-width", lambda: RotaryEmbedding(4, 8, 100.0).rotate(x(3, 6)), RopeError, "got [3, 6]"),
    bad("rope-rotate-negative-offset", lambda: RotaryEmbedding(4, 8, 100.0).rotate(x(3, 4), -1), RopeError,
        "got -1"),
    bad("rope-rotate-float-offset", lambda: RotaryEmbedding(4, 8, 100.0).rotate(x(3, 4), 1.0), RopeError,
        "got 1.0"),
    bad("rope-rotate-bool-offset", lambda: RotaryEmbedding(4, 8, 100.0).rotate(x(3, 4), True), RopeError,
        "got True"),
    bad("rope-rotate-none-offset", lambda: RotaryEmbedding(4, 8, 100.0).rotate(x(3, 4), None), RopeError,
        "got None"),
    bad("rope-rotate-past-capacity", lambda: RotaryEmbedding(4, 8, 100.0).rotate(x(3, 4), 6), RopeError,
        "[6, 9) exceeds capacity 8"),
    bad("rope-rotate-released", lambda: RotaryEmbedding(4, 8, 100.0).rotate(released(3, 4)), RopeError,
        "belongs to a released tape"),
    # --- split_heads / merge_heads -----------------------------------------------------
    ok("split-heads", lambda: split_heads(x(2, T, D), H), shape_is(2, H, T, D // H)),
    ok("split-heads-empty-batch", lambda: split_heads(x(0, T, D), H), shape_is(0, H, T, D // H)),
    ok("split-heads-numpy-count", lambda: split_heads(x(1, T, D), np.int64(4)), shape_is(1, 4, T, 1)),
    bad("split-heads-rank-2", lambda: split_heads(x(T, D), H), HeadLayoutError,
        "head split input must have rank three [batch, tokens, model_width], got rank 2"),
    bad("split-heads-array", lambda: split_heads(np.ones((1, T, D)), H), HeadLayoutError, "got ndarray"),
    bad("split-heads-zero-heads", lambda: split_heads(x(1, T, D), 0), HeadLayoutError, "got 0"),
    bad("split-heads-negative-heads", lambda: split_heads(x(1, T, D), -2), HeadLayoutError, "got -2"),
    bad("split-heads-float-heads", lambda: split_heads(x(1, T, D), 2.0), HeadLayoutError, "got 2.0"),
    bad("split-heads-bool-heads", lambda: split_heads(x(1, T, D), True), HeadLayoutError, "got True"),
    bad("split-heads-indivisible", lambda: split_heads(x(1, T, D), 3), HeadLayoutError,
        "model width 4 must be divisible by the number of heads (3)"),
    bad("split-heads-zero-width", lambda: split_heads(x(1, T, 0), H), HeadLayoutError, "got model width 0"),
    bad("split-heads-released", lambda: split_heads(released(1, T, D), H), HeadLayoutError,
        "belongs to a released tape"),
    ok("merge-heads", lambda: merge_heads(x(1, H, T, 2)), shape_is(1, T, D)),
    bad("merge-heads-rank-3", lambda: merge_heads(x(1, T, D)), HeadLayoutError,
        "head merge input must have rank four [batch, heads, tokens, head_width], got rank 3"),
    bad("merge-heads-zero-heads", lambda: merge_heads(x(1, 0, T, 2)), HeadLayoutError, "got shape [1, 0, 3, 2]"),
    bad("merge-heads-zero-width", lambda: merge_heads(x(1, H, T, 0)), HeadLayoutError, "got shape [1, 2, 3, 0]"),
    bad("merge-heads-none", lambda: merge_heads(None), HeadLayoutError, "got NoneType"),
    bad("merge-heads-released", lambda: merge_heads(released(1, H, T, 2)), HeadLayoutError,
        "belongs to a released tape"),
    # --- causal scaled dot-product attention -------------------------------------------
    ok("causal-one-lane", lambda: causal_scaled_dot_product_self_attention(x(T, 2), x(T, 2), x(T, 2)),
       output_shape_is(T, 2)),
    ok("causal-empty-batch", lambda: causal_scaled_dot_product_self_attention(x(0, T, 2), x(0, T, 2), x(0, T, 2)),
       output_shape_is(0, T, 2)),
    bad("causal-query-array", lambda: causal_scaled_dot_product_self_attention(np.ones((T, 2)), x(T, 2), x(T, 2)),
        CausalAttentionError, "got ndarray"),
    bad("causal-key-list", lambda: causal_scaled_dot_product_self_attention(x(T, 2), [[1.0, 1.0]], x(T, 2)),
        CausalAttentionError, "got list"),
    bad("causal-value-none", lambda: causal_scaled_dot_product_self_attention(x(T, 2), x(T, 2), None),
        CausalAttentionError, "got NoneType"),
    bad("causal-rank-1", lambda: causal_scaled_dot_product_self_attention(x(2), x(2), x(2)), CausalAttentionError,
        "got [2]"),
    bad("causal-key-shape", lambda: causal_scaled_dot_product_self_attention(x(T, 2), x(T, 4), x(T, 2)),
        CausalAttentionError, "key shape must equal query shape [3, 2], got [3, 4]"),
    bad("causal-value-shape", lambda: causal_scaled_dot_product_self_attention(x(T, 2), x(T, 2), x(2, 2)),
        CausalAttentionError, "value shape must equal query shape [3, 2], got [2, 2]"),
    bad("causal-no-tokens", lambda: causal_scaled_dot_product_self_attention(x(0, 2), x(0, 2), x(0, 2)),
        CausalAttentionError, "with tokens, width > 0, got [0, 2]"),
    bad("causal-zero-width", lambda: causal_scaled_dot_product_self_attention(x(T, 0), x(T, 0), x(T, 0)),
        CausalAttentionError, "with tokens, width > 0, got [3, 0]"),
    bad("causal-released", lambda: causal_scaled_dot_product_self_attention(x(T, 2), released(T, 2), x(T, 2)),
        CausalAttentionError, "belongs to a released tape"),
    # --- MultiHeadAttention(...) --------------------------------------------------------
    ok("mha-from-parameters", lambda: attention(), lambda layer: (layer.heads, layer.head_width) == (H, 2)),
    ok("mha-numpy-integers", lambda: attention(heads=np.int64(2), max_positions=np.int64(6)),
       lambda layer: layer.max_positions == 6),
    bad("mha-query-array", lambda: attention(query_weight=np.eye(D)), MultiHeadAttentionError,
        "query projection weight must be a Parameter, got ndarray"),
    bad("mha-key-none", lambda: attention(key_weight=None), MultiHeadAttentionError,
        "key projection weight must be a Parameter, got NoneType"),
    bad("mha-output-rank-1", lambda: attention(output_weight=Parameter("o", np.ones(D))), MultiHeadAttentionError,
        "got rank 1 with shape [4]"),
    bad("mha-empty-weight", lambda: attention(value_weight=Parameter("v", np.ones((D, 0)))),
        MultiHeadAttentionError, "with shape [4, 0]"),
    bad("mha-key-projected-width", lambda: attention(key_weight=Parameter("k", np.ones((D, 6)))),
        MultiHeadAttentionError, "Q/K/V projected width must equal model width 4, got 6 for key"),
    bad("mha-query-input-width", lambda: attention(query_weight=eye("q", 8)), MultiHeadAttentionError,
        "query projection input width must equal model width 4, got 8"),
    bad("mha-output-width", lambda: attention(output_weight=Parameter("o", np.ones((D, 5)))),
        MultiHeadAttentionError, "output projection width must equal model width 4, got 5"),
    bad("mha-zero-heads", lambda: attention(heads=0), MultiHeadAttentionError, "got 0"),
    bad("mha-float-heads", lambda: attention(heads=2.0), MultiHeadAttentionError, "got 2.0"),
    bad("mha-bool-heads", lambda: attention(heads=True), MultiHeadAttentionError, "got True"),
    bad("mha-indivisible-heads", lambda: attention(heads=3), MultiHeadAttentionError,
        "model width 4 must be divisible by the number of heads (3)"),
    bad("mha-odd-head-width", lambda: attention(heads=4), MultiHeadAttentionError,
        "per-head width 1 must be even for RoPE (model width 4, 4 heads)"),
    bad("mha-zero-capacity", lambda: attention(max_positions=0), MultiHeadAttentionError, "got 0"),
    bad("mha-nan-base", lambda: attention(rope_base=NAN), MultiHeadAttentionError, "got nan"),
    bad("mha-duplicate-names", lambda: attention(key_weight=eye("a.query.weight")), MultiHeadAttentionError,
        "parameter name 'a.query.weight' appears twice"),
    bad("mha-one-parameter-twice", lambda: (lambda w: attention(query_weight=w, value_weight=w))(eye("w")),
        MultiHeadAttentionError, "parameter name 'w' appears twice"),
    # --- MultiHeadAttention.new ----------------------------------------------------------
    ok("mha-new", lambda: attention_new(), lambda layer: layer.parameters().count() == 4 * D * D),
    # the seed's configuration errors, with their messages
    bad("mha-new-zero-width", lambda: attention_new(model_width=0), MultiHeadAttentionError,
        "multi-head model width must be a positive integer, got 0"),
    bad("mha-new-negative-width", lambda: attention_new(model_width=-4), MultiHeadAttentionError, "got -4"),
    bad("mha-new-float-width", lambda: attention_new(model_width=4.0), MultiHeadAttentionError, "got 4.0"),
    bad("mha-new-zero-heads", lambda: attention_new(heads=0), MultiHeadAttentionError,
        "multi-head head count must be a positive integer, got 0"),
    bad("mha-new-indivisible", lambda: attention_new(heads=3), MultiHeadAttentionError,
        "model width 4 must be divisible by the number of heads (3)"),
    bad("mha-new-odd-head-width", lambda: attention_new(heads=4), MultiHeadAttentionError,
        "per-head width 1 must be even for RoPE (model width 4, 4 heads)"),
    bad("mha-new-odd-head-width-6", lambda: attention_new(model_width=6, heads=2), MultiHeadAttentionError,
        "per-head width 3 must be even for RoPE (model width 6, 2 heads)"),
    bad("mha-new-zero-capacity", lambda: attention_new(max_positions=0), MultiHeadAttentionError,
        "multi-head RoPE configuration: RoPE max positions must be a positive integer, got 0"),
    bad("mha-new-float-capacity", lambda: attention_new(max_positions=6.0), MultiHeadAttentionError, "got 6.0"),
    bad("mha-new-negative-base", lambda: attention_new(rope_base=-1.0), MultiHeadAttentionError,
        "multi-head RoPE configuration: RoPE base must be a finite positive number, got -1.0"),
    bad("mha-new-none-base", lambda: attention_new(rope_base=None), MultiHeadAttentionError, "got None"),
    bad("mha-new-no-generator", lambda: attention_new(rng=None), MultiHeadAttentionError, "got NoneType"),
    bad("mha-new-seed-not-generator", lambda: attention_new(rng=1), MultiHeadAttentionError, "got int"),
    bad("mha-new-empty-prefix", lambda: attention_new(prefix=""), MultiHeadAttentionError, "got ''"),
    bad("mha-new-none-prefix", lambda: attention_new(prefix=None), MultiHeadAttentionError, "got None"),
    # --- MultiHeadAttention.forward ------------------------------------------------------
    ok("mha-forward", lambda: attention().forward(x(2, T, D)), output_shape_is(2, T, D)),
    ok("mha-forward-empty-batch", lambda: attention().forward(x(0, T, D)), output_shape_is(0, T, D)),
    ok("mha-forward-last-offset", lambda: attention().forward(x(1, T, D), P - T), output_shape_is(1, T, D)),
    ok("mha-forward-numpy-offset", lambda: attention().forward(x(1, T, D), np.int64(1)), output_shape_is(1, T, D)),
    # the seed's input errors, in its order: rank, width, tokens, positions, tape
    bad("mha-forward-rank-2", lambda: attention().forward(x(T, D)), MultiHeadAttentionError,
        "multi-head input must have rank three [batch, tokens, model_width], got rank 2"),
    bad("mha-forward-rank-4", lambda: attention().forward(x(1, 1, T, D)), MultiHeadAttentionError, "got rank 4"),
    bad("mha-forward-width", lambda: attention().forward(x(1, T, 5)), MultiHeadAttentionError,
        "multi-head input's last dimension must equal model width 4, got 5"),
    bad("mha-forward-no-tokens", lambda: attention().forward(x(1, 0, D)), MultiHeadAttentionError,
        "multi-head input needs at least one token so every causal row has a key"),
    bad("mha-forward-array", lambda: attention().forward(np.ones((1, T, D))), MultiHeadAttentionError,
        "multi-head input must be a Tensor, got ndarray; wrap arrays as Tensor(array)"),
    bad("mha-forward-list", lambda: attention().forward([[[1.0] * D]]), MultiHeadAttentionError, "got list"),
    bad("mha-forward-none", lambda: attention().forward(None), MultiHeadAttentionError, "got NoneType"),
    bad("mha-forward-released", lambda: attention().forward(released(1, T, D)), MultiHeadAttentionError,
        "multi-head input tensor of shape [1, 3, 4] belongs to a released tape"),
    bad("mha-forward-negative-offset", lambda: attention().forward(x(1, T, D), -1), MultiHeadAttentionError,
        "multi-head position offset must be non-negative, got -1"),
    bad("mha-forward-float-offset", lambda: attention().forward(x(1, T, D), 1.0), MultiHeadAttentionError,
        "multi-head position offset must be an integer, got 1.0"),
    bad("mha-forward-bool-offset", lambda: attention().forward(x(1, T, D), True), MultiHeadAttentionError,
        "got True"),
    bad("mha-forward-str-offset", lambda: attention().forward(x(1, T, D), "0"), MultiHeadAttentionError,
        "got '0'"),
    bad("mha-forward-past-capacity", lambda: attention().forward(x(1, T, D), 4), MultiHeadAttentionError,
        "multi-head position interval [4, 7) exceeds capacity 6"),
    bad("mha-forward-huge-offset", lambda: attention().forward(x(1, T, D), 2 ** 70), MultiHeadAttentionError,
        "exceeds capacity 6"),
    # --- RmsNorm -------------------------------------------------------------------------
    ok("rmsnorm-from-parameters", lambda: norm(), lambda layer: layer.epsilon == 1e-5),
    ok("rmsnorm-zero-epsilon", lambda: norm(epsilon=0), lambda layer: layer.epsilon == 0.0),
    ok("rmsnorm-numpy-epsilon", lambda: norm(epsilon=np.float32(0.5)), lambda layer: layer.epsilon == 0.5),
    bad("rmsnorm-gain-array", lambda: RmsNorm(np.ones(D)), RmsNormError, "got ndarray"),
    bad("rmsnorm-gain-tensor", lambda: RmsNorm(Tensor(np.ones(D))), RmsNormError, "got Tensor"),
    bad("rmsnorm-gain-rank-2", lambda: RmsNorm(Parameter("g", np.ones((1, D)))), RmsNormError,
        "got rank 2 with shape [1, 4]"),
    bad("rmsnorm-gain-empty", lambda: RmsNorm(Parameter("g", np.ones(0))), RmsNormError,
        "with shape [0]"),
    bad("rmsnorm-negative-epsilon", lambda: norm(epsilon=-1e-5), RmsNormError, "got -1e-05"),
    bad("rmsnorm-nan-epsilon", lambda: norm(epsilon=NAN), RmsNormError, "got nan"),
    bad("rmsnorm-inf-epsilon", lambda: norm(epsilon=INF), RmsNormError, "got inf"),
    bad("rmsnorm-bool-epsilon", lambda: norm(epsilon=True), RmsNormError, "got True"),
    bad("rmsnorm-str-epsilon", lambda: norm(epsilon="1e-5"), RmsNormError, "got '1e-5'"),
    bad("rmsnorm-none-epsilon", lambda: norm(epsilon=None), RmsNormError, "got None"),
    ok("rmsnorm-new", lambda: RmsNorm.new("g", D, 0.0), lambda layer: np.array_equal(layer.gain.value, np.ones(D))),
    bad("rmsnorm-new-zero-width", lambda: RmsNorm.new("g", 0), RmsNormError, "got 0"),
    bad("rmsnorm-new-float-width", lambda: RmsNorm.new("g", 2.5), RmsNormError, "got 2.5"),
    bad("rmsnorm-new-negative-epsilon", lambda: RmsNorm.new("g", D, -1.0), RmsNormError, "got -1.0"),
    bad("rmsnorm-new-empty-name", lambda: RmsNorm.new("", D), RmsNormError, "got ''"),
    ok("rmsnorm-forward", lambda: norm().forward(x(2, D)), shape_is(2, D)),
    ok("rmsnorm-forward-empty-rows", lambda: norm(epsilon=0.0).forward(x(0, D)), shape_is(0, D)),
    ok("rmsnorm-forward-zero-epsilon-nonzero-rows", lambda: norm(epsilon=0.0).forward(x(2, D, value=1e-150)),
       lambda out: np.allclose(out.value, 1.0)),
    ok("rmsnorm-forward-zero-row-positive-epsilon", lambda: norm().forward(x(1, D, value=0.0)),
       lambda out: np.array_equal(out.value, np.zeros((1, D)))),
    bad("rmsnorm-forward-array", lambda: norm().forward(np.ones((2, D))), RmsNormError, "got ndarray"),
    bad("rmsnorm-forward-width", lambda: norm().forward(x(2, 5)), RmsNormError, "feature width 4, got 5"),
    bad("rmsnorm-forward-scalar", lambda: norm().forward(Tensor(1.0)), RmsNormError, "got a scalar"),
    bad("rmsnorm-forward-released", lambda: norm().forward(released(2, D)), RmsNormError,
        "belongs to a released tape"),
    bad("rmsnorm-forward-zero-row", lambda: norm(epsilon=0.0).forward(Tensor([[1.0] * D, [0.0] * D])),
        RmsNormError, "RMSNorm with epsilon 0 cannot scale a row whose mean square is 0, got 1 such rows"),
    bad("rmsnorm-forward-underflowing-row", lambda: norm(epsilon=0.0).forward(x(3, D, value=1e-200)),
        RmsNormError, "a row whose mean square is 0, got 3 such rows"),
    bad("rmsnorm-forward-overflowing-row", lambda: norm().forward(x(1, D, value=-1e200)), RmsNormError,
        "RMSNorm: rms_norm [1, 4] [4]: overflow encountered in square"),
    # --- SwiGlu --------------------------------------------------------------------------
    ok("swiglu-from-parameters", lambda: swiglu(), lambda layer: layer.w_gate.shape == (D, FF)),
    bad("swiglu-gate-array", lambda: SwiGlu(np.ones((D, FF)), Parameter("u", np.ones((D, FF))),
                                                            Parameter("d", np.ones((FF, D)))),
        SwiGluError, "SwiGLU gate weight must be a Parameter, got ndarray"),
    bad("swiglu-down-rank-1", lambda: swiglu(down=Parameter("d", np.ones(FF))), SwiGluError,
        "got rank 1 with shape [3]"),
    bad("swiglu-up-shape", lambda: swiglu(up=Parameter("u", np.ones((D, 2)))), SwiGluError,
        "up weight shape must equal gate weight shape [4, 3], got [4, 2]"),
    bad("swiglu-down-input", lambda: swiglu(down=Parameter("d", np.ones((2, D)))), SwiGluError,
        "down input width must equal hidden width 3, got 2"),
    bad("swiglu-duplicate-names", lambda: swiglu(up=Parameter("f.gate.weight", np.ones((D, FF)))), SwiGluError,
        "parameter name 'f.gate.weight' appears twice"),
    ok("swiglu-new", lambda: swiglu_new(), lambda layer: layer.output_width == D),
    bad("swiglu-new-zero-hidden", lambda: swiglu_new(hidden_width=0), SwiGluError, "got 0"),
    bad("swiglu-new-negative-input", lambda: swiglu_new(input_width=-1), SwiGluError, "got -1"),
    bad("swiglu-new-float-output", lambda: swiglu_new(output_width=1.5), SwiGluError, "got 1.5"),
    bad("swiglu-new-bool-hidden", lambda: swiglu_new(hidden_width=True), SwiGluError, "got True"),
    bad("swiglu-new-no-generator", lambda: swiglu_new(rng=None), SwiGluError, "got NoneType"),
    bad("swiglu-new-none-prefix", lambda: swiglu_new(prefix=None), SwiGluError, "got None"),
    ok("swiglu-forward", lambda: swiglu().forward(x(2, T, D)), output_shape_is(2, T, D)),
    ok("swiglu-forward-vector", lambda: swiglu().forward(x(D)), output_shape_is(D)),
    bad("swiglu-forward-width", lambda: swiglu().forward(x(2, 5)), SwiGluError, "input width 4, got 5"),
    bad("swiglu-forward-scalar", lambda: swiglu().forward(Tensor(0.5)), SwiGluError, "got a scalar"),
    bad("swiglu-forward-array", lambda: swiglu().forward(np.ones(D)), SwiGluError, "got ndarray"),
    bad("swiglu-forward-released", lambda: swiglu().forward(released(1, D)), SwiGluError,
        "belongs to a released tape"),
    # --- DecoderBlock(...) --------------------------------------------------------------
    ok("block-from-parts", lambda: parts(), lambda block: len(block.parameters()) == 9),
    bad("block-parts-none", lambda: parts(attention=None), DecoderBlockError,
        "causal multi-head attention must be a MultiHeadAttention, got NoneType"),
    bad("block-parts-swapped", lambda: parts(feed_forward_norm=swiglu()), DecoderBlockError,
        "feed-forward RMSNorm must be a RmsNorm, got SwiGlu"),
    bad("block-parts-width", lambda: parts(feed_forward_norm=norm("b.ffn_norm.gain", width=5)), DecoderBlockError,
        "feed-forward RMSNorm width must be 4, got 5"),
    bad("block-parts-ffn-output", lambda: parts(feed_forward=swiglu(down=Parameter("d", np.ones((FF, 5))))),
        DecoderBlockError, "feed-forward output width must be 4, got 5"),
    bad("block-parts-shared-norm", lambda: (lambda n: parts(attention_norm=n, feed_forward_norm=n))(norm()),
        DecoderBlockError, "parameter name 'n.gain' appears twice"),
    # --- DecoderBlock.new ----------------------------------------------------------------
    ok("block-new", lambda: block_new(),
       lambda block: block.parameters().count() == 2 * D + 4 * D * D + 3 * D * FF),
    bad("block-new-config-dict", lambda: DecoderBlock.new("b", {"model_width": D}, SplitMix64(1)),
        DecoderBlockError, "got dict"),
    bad("block-new-config-none", lambda: DecoderBlock.new("b", None, SplitMix64(1)), DecoderBlockError,
        "got NoneType"),
    bad("block-new-zero-width", lambda: block_new(model_width=0), DecoderBlockError, "got 0"),
    bad("block-new-zero-heads", lambda: block_new(heads=0), DecoderBlockError, "got 0"),
    bad("block-new-indivisible", lambda: block_new(heads=3), DecoderBlockError,
        "causal multi-head attention: model width 4 must be divisible by the number of heads (3)"),
    bad("block-new-odd-head-width", lambda: block_new(heads=4), DecoderBlockError,
        "per-head width 1 must be even for RoPE (model width 4, 4 heads)"),
    bad("block-new-zero-ffn", lambda: block_new(feed_forward_width=0), DecoderBlockError,
        "SwiGLU feed-forward: SwiGLU hidden width must be a positive integer, got 0"),
    bad("block-new-zero-capacity", lambda: block_new(max_positions=0), DecoderBlockError, "got 0"),
    bad("block-new-zero-base", lambda: block_new(rope_base=0.0), DecoderBlockError, "got 0.0"),
    bad("block-new-negative-epsilon", lambda: block_new(rms_epsilon=-1e-5), DecoderBlockError,
        "attention RMSNorm: RMSNorm epsilon must be a finite number >= 0, got -1e-05"),
    bad("block-new-nan-epsilon", lambda: block_new(rms_epsilon=NAN), DecoderBlockError, "got nan"),
    bad("block-new-no-generator", lambda: DecoderBlock.new("b", config(), None), DecoderBlockError,
        "got NoneType"),
    bad("block-new-empty-prefix", lambda: block_new(prefix=""), DecoderBlockError, "got ''"),
    # --- DecoderBlock.forward ------------------------------------------------------------
    ok("block-forward", lambda: parts().forward(x(2, T, D)), output_shape_is(2, T, D)),
    ok("block-forward-empty-batch", lambda: parts().forward(x(0, T, D)), output_shape_is(0, T, D)),
    bad("block-forward-rank-2", lambda: parts().forward(x(T, D)), DecoderBlockError,
        "decoder-block input must have rank three [batch, tokens, model_width], got rank 2"),
    bad("block-forward-width", lambda: parts().forward(x(1, T, 6)), DecoderBlockError,
        "decoder-block input's last dimension must equal model width 4, got 6"),
    bad("block-forward-no-tokens", lambda: parts().forward(x(1, 0, D)), DecoderBlockError,
        "decoder-block input needs at least one token so every causal row has a key"),
    bad("block-forward-array", lambda: parts().forward(np.ones((1, T, D))), DecoderBlockError, "got ndarray"),
    bad("block-forward-released", lambda: parts().forward(released(1, T, D)), DecoderBlockError,
        "decoder-block input tensor of shape [1, 3, 4] belongs to a released tape"),
    bad("block-forward-negative-offset", lambda: parts().forward(x(1, T, D), -2), DecoderBlockError, "got -2"),
    bad("block-forward-float-offset", lambda: parts().forward(x(1, T, D), 0.5), DecoderBlockError, "got 0.5"),
    bad("block-forward-bool-offset", lambda: parts().forward(x(1, T, D), False), DecoderBlockError, "got False"),
    bad("block-forward-past-capacity", lambda: parts().forward(x(1, T, D), 5), DecoderBlockError,
        "decoder-block position interval [5, 8) exceeds capacity 6"),
    bad("block-forward-zero-row-zero-epsilon",
        lambda: parts(attention_norm=norm("b.attention_norm.gain", epsilon=0.0)).forward(x(1, T, D, value=0.0)),
        DecoderBlockError, "attention RMSNorm: RMSNorm with epsilon 0 cannot scale a row whose mean square is 0, "
        "got 3 such rows"),
    # --- gradcheck -----------------------------------------------------------------------
    ok("gradcheck-list-input", lambda: check(None, [[1.0, 2.0, 3.0, 4.0], [0.5, 0.0, -1.0, 2.0]]),
       lambda report: report.passed and report.total == 8 + D * D),
    ok("gradcheck-numpy-delta", lambda: check(None, np.ones((2, D)), delta=np.float64(1e-6)),
       lambda report: report.passed),
    bad("gradcheck-forward-none", lambda: gradcheck(None, np.ones(2), [], np.ones(2)), GradcheckError,
        "got NoneType"),
    bad("gradcheck-parameters-none", lambda: gradcheck(lambda t: t, np.ones(2), None, np.ones(2)), GradcheckError,
        "got NoneType"),
    bad("gradcheck-parameter-array", lambda: gradcheck(lambda t: t, np.ones(2), [np.ones(2)], np.ones(2)),
        GradcheckError, "gradcheck: parameter list entry 0 must be a Parameter, got ndarray"),
    bad("gradcheck-input-none", lambda: check(None, None), GradcheckError, "got NoneType"),
    bad("gradcheck-input-nan", lambda: check(None, [[NAN, 0, 0, 0], [0, 0, 0, 0]]), GradcheckError,
        "got 1 NaN or infinite of 8"),
    bad("gradcheck-input-bool", lambda: check(None, np.ones((2, D), dtype=bool)), GradcheckError, "got dtype bool"),
    bad("gradcheck-upstream-shape", lambda: check(None, np.ones((2, D)), upstream=np.ones(2)), GradcheckError,
        "output shape [2, 4], got [2]"),
    bad("gradcheck-upstream-inf", lambda: check(None, np.ones((2, D)), upstream=np.full((2, D), INF)),
        GradcheckError, "got 8 NaN or infinite of 8"),
    bad("gradcheck-zero-delta", lambda: check(None, np.ones((2, D)), delta=0.0), GradcheckError, "got 0.0"),
    bad("gradcheck-negative-tolerance", lambda: check(None, np.ones((2, D)), tolerance=-1e-5), GradcheckError,
        "got -1e-05"),
    bad("gradcheck-nan-delta", lambda: check(None, np.ones((2, D)), delta=NAN), GradcheckError, "got nan"),
    bad("gradcheck-bool-tolerance", lambda: check(None, np.ones((2, D)), tolerance=True), GradcheckError,
        "got True"),
    bad("gradcheck-str-delta", lambda: check(None, np.ones((2, D)), delta="1e-6"), GradcheckError, "got '1e-6'"),
    bad("gradcheck-forward-returns-array", lambda: gradcheck(lambda t: t.value, np.ones(2), [], np.ones(2)),
        GradcheckError, "must return a Tensor, got ndarray"),
    bad("gradcheck-forward-rejects-input", lambda: check(lambda t: attention().forward(t).output,
                                                         np.ones((1, T, 5)), upstream=np.ones((1, T, D))),
        GradcheckError, "gradcheck forward: multi-head input's last dimension must equal model width 4, got 5"),
    bad("gradcheck-output-without-tape", lambda: gradcheck(lambda t: Tensor(np.ones(2)), np.ones(2), [], np.ones(2)),
        GradcheckError, "gradcheck backward: backward needs a tensor that depends on a leaf"),
]

BIG = 1e200  # finite, but its square is not
ROWS += [
    # --- finite values that overflow inside a layer or on the tape ---
    bad("overflow-tape-add", lambda: x(2, value=1e308) + x(2, value=1e308), TensorError,
        "add [2] [2]: overflow encountered in add"),
    bad("overflow-tape-mul", lambda: x(2, value=BIG) * x(2, value=BIG), TensorError,
        "mul [2] [2]: overflow encountered in multiply"),
    bad("overflow-tape-matmul", lambda: x(2, D, value=BIG) @ Parameter("w", np.full((D, D), BIG)), TensorError,
        "matmul [2, 4] [4, 4]: overflow encountered in matmul"),
    bad("overflow-tape-scale", lambda: scale(x(3, value=1e300), 1e10), TensorError, "scale [3]: overflow"),
    bad("overflow-backward-upstream", lambda: (leaf(1, D) @ Parameter("w", np.full((D, D), 4.0))).backward(
        np.full((1, D), 1e308)), TensorError, "backward: overflow encountered in matmul"),
    bad("overflow-backward-negative-upstream", lambda: (leaf(1, D) @ Parameter("w", np.full((D, D), 4.0))).backward(
        np.full((1, D), -1e308)), TensorError, "backward: overflow encountered in matmul"),
    bad("overflow-backward-sum-of-paths", lambda: (lambda t: (t + t).backward(np.full(2, 1e308)))(leaf(2)),
        TensorError, "backward: overflow encountered in add"),
    bad("overflow-backward-through-block", lambda: parts().forward(varied(1, T, D)).output.backward(
        np.full((1, T, D), 1e308)), TensorError, "backward: overflow"),
    bad("overflow-mha-input", lambda: attention().forward(x(1, T, D, value=BIG)), MultiHeadAttentionError,
        "multi-head: causal attention: matmul [1, 2, 3, 2] [1, 2, 2, 3]: overflow encountered in matmul"),
    bad("overflow-mha-weights", lambda: attention(query_weight=Parameter("q", BIG * np.eye(D)),
                                                  key_weight=Parameter("k", BIG * np.eye(D))).forward(x(1, T, D)),
        MultiHeadAttentionError, "overflow encountered in matmul"),
    bad("overflow-block-input", lambda: parts().forward(x(1, T, D, value=BIG)), DecoderBlockError,
        "attention RMSNorm: RMSNorm: rms_norm [1, 3, 4] [4]: overflow encountered in square"),
    bad("overflow-swiglu-product", lambda: swiglu(gate=Parameter("g", np.full((D, FF), 1e300)),
                                                  up=Parameter("u", np.full((D, FF), 1e300))).forward(x(1, D)),
        SwiGluError, "SwiGLU: mul [1, 3] [1, 3]: overflow encountered in multiply"),
    bad("overflow-rmsnorm-zero-epsilon", lambda: norm(epsilon=0.0).forward(x(2, D, value=BIG)), RmsNormError,
        "RMSNorm: rms_norm [2, 4] [4]: overflow encountered in square"),
    bad("overflow-rmsnorm-gain", lambda: RmsNorm(Parameter("g", np.full(D, 1e308))).forward(
        varied(2, D)), RmsNormError, "RMSNorm: rms_norm [2, 4] [4]: overflow encountered in multiply"),
    bad("overflow-rope-rotate", lambda: RotaryEmbedding(2, 8, 100.0).rotate(x(3, 2, value=1.5e308), 1), RopeError,
        "RoPE: rotate_pairs [3, 2]: overflow"),
    bad("overflow-causal-scores", lambda: causal_scaled_dot_product_self_attention(
        x(T, 2, value=BIG), x(T, 2, value=BIG), x(T, 2)), CausalAttentionError,
        "causal attention: matmul [3, 2] [2, 3]: overflow encountered in matmul"),
    bad("overflow-gradcheck-upstream", lambda: gradcheck(lambda t: t @ Parameter("w", np.full((2, 2), 4.0)),
                                                         np.ones((1, 2)), [], np.full((1, 2), 1e308)),
        GradcheckError, "gradcheck backward: backward: overflow"),
    bad("overflow-gradcheck-delta", lambda: check(None, np.ones((2, D)), delta=1e308), GradcheckError,
        "gradcheck central differences: overflow"),
    # --- NumPy integers of any width, handled exactly ------------------
    bad("int-offset-int64-max", lambda: attention().forward(x(1, T, D), np.int64(2**63 - 1)),
        MultiHeadAttentionError, "position interval [9223372036854775807, 9223372036854775810) exceeds capacity 6"),
    bad("int-offset-int8-max", lambda: attention().forward(x(1, T, D), np.int8(127)), MultiHeadAttentionError,
        "position interval [127, 130) exceeds capacity 6"),
    bad("int-offset-int32-max", lambda: parts().forward(x(1, T, D), np.int32(2**31 - 1)), DecoderBlockError,
        "position interval [2147483647, 2147483650) exceeds capacity 6"),
    bad("int-offset-uint64-max", lambda: RotaryEmbedding(2, 8, 100.0).rotate(x(T, 2), np.uint64(2**64 - 1)),
        RopeError, "position interval [18446744073709551615, 18446744073709551618) exceeds capacity 8"),
    bad("int-offset-negative-int16", lambda: attention().forward(x(1, T, D), np.int16(-1)),
        MultiHeadAttentionError, "position offset must be non-negative, got np.int16(-1)"),
    ok("int-offset-int8-inside-a-long-table", lambda: RotaryEmbedding(2, 200, 100.0).rotate(x(10, 2), np.int8(120)),
       shape_is(10, 2)),
    # --- Python integers beyond the float range -------------------------
    bad("huge-int-rope-base", lambda: RotaryEmbedding(4, 8, 10**400), RopeError,
        "RoPE base must be a finite positive number, got an integer of 1329 bits"),
    bad("huge-int-epsilon", lambda: norm(epsilon=10**400), RmsNormError,
        "RMSNorm epsilon must be a finite number >= 0, got an integer of 1329 bits"),
    bad("huge-int-config-base", lambda: block_new(rope_base=10**400), DecoderBlockError,
        "causal multi-head attention: multi-head RoPE configuration: RoPE base must be a finite positive number"),
    bad("huge-int-config-epsilon", lambda: block_new(rms_epsilon=-(10**400)), DecoderBlockError,
        "attention RMSNorm: RMSNorm epsilon must be a finite number >= 0, got an integer of 1329 bits"),
    bad("huge-int-fraction", lambda: norm(epsilon=fractions.Fraction(10**400, 3)), RmsNormError,
        "RMSNorm epsilon must be a finite number >= 0"),
    bad("huge-int-gradcheck-delta", lambda: check(None, np.ones((2, D)), delta=10**400), GradcheckError,
        "gradcheck delta must be a finite positive number, got an integer of 1329 bits"),
    bad("huge-int-past-the-repr-limit", lambda: SplitMix64(10**5000), InitializationError,
        "got an integer of 16610 bits"),
    bad("huge-int-width", lambda: attention_new(model_width=10**400), MultiHeadAttentionError,
        "multi-head weight would hold an integer of 2658 bits values"),
    # --- sizes limited before anything is allocated or drawn -------------
    bad("size-rope-table", lambda: RotaryEmbedding(4, 10**15, 100.0), RopeError,
        f"RoPE table would hold 2000000000000000 values, more than the limit {MAX_SIZE}"),
    bad("size-mha-positions", lambda: attention(max_positions=10**15), MultiHeadAttentionError,
        "multi-head RoPE configuration: RoPE table would hold 1000000000000000 values"),
    bad("size-mha-width", lambda: attention_new(model_width=10**8), MultiHeadAttentionError,
        f"multi-head weight would hold 10000000000000000 values, more than the limit {MAX_SIZE}"),
    bad("size-swiglu-width", lambda: swiglu_new(hidden_width=10**8), SwiGluError,
        "SwiGLU weight would hold 400000000 values"),
    bad("size-rmsnorm-width", lambda: RmsNorm.new("g", 10**8), RmsNormError, "RMSNorm gain would hold 100000000"),
    bad("size-block-width", lambda: block_new(model_width=10**8, heads=2), DecoderBlockError,
        "attention RMSNorm: RMSNorm gain would hold 100000000 values"),
    bad("size-block-ffn", lambda: block_new(feed_forward_width=10**8), DecoderBlockError,
        "SwiGLU feed-forward: SwiGLU weight would hold 400000000 values"),
    bad("size-draws-u64", lambda: SplitMix64(1).next_u64(10**15), InitializationError,
        f"SplitMix64 draw count must be an integer in [0, {MAX_SIZE}], got 1000000000000000"),
    bad("size-draws-f64", lambda: SplitMix64(1).next_f64(MAX_SIZE + 1), InitializationError,
        f"got {MAX_SIZE + 1}"),
    bad("size-empty-weight-draw", lambda: uniform_weight(SplitMix64(1), 1, 0), InitializationError,
        "weight fan-out must be a positive integer, got 0"),
    # --- Tensor inputs and the tape's operators --------------------------
    bad("tensor-input-bytearray", lambda: Tensor(bytearray(b"ab")), TensorError, "got bytearray"),
    bad("tensor-input-memoryview", lambda: Tensor(memoryview(b"ab")), TensorError, "got memoryview"),
    bad("tensor-input-masked-array", lambda: Tensor(np.ma.masked_array([1.0, 2.0], mask=[0, 1])), TensorError,
        "got MaskedArray"),
    bad("tensor-input-masked-array-no-mask", lambda: Tensor(np.ma.masked_array([1.0, 2.0])), TensorError,
        "got MaskedArray"),
    bad("tensor-input-array-raises", lambda: Tensor(ArrayRefuses()), TensorError,
        "tensor expects a rectangular numeric array: RuntimeError: no array today"),
    bad("tensor-input-upstream-array-raises", lambda: (x(1, D) @ eye("w")).backward(ArrayRefuses()), TensorError,
        "backward upstream expects a rectangular numeric array: RuntimeError"),
    ok("tensor-input-numpy-bool-flag", lambda: Tensor([1.0], requires_grad=np.True_),
       lambda tensor: tensor.requires_grad is True),
    bad("tensor-operator-int-times-tensor", lambda: 2 * x(2), TensorError,
        "the tape's operators are +, * and @ with a Tensor on each side"),
    bad("tensor-operator-array-plus-tensor", lambda: np.ones(2) + x(2), TensorError,
        "the tape's operators are +, * and @"),
    bad("tensor-operator-array-matmul-tensor", lambda: np.ones((2, 2)) @ x(2, 2), TensorError,
        "the tape's operators are +, * and @"),
    bad("tensor-operator-minus", lambda: x(2) - x(2), TensorError, "the tape's operators are +, * and @"),
    bad("tensor-operator-divide", lambda: x(2) / x(2), TensorError, "the tape's operators are +, * and @"),
    bad("tensor-operator-power", lambda: x(2) ** 2, TensorError, "the tape's operators are +, * and @"),
    bad("tensor-operator-negate", lambda: -x(2), TensorError, "the tape's operators are +, * and @"),
    bad("tensor-operator-plus-int", lambda: x(2) + 2, TensorError, "add needs Tensor operands, got int"),
    bad("tensor-operator-times-array", lambda: x(2) * np.ones(2), TensorError,
        "mul needs Tensor operands, got ndarray"),
    bad("tensor-operator-shapes", lambda: x(2, 3) + x(4), TensorError,
        "add [2, 3] [4]: operands could not be broadcast together"),
    bad("tensor-operator-vector-matmul-vector", lambda: x(2) @ x(2), TensorError,
        "matmul [2] [2]: the right operand needs two axes or more"),
    bad("tensor-function-array", lambda: matmul(np.ones((2, 2)), x(2, 2)), TensorError,
        "matmul needs Tensor operands, got ndarray"),
    ok("tensor-scalars-multiply", lambda: x() * x(), float64_equal(1.0)),
    # --- nested layers check on every call and name the failing part -----
    bad("nested-second-norm-magnitude", lambda: parts(attention=huge_output_attention()).forward(varied(1, T, D)),
        DecoderBlockError, "feed-forward RMSNorm: RMSNorm: rms_norm [1, 3, 4] [4]: overflow encountered in square"),
    bad("nested-second-norm-zero-row", lambda: zero_after_attention().forward(x(1, 1, D)), DecoderBlockError,
        "feed-forward RMSNorm: RMSNorm with epsilon 0 cannot scale a row whose mean square is 0, got 1 such rows"),
    bad("nested-attention-overflow", lambda: parts(
        attention=attention(query_weight=Parameter("q", BIG * np.eye(D)), key_weight=Parameter("k", BIG * np.eye(D))),
        attention_norm=norm("b.attention_norm.gain")).forward(x(1, T, D)), DecoderBlockError,
        "causal multi-head attention: multi-head: causal attention: matmul"),
    bad("nested-feed-forward-overflow", lambda: parts(feed_forward=swiglu(
        gate=Parameter("g", np.full((D, FF), 1e300)), up=Parameter("u", np.full((D, FF), 1e300)))).forward(
        x(1, T, D)), DecoderBlockError, "SwiGLU feed-forward: SwiGLU: mul [1, 3, 3] [1, 3, 3]: overflow"),
    # --- a class is its one constructor from parts: calling it checks every argument -----
    bad("constructor-attention-junk", lambda: MultiHeadAttention(1, 2, 3, 4, 5, 6, 7), MultiHeadAttentionError,
        "query projection weight must be a Parameter, got int"),
    bad("constructor-swiglu-junk", lambda: SwiGlu(None, None, None), SwiGluError,
        "SwiGLU gate weight must be a Parameter, got NoneType"),
    bad("constructor-rmsnorm-array", lambda: RmsNorm(np.ones(D)), RmsNormError,
        "RMSNorm gain must be a Parameter, got ndarray"),
    bad("constructor-block-junk", lambda: DecoderBlock("a", "b", "c", "d"), DecoderBlockError,
        "decoder-block attention RMSNorm must be a RmsNorm, got str"),
    ok("constructor-attention-holds-four-weights", lambda: MultiHeadAttention(
        eye("q"), eye("k"), eye("v"), eye("o"), H, P, 100.0), lambda layer: layer.parameters().count() == 4 * D * D),
    # --- messages that name the real cause -------------------------------
    bad("message-query-weight-rows", lambda: attention(query_weight=Parameter("q", np.ones((1, D)))),
        MultiHeadAttentionError, "query projection input width must equal model width 4, got 1"),
    ok("message-decimal-base-is-a-number", lambda: RotaryEmbedding(4, 8, decimal.Decimal("100")),
       lambda rope: rope.rope_base == 100.0),
    ok("message-decimal-epsilon-is-a-number", lambda: norm(epsilon=decimal.Decimal("0.5")),
       lambda layer: layer.epsilon == 0.5),
    bad("message-long-repr-cut", lambda: positive_heads(list(range(100))), HeadLayoutError, "..."),
    # --- guards around those causes: inputs that already got the right answer on main ----
    ok("overflow-none-near-the-limit", lambda: parts().forward(varied(1, T, D) * Tensor(1e150)),
       lambda out: np.isfinite(out.output.value).all()),
    bad("int-offset-numpy-bool", lambda: attention().forward(x(1, T, D), np.bool_(True)), MultiHeadAttentionError,
        "position offset must be an integer, got np.True_"),
    ok("int-heads-int8", lambda: attention(heads=np.int8(2)), lambda layer: layer.heads == 2),
    bad("int-heads-numpy-bool", lambda: split_heads(x(1, T, D), np.bool_(True)), HeadLayoutError,
        "head count must be a positive integer, got np.True_"),
    ok("int-seed-uint64-max", lambda: SplitMix64(np.uint64(2**64 - 1)), lambda rng: rng.state == 2**64 - 1),
    bad("int-seed-int8-negative", lambda: SplitMix64(np.int8(-1)), InitializationError, "got np.int8(-1)"),
    ok("int-draws-uint8", lambda: SplitMix64(1).next_u64(np.uint8(3)), shape_is(3)),
    bad("huge-int-offset", lambda: attention().forward(x(1, T, D), 10**400), MultiHeadAttentionError,
        "exceeds capacity 6"),
    ok("size-at-the-limit", lambda: SplitMix64(1).next_u64(2**10), shape_is(2**10)),
    bad("nested-released-inside-a-part", lambda: split_heads(released(1, T, D), H), HeadLayoutError,
        "head split input tensor of shape [1, 3, 4] belongs to a released tape"),
    bad("message-output-weight-rows", lambda: attention(output_weight=Parameter("o", np.ones((2, D)))),
        MultiHeadAttentionError, "output projection input width must equal model width 4, got 2"),
    bad("message-decimal-nan", lambda: norm(epsilon=decimal.Decimal("NaN")), RmsNormError, "got Decimal('NaN')"),
    bad("message-decimal-signalling-nan", lambda: norm(epsilon=decimal.Decimal("sNaN")), RmsNormError,
        "got Decimal('sNaN')"),
]


# --- builders of the training and lab rows: every entry point of the loop, Adam, the labs -

V = 3                               # the vocabulary of the bigram rows
TOKENS_V = np.array([[0, 1, 2]])    # [B, T] = [1, 3]
DEFAULT = object()                  # "leave this argument as the row's loop has it"


def bigram():
    """The smallest model ``train`` can move: a table of logits ``[V, V]`` read by one-hot rows."""
    table = Parameter("table", np.zeros((V, V)))
    return (lambda inputs: Tensor(np.eye(V)[inputs]) @ table), table


def loop(steps=2, *, model=DEFAULT, batches=DEFAULT, optimizer=DEFAULT, loss=cross_entropy, after=None):
    """``fit`` of the bigram on the cyclic task, with one argument replaced."""
    bigram_model, table = bigram()
    return fit(bigram_model if model is DEFAULT else model,
               (lambda step: (TOKENS_V, (TOKENS_V + 1) % V)) if batches is DEFAULT else batches,
               Adam([table]) if optimizer is DEFAULT else optimizer, steps, loss, after)


def with_targets(targets):
    """``train`` of the bigram on fixed inputs and these targets."""
    model, table = bigram()
    return train(model, lambda step: (TOKENS_V, targets), Adam([table]), 2)


def logits_from(step_from, size=1e308):
    """Five steps whose logits ``(x, -x)`` reach ``x = size`` from step ``step_from`` on: their
    cross-entropy overflows there (the logits are more than 1.8e308 apart)."""
    w = Parameter("w", np.eye(2))

    def batches(step):
        value = size if step >= step_from else 1.0
        return np.array([[[value, -value]]]), np.array([[0]])

    return train(lambda inputs: Tensor(inputs) @ w, batches, Adam([w]), 5)


def loss_nan_from(step_from):
    """Five bigram steps whose loss is NaN from step ``step_from`` on."""
    calls = []

    def loss(output, targets):
        calls.append(step_from)
        value, grad = cross_entropy(output, targets)
        return (NAN if len(calls) > step_from else value), grad

    return loop(5, loss=loss)


def diverged(step):
    return lambda run: run.diverged_at == step and len(run.losses) == step and f"step {step}" in run.message


def adam_step(*gradients):
    """One step of Adam over a parameter ``[2]`` of ones per gradient."""
    parameters = [Parameter(f"p{i}", np.ones(2)) for i in range(len(gradients))]
    for parameter, gradient in zip(parameters, gradients, strict=True):
        parameter.grad = gradient
    Adam(parameters).step()


def adam_rate_set(lr):
    adam = Adam([Parameter("w", np.ones(2))])
    adam.lr = lr


def many_weights(count):
    """Parameters of ``count`` zeros in all, a few large ones."""
    sizes = [2**22] * (count // 2**22) + [count % 2**22]
    return [Parameter(f"w{i}", np.zeros(size)) for i, size in enumerate(sizes) if size]


TINY_LAB = {"width": 4, "heads": 2, "vocabulary": 5, "tokens": 4}
SMALL_DEPTH = {"layers": 3, "width": 8, "heads": 2, "ffn_width": 12, "batch": 2, "tokens": 3, "vocabulary": 5,
               "seed": 5}


def short_training():
    """Three steps of the training lab on a tiny model."""
    return training_lab.train_stack(layers=1, steps=3, batch=2, period=2, **TINY_LAB)


def tiny_model():
    return training_lab.new_model(layers=1, **TINY_LAB)


def depth_run(**changes):
    return depth_lab.run(**{**SMALL_DEPTH, **changes})


def with_stream_gradients(values):
    return dataclasses.replace(depth_run(), stream_gradients=np.array(values, dtype=float))


def quiet_attention():
    """A layer of the two-job task whose output is zero at every position."""
    names = ("learned.query.weight", "learned.key.weight", "learned.value.weight", "learned.output.weight")
    return MultiHeadAttention(*(Parameter(n, np.zeros((8, 8))) for n in names), heads=2, max_positions=6,
                              rope_base=100.0)


ROWS += [
    # --- the training loop's arguments: checked before the first step -------------------
    ok("training-loop", lambda: loop(3), lambda run: not run.diverged and len(run.losses) == 3 and not run.message),
    bad("training-steps-zero", lambda: loop(0), TrainingError, "got 0"),
    bad("training-steps-negative", lambda: loop(-1), TrainingError, "got -1"),
    bad("training-steps-billion", lambda: loop(10**9), TrainingError, "got 1000000000"),
    bad("training-steps-float", lambda: loop(2.5), TrainingError, "got 2.5"),
    bad("training-steps-bool", lambda: loop(True), TrainingError, "got True"),
    bad("training-steps-str", lambda: loop("3"), TrainingError, "got '3'"),
    bad("training-optimizer-none", lambda: loop(optimizer=None), TrainingError, "got NoneType"),
    bad("training-optimizer-parameters", lambda: loop(optimizer=[Parameter("w", 1.0)]), TrainingError, "got list"),
    bad("training-model-not-callable", lambda: loop(model=5), TrainingError, "got int"),
    bad("training-batches-not-callable", lambda: loop(batches=[TOKENS_V]), TrainingError, "got list"),
    bad("training-loss-not-callable", lambda: loop(loss="mse"), TrainingError, "got str"),
    bad("training-after-not-callable", lambda: loop(after=5), TrainingError, "got int"),
    # --- what one step gets back: batches, the model's output, the loss -------------------
    bad("training-batch-not-a-pair", lambda: loop(batches=lambda step: TOKENS_V), TrainingError, "got array("),
    bad("training-model-returns-array", lambda: loop(model=lambda inputs: np.zeros((1, 3, V))), TrainingError,
        "got ndarray"),
    bad("training-loss-returns-a-number", lambda: loop(loss=lambda output, targets: 1.0), TrainingError, "got 1.0"),
    bad("training-targets-float", lambda: with_targets(np.array([[1.0, 2.0, 0.0]])), TrainingError,
        "got dtype float64"),
    bad("training-targets-minus-one", lambda: with_targets(np.array([[1, -1, 0]])), TrainingError, "got -1"),
    bad("training-targets-past-the-vocabulary", lambda: with_targets(np.array([[1, 2, 3]])), TrainingError,
        "got 3"),
    bad("training-targets-shape", lambda: with_targets(np.array([[1, 2]])), TrainingError, "got [1, 2]"),
    # --- a typed error is raised, never a verdict; an overflow after updates is one --------
    bad("training-typed-error-of-the-model-is-raised", lambda: loop(
        model=lambda inputs: attention().forward(x(1, T, 5)).output), MultiHeadAttentionError, "got 5"),
    bad("training-typed-error-of-the-loss-is-raised", lambda: loop(
        loss=lambda output, targets: cross_entropy(output, targets + 5)), TrainingError, "got 6"),
    bad("training-overflow-before-any-update-is-raised", lambda: logits_from(0), TrainingError, "1e+308"),
    ok("training-overflow-after-updates-diverges-at-its-step", lambda: logits_from(2), diverged(2)),
    ok("training-loss-not-finite-after-updates-diverges-at-its-step", lambda: loss_nan_from(3), diverged(3)),
    bad("training-loss-not-finite-before-any-update-is-raised", lambda: loss_nan_from(0), TrainingError, "nan"),
    bad("training-loss-past-the-float-range-is-not-finite", lambda: loop(
        loss=lambda output, targets: (10**400, np.zeros(output.shape))), TrainingError, "inf"),
    # --- cross-entropy: finite logits, integer targets inside the vocabulary ---------------
    bad("cross-entropy-targets-float", lambda: cross_entropy(np.zeros((1, 2, V)), np.array([[0.0, 1.0]])),
        TrainingError, "got dtype float64"),
    bad("cross-entropy-targets-bool", lambda: cross_entropy(np.zeros((1, 2, V)), np.array([[True, False]])),
        TrainingError, "got dtype bool"),
    bad("cross-entropy-target-minus-one", lambda: cross_entropy(np.zeros((1, 2, V)), np.array([[0, -1]])),
        TrainingError, "got -1"),
    bad("cross-entropy-target-vocabulary", lambda: cross_entropy(np.zeros((1, 2, V)), np.array([[V, 0]])),
        TrainingError, "got 3"),
    bad("cross-entropy-targets-shape", lambda: cross_entropy(np.zeros((1, 2, V)), np.array([[0, 1, 2]])),
        TrainingError, "got [1, 3]"),
    bad("cross-entropy-no-targets", lambda: cross_entropy(np.zeros((1, 0, V)), np.zeros((1, 0), dtype=int)),
        TrainingError, "got [1, 0]"),
    bad("cross-entropy-logits-nan", lambda: cross_entropy(np.array([[[0.0, NAN, 1.0]]]), np.array([[0]])),
        TrainingError, "got 1 NaN or infinite of 3"),
    bad("cross-entropy-logits-inf", lambda: cross_entropy(np.array([[[0.0, INF, 1.0]]]), np.array([[0]])),
        TrainingError, "got 1 NaN or infinite of 3"),
    bad("cross-entropy-logits-text", lambda: cross_entropy(np.array([[["a", "b"]]]), np.array([[0]])),
        TrainingError, "got dtype <U1"),
    bad("cross-entropy-logits-far-apart", lambda: cross_entropy(np.array([[[1e308, -1e308]]]), np.array([[0]])),
        TrainingError, "1e+308"),
    # --- Adam: every gradient checked and every update computed before one parameter moves -
    bad("adam-later-gradient-of-another-shape", lambda: adam_step(np.ones(2), np.ones(3)), OptimizerError,
        "got float64 [3]"),
    bad("adam-gradient-list", lambda: adam_step([1.0, 1.0]), OptimizerError, "got list"),
    bad("adam-gradient-bool", lambda: adam_step(np.array([True, False])), OptimizerError, "got bool [2]"),
    bad("adam-gradient-squares-past-float64", lambda: adam_step(np.ones(2), np.full(2, 1e200)), OptimizerError,
        "1e+200"),
    bad("adam-learning-rate-set-to-nan", lambda: adam_rate_set(NAN), OptimizerError, "got nan"),
    bad("adam-learning-rate-set-to-zero", lambda: adam_rate_set(0.0), OptimizerError, "got 0.0"),
    bad("adam-rate-of-a-negative-step", lambda: Adam([]).rate(-5), OptimizerError, "got -5"),
    bad("adam-rate-of-step-zero", lambda: Adam([]).rate(0), OptimizerError, "got 0"),
    bad("adam-rate-of-a-float-step", lambda: Adam([]).rate(1.5), OptimizerError, "got 1.5"),
    bad("adam-rate-of-no-step", lambda: Adam([]).rate(None), OptimizerError, "got None"),
    ok("adam-rate-of-a-huge-step", lambda: Adam([], lr=0.1, warmup=3).rate(10**400), lambda rate: rate == 0.1),
    # --- chapter 30's learned heads: one checked Settings ----------------------------------
    bad("heads-lab-steps-negative", lambda: learned_heads.learn(heads=2, steps=-1), LearnedHeadsError, "got -1"),
    bad("heads-lab-steps-zero", lambda: learned_heads.learn(heads=2, steps=0), LearnedHeadsError, "got 0"),
    bad("heads-lab-steps-billion", lambda: learned_heads.learn(heads=2, steps=10**9), LearnedHeadsError,
        "got 1000000000"),
    bad("heads-lab-steps-float", lambda: learned_heads.learn(heads=2, steps=1.5), LearnedHeadsError, "got 1.5"),
    bad("heads-lab-every-true", lambda: learned_heads.learn(heads=2, steps=3, every=True), LearnedHeadsError,
        "got True"),
    bad("heads-lab-every-zero", lambda: learned_heads.learn(heads=2, steps=3, every=0), LearnedHeadsError,
        "got 0"),
    bad("heads-lab-every-past-the-steps", lambda: learned_heads.learn(heads=2, steps=3, every=4),
        LearnedHeadsError, "got 4"),
    bad("heads-lab-heads-indivisible", lambda: learned_heads.learn(heads=3), LearnedHeadsError, "got 3"),
    bad("heads-lab-heads-odd-width", lambda: learned_heads.learn(heads=8), LearnedHeadsError, "got 8"),
    bad("heads-lab-learning-rate-nan", lambda: learned_heads.learn(heads=2, learning_rate=NAN), LearnedHeadsError,
        "got nan"),
    bad("heads-lab-seed-negative", lambda: learned_heads.learn(heads=2, seed=-1), LearnedHeadsError, "got -1"),
    bad("heads-lab-rope-base-zero", lambda: learned_heads.learn(heads=2, rope_base=0), LearnedHeadsError, "got 0"),
    bad("heads-lab-unknown-setting", lambda: learned_heads.learn(heads=2, depth=3), LearnedHeadsError, "'depth'"),
    bad("heads-lab-batch-step-negative", lambda: learned_heads.task_batch(-1), LearnedHeadsError, "got -1"),
    bad("heads-lab-batch-size-zero", lambda: learned_heads.task_batch(0, size=0), LearnedHeadsError, "got 0"),
    bad("heads-lab-batch-too-large", lambda: learned_heads.task_batch(0, size=10**12), LearnedHeadsError,
        "got 1000000000000"),
    bad("heads-lab-loss-batch-mismatch", lambda: learned_heads.two_job_loss(np.zeros((1, 6, 8)),
                                                                           np.zeros((2, 4, 2))),
        LearnedHeadsError, "got [2, 4, 2]"),
    bad("heads-lab-loss-nan-output", lambda: learned_heads.two_job_loss(np.full((1, 6, 8), NAN),
                                                                       np.zeros((1, 4, 2))),
        LearnedHeadsError, "got 48 NaN or infinite of 48"),
    bad("heads-lab-loss-overflows", lambda: learned_heads.two_job_loss(np.full((1, 6, 8), 1e200),
                                                                      np.zeros((1, 4, 2))),
        LearnedHeadsError, "1e+200"),
    bad("heads-lab-layer-none", lambda: learned_heads.held_out_loss(None), LearnedHeadsError, "got NoneType"),
    bad("heads-lab-spread-of-no-layer", lambda: learned_heads.held_out_spread("layer"), LearnedHeadsError,
        "got str"),
    bad("heads-lab-spread-of-another-width", lambda: learned_heads.held_out_spread(attention()), LearnedHeadsError,
        "of width 8"),
    bad("heads-lab-layer-of-another-width", lambda: learned_heads.jobs(attention()), LearnedHeadsError,
        "got width 4"),
    bad("heads-lab-line-of-no-pairs", lambda: learned_heads.line_bound(np.zeros((0, 2))), LearnedHeadsError,
        "got 0"),
    bad("heads-lab-line-of-nan", lambda: learned_heads.line_bound(np.array([[NAN, 1.0], [0.0, 1.0]])),
        LearnedHeadsError, "got 1 NaN or infinite of 4"),
    bad("lesson30-jacobian-of-text", lambda: lesson30.softmax_jacobian_norm("x"), CausalAttentionError,
        "must be numbers"),
    bad("lesson30-jacobian-of-a-scalar", lambda: lesson30.softmax_jacobian_norm(0.5), CausalAttentionError,
        "got shape []"),
    bad("lesson30-jacobian-of-nan", lambda: lesson30.softmax_jacobian_norm(np.array([NAN, 1.0])), CausalAttentionError,
        "finite and in [0, 1]"),
    bad("lesson30-jacobian-spread-no-widths", lambda: lesson30.jacobian_spread(()), CausalAttentionError,
        "got ()"),
    bad("lesson30-jacobian-spread-zero-width", lambda: lesson30.jacobian_spread((0, 4)), CausalAttentionError,
        "got (0, 4)"),
    bad("lesson30-jacobian-spread-float-rows", lambda: lesson30.jacobian_spread(rows=2.5), CausalAttentionError,
        "got 2.5"),
    bad("lesson30-jacobian-spread-zero-samples", lambda: lesson30.jacobian_spread(samples=0),
        CausalAttentionError, "got 0"),
    bad("lesson30-jacobian-spread-too-many-scores", lambda: lesson30.jacobian_spread(rows=100_000, samples=1000),
        CausalAttentionError, "more than 2**24"),
    bad("figure30-score-spread-zero-width", lambda: plots30.score_spread(np.array([0.0, 4.0]), [1.0, 2.0],
        [1.0, 1.0], [0.5, 0.6], [0.4, 0.4], 8), CausalAttentionError, "must be positive"),
    bad("figure30-score-spread-nan", lambda: plots30.score_spread(np.array([2.0, 4.0]), [NAN, 2.0],
        [1.0, 1.0], [0.5, 0.6], [0.4, 0.4], 8), CausalAttentionError, "must be positive"),
    bad("lesson30-jacobian-negative", lambda: lesson30.softmax_jacobian_norm(np.array([-0.5, 1.5])),
        CausalAttentionError, "finite and in [0, 1]"),
    bad("figure30-split-odd-heads", lambda: plots30.split_layout(width=4, heads=3), HeadLayoutError,
        "width=4, heads=3"),
    bad("figure30-split-zero-tokens", lambda: plots30.split_layout(tokens=0), HeadLayoutError, "got 0"),
    bad("figure30-split-float-width", lambda: plots30.split_layout(width=4.0), HeadLayoutError, "got 4.0"),
    bad("figure30-split-huge", lambda: plots30.split_layout(tokens=10**9), HeadLayoutError, "got 1000000000"),
    bad("figure30-line-targets-of-one-column", lambda: plots30.one_head_line(np.zeros((4, 1)), [("a", LINE)]),
        LearnedHeadsError, "targets must be real points [N, 2] with N >= 2, got [4, 1]"),
    bad("figure30-line-targets-of-text", lambda: plots30.one_head_line("xy", [("a", LINE)]), LearnedHeadsError,
        "got str"),
    bad("figure30-line-targets-nan", lambda: plots30.one_head_line(np.array([[NAN, 0.0], [1.0, 1.0]]),
        [("a", LINE)]), LearnedHeadsError, "targets must be finite, got 1 NaN or infinite of 4"),
    bad("figure30-line-no-layers", lambda: plots30.one_head_line(LINE, []), LearnedHeadsError, "got none"),
    bad("figure30-line-one-point", lambda: plots30.one_head_line(LINE, [("a", LINE[:1])]), LearnedHeadsError,
        "outputs of layer 0 must be real points [N, 2] with N >= 2, got [1, 2]"),
    bad("figure30-line-outputs-off-a-line", lambda: plots30.one_head_line(LINE, [("a", np.eye(3, 2))]),
        LearnedHeadsError, "outputs of layer 0 must spread along one line, got singular values"),
    bad("figure30-line-outputs-one-point", lambda: plots30.one_head_line(LINE, [("a", np.ones((3, 2)))]),
        LearnedHeadsError, "got singular values 0 and 0"),
    bad("heads-lab-pairs-zero-sequences", lambda: learned_heads.output_pairs(learned_heads.random_layer(heads=2),
                                                                             sequences=0),
        LearnedHeadsError, "got 0"),
    bad("heads-lab-pairs-negative-sequences", lambda: learned_heads.output_pairs(
        learned_heads.random_layer(heads=2), sequences=-1), LearnedHeadsError, "got -1"),
    bad("heads-lab-correlation-of-constant-columns", lambda: learned_heads.column_correlation(quiet_attention()),
        LearnedHeadsError, "got spreads 0 and 0"),
    # --- chapter 31's training lab: the readings and the model's tokens -------------------
    bad("block-diagram-missing-shape", lambda: plots31.block_diagram({"x": "[1, 3, 4]"}, 4), DepthLabError,
        "must map x, N_a"),
    bad("block-diagram-float-width", lambda: plots31.block_diagram(
        dict.fromkeys(("x", "N_a", "A", "x'", "N_f", "F", "y", "weights"), "[1]"), 4.0), DepthLabError, "got 4.0"),
    bad("depth-figure-no-panels", lambda: plots31.depth_profiles({}, depth_lab.LABELS), DepthLabError,
        "got dict of 0"),
    bad("depth-figure-unknown-variant", lambda: plots31.depth_profiles({"c": {"deep": None}}, depth_lab.LABELS),
        DepthLabError, "variant 'deep'"),
    bad("depth-figure-not-a-run", lambda: plots31.depth_profiles({"c": {"pre": [1.0]}}, depth_lab.LABELS),
        DepthLabError, "got list"),
    bad("depth-figure-zero-gradient", lambda: plots31.depth_profiles(
        {"c": {"pre": dataclasses.replace(depth_run(layers=2), gradient_norms=np.zeros(2))}}, depth_lab.LABELS),
        DepthLabError, "got [0, 0]"),
    bad("rnn-figure-text-states", lambda: plots31.sequential_vs_parallel(["a", "b"]), DepthLabError,
        "must be numbers"),
    bad("rnn-figure-ragged-inputs", lambda: plots31.sequential_vs_parallel([0.1, 0.2], [1.0]), DepthLabError,
        "must be numbers of one length"),
    bad("rnn-figure-scalar-state", lambda: plots31.sequential_vs_parallel(0.5), DepthLabError,
        "1 to 12 finite states"),
    bad("rnn-figure-nan-state", lambda: plots31.sequential_vs_parallel([NAN, 0.2]), DepthLabError,
        "1 to 12 finite states"),
    bad("seed-bands-no-panels", lambda: plots31.seed_bands({}), DepthLabError, "got dict of 0"),
    bad("seed-bands-ragged-runs", lambda: plots31.seed_bands({"a": {"b": [[1.0, 2.0], [1.0]]}}), DepthLabError,
        "got shapes [(1,), (2,)]"),
    bad("seed-bands-nan-run", lambda: plots31.seed_bands({"a": {"b": [[1.0, NAN]]}}), DepthLabError,
        "must be finite"),
    bad("seed-bands-no-runs", lambda: plots31.seed_bands({"a": {"b": []}}), DepthLabError, "got 0"),
    bad("seed-bands-text-runs", lambda: plots31.seed_bands({"a": {"b": [["x"]]}}), DepthLabError,
        "must be runs of numbers"),
    bad("seed-bands-window-zero", lambda: plots31.seed_bands({"a": {"b": [[1.0]]}}, window=0), DepthLabError,
        "got 0"),
    bad("seed-bands-window-bool", lambda: plots31.seed_bands({"a": {"b": [[1.0]]}}, window=True), DepthLabError,
        "got True"),
    bad("seed-bands-height-huge", lambda: plots31.seed_bands({"a": {"b": [[1.0]]}}, height=1e9), DepthLabError,
        "got 1000000000.0"),
    bad("seed-bands-reference-nan", lambda: plots31.seed_bands({"a": {"b": [[1.0]]}}, references={"r": NAN}),
        DepthLabError, "references['r']"),
    bad("seed-bands-marks-list", lambda: plots31.seed_bands({"a": {"b": [[1.0]]}}, marks=[40]), DepthLabError,
        "got list"),
    bad("seed-bands-too-many-labels", lambda: plots31.seed_bands({"a": {str(k): [[1.0]] for k in range(5)}}),
        DepthLabError, "1 to 4 labelled groups"),
    bad("training-lab-seeds-none", lambda: training_lab.train_seeds(seeds=[]), DepthLabError, "got []"),
    bad("training-lab-seeds-text", lambda: training_lab.train_seeds(seeds="31"), DepthLabError, "got '31'"),
    bad("training-lab-seeds-too-many", lambda: training_lab.train_seeds(seeds=range(2000)), DepthLabError,
        "1 to 1000 seeds"),
    bad("training-lab-seeds-negative", lambda: training_lab.train_seeds(seeds=[31, -1], steps=1), DepthLabError,
        "got -1"),
    bad("training-lab-seeds-workers-zero", lambda: training_lab.train_seeds(seeds=[31], workers=0), DepthLabError,
        "workers"),
    bad("training-lab-seeds-unknown-setting", lambda: training_lab.train_seeds(seeds=[31], depth=2),
        DepthLabError, "'depth'"),
    bad("training-lab-smoothed-nan", lambda: training_lab.smoothed([NAN, 1.0]), DepthLabError,
        "got 1 NaN or infinite of 2"),
    bad("training-lab-smoothed-nothing", lambda: training_lab.smoothed([]), DepthLabError, "got shape [0]"),
    bad("training-lab-smoothed-table", lambda: training_lab.smoothed(np.ones((2, 2))), DepthLabError,
        "got shape [2, 2]"),
    bad("training-lab-final-loss-of-none", lambda: training_lab.final_loss(short_training(), last=0),
        DepthLabError, "got 0"),
    bad("training-lab-final-loss-negative", lambda: training_lab.final_loss(short_training(), last=-2),
        DepthLabError, "got -2"),
    bad("training-lab-level-nan", lambda: training_lab.first_below(short_training(), level=NAN), DepthLabError,
        "got nan"),
    bad("training-lab-verdict-of-none", lambda: training_lab.verdict(None), DepthLabError, "got NoneType"),
    bad("training-lab-smoothed-huge-integer", lambda: training_lab.smoothed([10**400]), DepthLabError,
        "integer of 1329 bits"),
    bad("training-lab-table-level-text", lambda: training_lab.training_table([short_training()], "2"),
        DepthLabError, "got '2'"),
    bad("training-lab-seeds-level-list", lambda: training_lab.seeds_table({"a": [short_training()]}, []),
        DepthLabError, "got []"),
    bad("training-lab-context-free-loss-zero", lambda: training_lab.context_free_loss(0), DepthLabError, "got 0"),
    bad("training-lab-context-free-loss-vocabulary-zero", lambda: training_lab.context_free_loss(vocabulary=0),
        DepthLabError, "got 0"),
    bad("training-lab-context-free-loss-vocabulary-float", lambda: training_lab.context_free_loss(vocabulary=2.5),
        DepthLabError, "got 2.5"),
    bad("training-lab-best-loss-no-tokens", lambda: training_lab.best_loss(tokens=0), DepthLabError, "got 0"),
    bad("training-lab-token-past-the-vocabulary", lambda: tiny_model()(np.array([[0, 5]])), DepthLabError,
        "got 5"),
    bad("training-lab-token-minus-one", lambda: tiny_model()(np.array([[-1, 0]])), DepthLabError, "got -1"),
    bad("training-lab-token-float", lambda: tiny_model()(np.array([[0.5, 1.0]])), DepthLabError,
        "got dtype float64"),
    bad("training-lab-tokens-past-the-positions", lambda: tiny_model().top(np.zeros((1, 5), dtype=int)),
        DepthLabError, "got dtype int64 [1, 5]"),
    # --- the depth lab and its theory ----------------------------------------------------
    bad("depth-lab-unknown-setting", lambda: depth_lab.run(depth=3), DepthLabError, "'depth'"),
    bad("depth-lab-compare-with-a-variant", lambda: depth_lab.compare(variant="post"), DepthLabError,
        "got variant='post'"),
    bad("depth-lab-short-nan", lambda: depth_lab.short(NAN), DepthLabError, "got nan"),
    bad("depth-lab-short-huge-integer", lambda: depth_lab.short(10**400), DepthLabError,
        "got an integer of 1329 bits"),
    bad("depth-lab-table-layers-a-number", lambda: depth_lab.summary_table({"pre": depth_run()}, 1.5),
        DepthLabError, "got 1.5"),
    bad("depth-lab-table-of-none", lambda: depth_lab.summary_table(None), DepthLabError, "got None"),
    bad("depth-lab-parts-of-none", lambda: depth_lab.parts_of(None), DepthLabError, "got NoneType"),
    bad("depth-lab-branches-of-none", lambda: depth_lab.keep_branches(None, "both", "pre"), DepthLabError,
        "got NoneType"),
    bad("depth-lab-init-unknown", lambda: depth_run(init="he"), DepthLabError, "init must be one of"),
    bad("depth-lab-init-not-text", lambda: depth_run(init=1), DepthLabError, "got 1"),
    bad("depth-lab-final-norm-not-a-flag", lambda: depth_run(final_norm="no"), DepthLabError,
        "final_norm must be True or False, got 'no'"),
    bad("depth-lab-final-norm-one", lambda: depth_run(final_norm=1), DepthLabError, "final_norm"),
    bad("depth-lab-pre-wiring-of-none", lambda: depth_lab.pre_norm(None, x(1, 2, 4)), DepthLabError,
        "pre wiring parts must be Parts, got NoneType"),
    bad("depth-lab-post-wiring-of-an-array", lambda: depth_lab.post_norm(
        depth_lab.parts_of(depth_lab.build_stack(**SMALL_DEPTH)[0]), np.ones((1, 2, 8))), DepthLabError,
        "post wiring input must be a Tensor [B, T, d], got ndarray"),
    bad("depth-lab-none-wiring-of-a-row", lambda: depth_lab.no_residual(
        depth_lab.parts_of(depth_lab.build_stack(**SMALL_DEPTH)[0]), x(8)), DepthLabError,
        "got Tensor of shape [8]"),
    bad("gain-random-upstream-two-blocks", lambda: gradient_gain.random_upstream_gain(
        **{**SMALL_DEPTH, "layers": 2}), DepthLabError, "got layers=2"),
    bad("gain-random-upstream-unknown-setting", lambda: gradient_gain.random_upstream_gain(depth=3),
        DepthLabError, "'depth'"),
    bad("gain-random-upstream-bad-init", lambda: gradient_gain.random_upstream_gain(init="lecun"),
        DepthLabError, "got 'lecun'"),
    bad("gain-measured-zero-gradient", lambda: gradient_gain.measured_gain(with_stream_gradients([1, 1, 0, 1])),
        DepthLabError, "got 0.0 at layer 2"),
    bad("gain-measured-two-blocks", lambda: gradient_gain.measured_gain(depth_run(layers=2)), DepthLabError,
        "got 2"),
    bad("gain-measured-none", lambda: gradient_gain.measured_gain(None), DepthLabError, "got NoneType"),
    bad("gain-pre-over-a-zero-stream", lambda: gradient_gain.ffn_gains().pre(0.0), DepthLabError, "got 0.0"),
    bad("gain-pre-over-a-nan-stream", lambda: gradient_gain.ffn_gains().pre(NAN), DepthLabError, "got nan"),
    bad("gain-pre-over-a-tiny-stream", lambda: gradient_gain.ffn_gains().pre(1e-200), DepthLabError, "1e-200"),
    ok("gain-pre-over-a-huge-stream", lambda: gradient_gain.ffn_gains().pre(1e300), lambda gain: gain == 1.0),
    bad("gain-negative", lambda: gradient_gain.BranchGains("swiglu", 1.0, -1.0, 0.5), DepthLabError, "got -1.0"),
    bad("gain-predicted-without-gains", lambda: gradient_gain.predicted_pre_ratio(depth_run(), None),
        DepthLabError, "got DepthRun and NoneType"),
    bad("gain-expectation-negative-spread", lambda: gradient_gain.expectation(np.square, -1.0), DepthLabError,
        "got -1.0"),
    bad("gain-expectation-overflows", lambda: gradient_gain.expectation(lambda a: np.exp(1000 * a), 1.0),
        DepthLabError, "overflow"),
    bad("gain-expectation-of-a-number", lambda: gradient_gain.expectation(3.0, 1.0), DepthLabError, "got float"),
    # --- sizes: weights, optimiser state and activations counted before anything is made ---
    bad("size-adam-moments", lambda: Adam(many_weights(MAX_SIZE // 2 + 1)), OptimizerError,
        f"would hold {MAX_SIZE + 2} values"),
    bad("size-depth-lab-weights", lambda: depth_lab.run(layers=64, width=256, heads=4), DepthLabError,
        "limit 33554432"),
    bad("size-training-lab-weights-and-adam", lambda: training_lab.train_stack(layers=64, width=128, steps=1),
        DepthLabError, "limit 33554432"),
]


def positive_heads(heads):
    return split_heads(x(1, T, D), heads)


def test_row_ids_are_unique():
    ids = [row.id for row in ROWS]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("row", ROWS, ids=[row.id for row in ROWS])
def test_bad_input_gets_its_documented_outcome(row, capfd):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a NumPy RuntimeWarning is a raw escape too
        try:
            result = row.attempt()
        except LlmFromScratchError as error:
            if row.error is None:
                pytest.fail(f"documented as accepted, but raised {type(error).__name__}: {error}")
            assert type(error) is row.error, f"expected {row.error.__name__}, got {type(error).__name__}: {error}"
            assert row.message in str(error), f"{row.message!r} not in {str(error)!r}"
            assert capfd.readouterr().err == ""
            return
        except Exception as error:
            pytest.fail(f"raw {type(error).__name__} escaped: {error}")
    assert capfd.readouterr().err == ""
    if row.error is not None:
        pytest.fail(f"expected {row.error.__name__} containing {row.message!r}, but the input was accepted")
    if row.check is not None:
        assert row.check(result), f"accepted, but the result failed its check: {result!r}"


# --- transactional initialisation -------------------------------------------------------

FAILING_INITS = [
    ("mha-indivisible", lambda rng: MultiHeadAttention.new("a", 4, 3, 6, 100.0, rng), MultiHeadAttentionError),
    ("mha-bad-base", lambda rng: MultiHeadAttention.new("a", 4, 2, 6, NAN, rng), MultiHeadAttentionError),
    ("mha-bad-prefix", lambda rng: MultiHeadAttention.new(None, 4, 2, 6, 100.0, rng), MultiHeadAttentionError),
    # the four weights are drawn before the RoPE table is refused: from a copy of the generator
    ("mha-fails-after-drawing", lambda rng: MultiHeadAttention.new("a", 4, 2, 10**15, 100.0, rng),
     MultiHeadAttentionError),
    ("mha-too-wide", lambda rng: MultiHeadAttention.new("a", 10**8, 2, 6, 100.0, rng), MultiHeadAttentionError),
    ("swiglu-zero-hidden", lambda rng: SwiGlu.new("f", 4, 0, 4, rng), SwiGluError),
    ("swiglu-bad-prefix", lambda rng: SwiGlu.new("", 4, 3, 4, rng), SwiGluError),
    ("swiglu-too-wide", lambda rng: SwiGlu.new("f", 4, 10**8, 4, rng), SwiGluError),
    ("block-bad-epsilon", lambda rng: DecoderBlock.new("b", config(rms_epsilon=-1.0), rng), DecoderBlockError),
    # attention draws its 64 weights from the block's copy of the generator before SwiGLU refuses
    ("block-fails-after-attention-drew", lambda rng: DecoderBlock.new("b", config(feed_forward_width=0), rng),
     DecoderBlockError),
    ("block-ffn-too-wide", lambda rng: DecoderBlock.new("b", config(feed_forward_width=10**8), rng),
     DecoderBlockError),
    ("block-bad-prefix", lambda rng: DecoderBlock.new(None, config(), rng), DecoderBlockError),
    ("draws-too-many", lambda rng: rng.next_f64(10**15), InitializationError),
]

SUCCEEDING_INITS = [  # (id, build, number of draws)
    ("mha", lambda rng: MultiHeadAttention.new("a", 4, 2, 6, 100.0, rng), 4 * 4 * 4),
    ("swiglu", lambda rng: SwiGlu.new("f", 4, 3, 5, rng), 4 * 3 + 4 * 3 + 3 * 5),
    ("block", lambda rng: DecoderBlock.new("b", config(), rng), 4 * D * D + 3 * D * FF),
]


@pytest.mark.parametrize("build, error", [case[1:] for case in FAILING_INITS], ids=[c[0] for c in FAILING_INITS])
def test_a_failed_initialisation_leaves_the_generator_unchanged(build, error):
    rng = SplitMix64(12345)
    with pytest.raises(error):
        build(rng)
    assert rng.state == 12345


@pytest.mark.parametrize("build, draws", [case[1:] for case in SUCCEEDING_INITS],
                         ids=[c[0] for c in SUCCEEDING_INITS])
def test_a_successful_initialisation_advances_the_generator_by_its_draws(build, draws):
    rng = SplitMix64(12345)
    first = build(rng)
    assert rng.state == (12345 + draws * GAMMA) & MASK
    again = build(SplitMix64(12345))  # same seed, same weights
    assert all(np.array_equal(p.value, q.value) for p, q in zip(first.parameters(), again.parameters(), strict=True))


# --- a nested component's error, re-raised with the outer stage and chained ------------

CHAINS = [  # (id, attempt, the error raised and its prefix, the component error it comes from)
    ("mha-new-rope", lambda: attention_new(rope_base=-1.0),
     MultiHeadAttentionError, "multi-head RoPE configuration: ", RopeError),
    ("mha-from-parameters-rope", lambda: attention(max_positions=0),
     MultiHeadAttentionError, "multi-head RoPE configuration: ", RopeError),
    ("mha-forward-overflow", lambda: attention().forward(x(1, T, D, value=BIG)),
     MultiHeadAttentionError, "multi-head: ", CausalAttentionError),
    ("block-new-attention", lambda: block_new(heads=3),
     DecoderBlockError, "causal multi-head attention: ", MultiHeadAttentionError),
    ("block-new-norm", lambda: block_new(rms_epsilon=-1e-5),
     DecoderBlockError, "attention RMSNorm: ", RmsNormError),
    ("block-new-feed-forward", lambda: block_new(feed_forward_width=0),
     DecoderBlockError, "SwiGLU feed-forward: ", SwiGluError),
    ("block-forward-norm", lambda: parts().forward(x(1, T, D, value=1e200)),
     DecoderBlockError, "attention RMSNorm: ", RmsNormError),
    ("block-forward-second-norm", lambda: parts(attention=huge_output_attention()).forward(varied(1, T, D)),
     DecoderBlockError, "feed-forward RMSNorm: ", RmsNormError),
    ("block-forward-attention", lambda: parts(attention=attention(
        query_weight=Parameter("q", BIG * np.eye(D)), key_weight=Parameter("k", BIG * np.eye(D)))).forward(
        x(1, T, D)), DecoderBlockError, "causal multi-head attention: ", MultiHeadAttentionError),
    ("gradcheck-forward", lambda: check(lambda t: attention().forward(t).output, np.ones((1, T, 5)),
                                        upstream=np.ones((1, T, D))),
     GradcheckError, "gradcheck forward: ", MultiHeadAttentionError),
]


@pytest.mark.parametrize("attempt, error, prefix, cause", [c[1:] for c in CHAINS], ids=[c[0] for c in CHAINS])
def test_a_nested_error_keeps_its_message_and_its_cause(attempt, error, prefix, cause):
    with pytest.raises(error) as caught:
        attempt()
    assert type(caught.value.__cause__) is cause
    assert str(caught.value) == prefix + str(caught.value.__cause__)


def test_a_chain_two_components_deep():
    with pytest.raises(DecoderBlockError) as caught:
        block_new(rope_base=0.0)
    attention_error = caught.value.__cause__
    assert type(attention_error) is MultiHeadAttentionError
    assert type(attention_error.__cause__) is RopeError
    assert str(caught.value) == ("causal multi-head attention: multi-head RoPE configuration: "
                                 "RoPE base must be a finite positive number, got 0.0")


@pytest.mark.parametrize("layer, error, stage", [(attention, MultiHeadAttentionError, "multi-head"),
                                                 (parts, DecoderBlockError, "decoder-block")])
def test_positions_are_checked_before_the_tape(layer, error, stage):
    """The seed's order: a bad interval is reported even for a released input."""
    with pytest.raises(error, match=rf"^{stage} position interval \[4, 7\) exceeds capacity 6$"):
        layer().forward(released(1, T, D), position_offset=4)


def test_every_error_class_derives_from_the_package_base():
    classes = [value for value in vars(errors).values()
               if isinstance(value, type) and issubclass(value, Exception)]
    components = {"Tensor", "Parameter", "Initialization", "Rope", "HeadLayout", "CausalAttention",
                  "MultiHeadAttention", "RmsNorm", "SwiGlu", "DecoderBlock", "Gradcheck",
                  "Optimizer", "Training", "DepthLab", "LearnedHeads", "History", "Edition", "Format"}
    assert {cls.__name__ for cls in classes} == {f"{name}Error" for name in components} | {"LlmFromScratchError"}
    assert all(issubclass(cls, LlmFromScratchError) for cls in classes)


# --- every checked call checks, nested ones too ------------------------------------------

def test_every_checked_call_checks_nested_ones_too():
    seen = []

    @checked(lambda value: seen.append(("inner", value)), TensorError, "inner")
    def inner(value):
        return value

    @checked(lambda value: seen.append(("outer", value)), TensorError, "outer")
    def outer(value):
        return inner(value + 1)

    outer(1)
    inner(5)
    assert seen == [("outer", 1), ("inner", 2), ("inner", 5)]


def test_a_block_forward_enters_the_checked_forward_of_every_part(monkeypatch):
    """With the test above (a checked call always checks), no part's check is skipped inside the block."""
    block, seen = parts(), []
    for kind in (DecoderBlock, RmsNorm, MultiHeadAttention, SwiGlu):
        def spy(self, *args, original=kind.forward, **kwargs):
            seen.append(self)
            return original(self, *args, **kwargs)

        monkeypatch.setattr(kind, "forward", spy)
    block.forward(x(1, T, D))
    assert [id(layer) for layer in seen] == [id(block), id(block.attention_norm), id(block.attention),
                                             id(block.feed_forward_norm), id(block.feed_forward)]


def test_a_failed_check_does_not_switch_later_checks_off():
    with pytest.raises(DecoderBlockError):
        parts().forward(x(1, T, 5))
    with pytest.raises(HeadLayoutError, match=r"divisible by the number of heads \(3\)"):
        split_heads(x(1, T, D), 3)


# --- the command lines on a closed pipe, a full disk and without stdout ----------------

CLI_ROWS = [(chapter, flags, sink) for chapter in ("30", "31") for flags in ([], ["--trace"])
            for sink in ("closed-pipe", "full-disk", "closed-stdout")]


@pytest.mark.parametrize("chapter, flags, sink", CLI_ROWS,
                         ids=[f"cli-ch{c}{'-trace' if f else ''}-{s}" for c, f, s in CLI_ROWS])
def test_a_command_line_that_cannot_write_ends_with_one_line(chapter, flags, sink):
    if sink == "full-disk" and not Path("/dev/full").exists():
        pytest.skip("needs /dev/full")
    command = [sys.executable, "-m", f"llm_from_scratch.ch{chapter}", *flags]
    if sink == "closed-pipe":
        read, write = os.pipe()
        os.close(read)  # the reader is gone before the first byte: every write fails with EPIPE
        result = subprocess.run(command, stdout=write, stderr=subprocess.PIPE, text=True)
        os.close(write)
        reason = "the reader closed the pipe"
    elif sink == "full-disk":
        with open("/dev/full", "w") as full:
            result = subprocess.run(command, stdout=full, stderr=subprocess.PIPE, text=True)
        reason = "No space left on device"
    else:  # `python -m ... >&-`: the command starts with no stdout at all
        result = subprocess.run(command, stderr=subprocess.PIPE, text=True, preexec_fn=lambda: os.close(1))
        reason = "standard output is closed"
    assert result.returncode == 1
    assert result.stderr.splitlines() == [f"python -m llm_from_scratch.ch{chapter}: output not written: {reason}"]
