"""Chapter 30's worked example, and the learner report and diagram trace measured on it.

The example: ``X: [1, 3, 4]``, identity ``W_Q = W_K = W_V``, the group-swapping ``W_O``, ``h = 2``,
``d_h = 2``. The report and the trace run the layer on it and print each line from what they measured.

    python -m llm_from_scratch.ch30          # learner report
    python -m llm_from_scratch.ch30 --trace  # 34-line diagram trace
"""

from __future__ import annotations

import numpy as np

from ..attention import MultiHeadAttention, MultiHeadAttentionForward
from ..book import worked_example as common
from ..book.formats import format_bool, format_list, format_number, format_vector
from ..book.settings import choice
from ..book.worked_example import future_probabilities_zero, rows_unchanged, tape_finite
from ..checks import check_name, instance, shown, values
from ..errors import MultiHeadAttentionError
from ..gradcheck import GradcheckReport
from ..heads import merge_heads, split_heads
from ..parameter import Parameter
from ..rng import SplitMix64
from ..tensor import Tensor
from .contrasts import rows_normalized, single_head_table, weighted_source_context

BATCH, TOKENS, MODEL_WIDTH, HEADS = 1, 3, 4, 2
HEAD_WIDTH = MODEL_WIDTH // HEADS
MAX_POSITIONS, ROPE_BASE = 6, 100.0
INVARIANT_TOLERANCE = 1e-12
GRADIENT_TOLERANCE = 8e-6
PREFIX = "attention"
ERROR = MultiHeadAttentionError   # every bad argument of the example's helpers
PARAMETER_ROLES = ("query", "key", "value", "output")
# The stages of the forward record, in the order the data flows through them.
STAGES = ("projected_query_heads", "projected_key_heads", "projected_value_heads", "rotated_query_heads",
          "rotated_key_heads", "attention_weights", "head_outputs", "merged", "output")


# -- the worked example ---------------------------------------------------------

def example_input() -> np.ndarray:
    """``X: [1, 3, 4]``. Columns 0-1 of token ``t`` are ``R(-t)[1, 0]``, so RoPE rotates them back to ``[1, 0]``."""
    t = np.arange(TOKENS, dtype=np.float64)
    first_group = np.stack([np.cos(t), -np.sin(t)], axis=1)             # [T, 2]
    second_group = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])       # [T, 2]
    return np.concatenate([first_group, second_group], axis=1)[None]   # [1, T, 4]


def swap_output_weight() -> np.ndarray:
    """``W_O`` mapping the concatenated row ``[a, b, c, d]`` to ``[c, d, a, b]``."""
    weight = np.zeros((MODEL_WIDTH, MODEL_WIDTH))
    weight[0, 2] = weight[1, 3] = weight[2, 0] = weight[3, 1] = 1.0
    return weight


def example_weights() -> dict[str, np.ndarray]:
    identity = np.eye(MODEL_WIDTH)
    return {"query": identity, "key": identity.copy(), "value": identity.copy(), "output": swap_output_weight()}


def build_attention(weights: dict[str, np.ndarray] | None = None, prefix: str = PREFIX) -> MultiHeadAttention:
    """The chapter's layer (or the same configuration with other ``[4, 4]`` weights)."""
    weights = example_weights() if weights is None else weights
    if not isinstance(weights, dict) or sorted(weights) != sorted(PARAMETER_ROLES):
        raise ERROR(f"build_attention weights must be None or a dict of {', '.join(PARAMETER_ROLES)}, "
                    f"got {shown(weights)}")
    check_name(prefix, "build_attention prefix", ERROR)
    parameters = [Parameter(f"{prefix}.{role}.weight", weights[role]) for role in PARAMETER_ROLES]
    return MultiHeadAttention(*parameters, heads=HEADS, max_positions=MAX_POSITIONS, rope_base=ROPE_BASE)


def example_upstream() -> np.ndarray:
    """A fixed non-uniform output gradient: ``0.1, -0.2, 0.3, ..., -1.2`` in row-major order."""
    k = np.arange(BATCH * TOKENS * MODEL_WIDTH, dtype=np.float64)
    return (0.1 * (k + 1) * np.where(k % 2 == 0, 1.0, -1.0)).reshape(BATCH, TOKENS, MODEL_WIDTH)


def perturbed_input() -> np.ndarray:
    """``X`` with only the last token changed."""
    x = example_input()
    x[0, TOKENS - 1] = [0.5, -1.0, 2.0, 0.25]
    return x


# -- what the report and the trace measure -------------------------------------

def example_pass() -> tuple[MultiHeadAttention, Tensor, MultiHeadAttentionForward]:
    """The chapter's layer on ``X``, forward then backward from ``example_upstream()``: the layer, ``X`` (its
    ``grad`` filled, as is every parameter's) and the forward record."""
    layer = build_attention()
    return (layer, *common.forward_backward(layer, example_input(), example_upstream()))


def head_zero_uniform(weights: np.ndarray) -> bool:    # weights: [B, h, T, T]
    """Head 0 gives each visible key ``1/(t+1)``: after RoPE its queries and keys are all ``[1, 0]``."""
    weights = _tables(weights, "head_zero_uniform", TOKENS)
    uniform = np.tril(np.ones((TOKENS, TOKENS))) / np.arange(1, TOKENS + 1)[:, None]   # [T, T]
    return bool(np.max(np.abs(weights[0, 0] - uniform)) <= INVARIANT_TOLERANCE)


def heads_distinct(weights: np.ndarray) -> bool:       # weights: [B, h, T, T]
    """The two heads' tables ``[T, T]`` differ: each head normalises its own causal rows."""
    weights = _tables(weights, "heads_distinct")
    return bool(np.max(np.abs(weights[0, 0] - weights[0, 1])) > INVARIANT_TOLERANCE)


def _tables(weights: object, name: str, tokens: int | None = None) -> np.ndarray:
    """Attention weights ``[B, h, T, T]`` with at least two heads (``T = tokens`` if given)."""
    weights = values(weights, f"{name} weights", ERROR, shape=(None, None, tokens, tokens))
    if weights.shape[1] < 2 or weights.shape[2] != weights.shape[3]:
        raise ERROR(f"{name} weights must be tables [B, h, T, T] of at least two heads, "
                    f"got shape {list(weights.shape)}")
    return weights


def split_merge_bitwise(x_value: np.ndarray) -> bool:
    """``merge_heads(split_heads(X)) == X`` bit for bit: ``[B, T, d_model] -> [B, h, T, d_h] -> [B, T, d_model]``."""
    return common.identical(merge_heads(split_heads(Tensor(x_value), HEADS)).value, x_value)


def common_offset_preserved(layer: MultiHeadAttention, x_value: np.ndarray) -> bool:
    """Every position moved by the same offset leaves the probabilities as they were: RoPE scores see distances."""
    instance(layer, MultiHeadAttention, "common_offset_preserved layer", ERROR)
    weights = layer.forward(Tensor(x_value)).attention_weights.value                       # [B, h, T, T]
    shifted = layer.forward(Tensor(x_value), MAX_POSITIONS - TOKENS).attention_weights.value
    return bool(np.max(np.abs(shifted - weights)) <= INVARIANT_TOLERANCE)


def head_zero_part(forward: MultiHeadAttentionForward, stage: str) -> np.ndarray:
    """What head 0 owns at ``stage``: its lane ``[:, 0]`` of ``[B, h, ...]``, or its columns of ``[B, T, d_model]``."""
    instance(forward, MultiHeadAttentionForward, "head_zero_part forward", ERROR)
    choice(stage, "head_zero_part stage", STAGES, ERROR)
    value = getattr(forward, stage).value
    return value[:, 0] if value.ndim == 4 else value[..., :HEAD_WIDTH]


def first_mixing_stage(reference: MultiHeadAttentionForward) -> str:
    """The first stage at which a change made only in head 1 (its value columns) reaches head 0's part, or ``none``."""
    instance(reference, MultiHeadAttentionForward, "first_mixing_stage reference", ERROR)
    weights = example_weights()
    weights["value"][:, HEAD_WIDTH:] += 0.5
    changed = build_attention(weights).forward(Tensor(example_input()))
    for stage in STAGES:
        if not common.identical(head_zero_part(changed, stage), head_zero_part(reference, stage)):
            return stage
    return "none"


def mixing_label(stage: str) -> str:
    """``output`` is the product with ``W_O``, which follows the concatenation of the heads."""
    choice(stage, "mixing_label stage", (*STAGES, "none"), ERROR)
    return "after-concatenation" if stage == "output" else stage.replace("_", "-")


def heads_isolated_before_output(reference: MultiHeadAttentionForward) -> bool:
    """The heads meet only at ``W_O``: a change made only in head 1 (its value columns) first reaches head 0 at
    the output, and one made only in head 0 (a column of its keys) leaves head 1's probabilities as they were."""
    instance(reference, MultiHeadAttentionForward, "heads_isolated_before_output reference", ERROR)
    weights = example_weights()
    weights["key"][HEAD_WIDTH, 0] = 1.0  # head 0's keys now also read input feature 2
    other = build_attention(weights).forward(Tensor(example_input())).attention_weights.value   # [B, h, T, T]
    before = reference.attention_weights.value
    return (first_mixing_stage(reference) == "output" and common.identical(other[:, 1], before[:, 1])
            and not common.identical(other[:, 0], before[:, 0]))


def gradient_report() -> GradcheckReport:
    """Central differences against ``backward`` for ``X`` and the four matrices: ``12 + 4·16 = 76`` coordinates."""
    return common.gradient_check(build_attention(), example_input(), example_upstream(), GRADIENT_TOLERANCE)


def replays_bitwise() -> bool:
    """Two fresh layers, forward and backward: the same output and gradients bit for bit."""
    return common.replays_bitwise(build_attention, example_input(), example_upstream())


def error_evidence() -> dict[str, MultiHeadAttentionError | None]:
    """Every rejection the chapter lists, in the report's order: the typed error each attempt raised."""
    rng, x = SplitMix64(30), example_input()
    return common.error_cases({
        "zero_model_width": lambda: MultiHeadAttention.new("a", 0, 2, MAX_POSITIONS, ROPE_BASE, rng),
        "zero_heads": lambda: MultiHeadAttention.new("a", 4, 0, MAX_POSITIONS, ROPE_BASE, rng),
        "nondivisible": lambda: MultiHeadAttention.new("a", 4, 3, MAX_POSITIONS, ROPE_BASE, rng),
        "odd_head_width": lambda: MultiHeadAttention.new("a", 4, 4, MAX_POSITIONS, ROPE_BASE, rng),
        "input_rank": lambda: build_attention().forward(Tensor(x[0])),
        "input_width": lambda: build_attention().forward(Tensor(np.zeros((1, 3, 5)))),
        "empty_tokens": lambda: build_attention().forward(Tensor(np.zeros((1, 0, 4)))),
        "invalid_offset": lambda: build_attention().forward(Tensor(x), position_offset=-1),
        "position_range": lambda: build_attention().forward(Tensor(x), position_offset=4),
        "released_input": lambda: common.reuse_released_input(build_attention(), x),
    })


# -- report and trace -------------------------------------------------------------

def render_report() -> str:
    """The learner report: one ``key=...`` line per finding, in the seed's order and format."""
    layer, x, f = example_pass()                                  # f: every stage of STAGES
    upstream, parameters = example_upstream(), layer.parameters()  # upstream: [1, T, d_model]
    weights = f.attention_weights.value                            # [1, h, T, T]
    changed = layer.forward(Tensor(perturbed_input())).output.value   # [1, T, d_model], a new last token
    same = rows_unchanged(f.output.value, changed)                 # one flag per token
    gradients = gradient_report()
    g = [check.coordinates for check in gradients.checks]          # X, W_Q, W_K, W_V, W_O
    zero_input = layer.forward(Tensor(np.zeros(x.shape)))          # a bias anywhere would show up here
    empty = build_attention().forward(Tensor(np.zeros((0, TOKENS, MODEL_WIDTH))))   # no sequences at all
    single_head = single_head_table(Tensor(x.value)).value         # one table for the whole row: [1, T, T]
    alignment = np.array([0.25, 0.75])  # the earlier attention: one distribution over two encoder annotations
    normalized = all(rows_normalized(table, INVARIANT_TOLERANCE) for table in (single_head, weights))
    b, shape = format_bool, format_list
    lines = [
        "chapter=30-multi-head-attention",
        "prediction=the projections give each of the two heads its own learned features; each head normalizes "
        "its own causal rows; the heads first mix in W_O, after concatenation",
        f"config=batch:{BATCH} tokens:{TOKENS} d_model:{MODEL_WIDTH} heads:{HEADS} d_h:{HEAD_WIDTH} offset:0 "
        f"capacity:{MAX_POSITIONS} rope_base:{ROPE_BASE:.6f} bias:false",
        *(f"{key}=shape:{shape(value.shape)} values:{format_vector(value)}" for key, value in (
            ("input", x.value), *((stage, getattr(f, stage).value) for stage in STAGES[:-1]),
            ("output_weight", layer.w_o.value), ("output", f.output.value))),
        f"heads=head_0_uniform:{b(head_zero_uniform(weights))} head_1_distinct:{b(heads_distinct(weights))} "
        f"future_probabilities_zero:{b(future_probabilities_zero(weights))}",
        f"prefix_perturbed_output={format_vector(changed)} position_0_unchanged:{b(same[0])} "
        f"position_1_unchanged:{b(same[1])} position_2_changed:{b(not same[2])}",
        f"layout=split_merge_bitwise:{b(split_merge_bitwise(x.value))} "
        f"head_isolation_before_output:{b(heads_isolated_before_output(f))} "
        f"common_offset_weights_preserved:{b(common_offset_preserved(layer, x.value))} "
        f"tolerance:{INVARIANT_TOLERANCE:.12f}",
        f"parameters=names:{format_list(parameters.names)} shapes:{format_list(shape(p.shape) for p in parameters)} "
        f"count:{parameters.count()} bias_free:{b(common.zero_stays_zero(zero_input))} "
        f"node_distinct:{b(len({id(p) for p in parameters}) == len(parameters))}",
        f"upstream={format_vector(upstream)} loss:{format_number(np.sum(f.output.value * upstream))}",
        f"input_gradient={format_vector(x.grad)}",
        *(f"{role}_weight_gradient={format_vector(p.grad)}"
          for role, p in zip(PARAMETER_ROLES, parameters, strict=True)),
        f"gradcheck=input:{g[0]} query:{g[1]} key:{g[2]} value:{g[3]} output:{g[4]} total:{sum(g)} "
        f"tolerance:{GRADIENT_TOLERANCE:.6f} passed:{b(gradients.passed)}",
        "shapes=" + " ".join(f"{key}:{shape(value)}" for key, value in (
            ("input", x.shape), ("split", f.projected_query_heads.shape), ("rotated", f.rotated_query_heads.shape),
            ("weights", f.attention_weights.shape), ("head_output", f.head_outputs.shape),
            ("merged", f.merged.shape), ("output_weight", layer.w_o.shape), ("output", f.output.shape),
            ("empty_batch_weights", empty.attention_weights.shape), ("empty_batch_output", empty.output.shape),
            ("single_token_weights", layer.forward(Tensor(x.value[:, :1])).attention_weights.shape))),
        "errors=" + " ".join(f"{key}:{b(isinstance(error, MultiHeadAttentionError))}"
                             for key, error in error_evidence().items()),
        f"history=earlier_weighted_context:{format_vector(weighted_source_context(alignment, np.eye(2)))} "
        f"earlier_distributions_per_target:{len(np.atleast_2d(alignment))} "
        f"single_head_shape:{shape(single_head.shape)} multi_head_shape:{shape(weights.shape)} "
        f"single_head_tables:{single_head.size // TOKENS**2} multi_head_tables:{weights.size // TOKENS**2} "
        f"rows_normalized:{b(normalized)} "
        f"mixing:{mixing_label(first_mixing_stage(f))} modern_example:llama-causal-heads-plus-rope "
        "weight_api:dense-teaching-evidence",
        f"proof=tape_finite:{b(tape_finite(layer, x, f))} "
        f"replay:{'bitwise' if replays_bitwise() else 'mismatch'} "
        f"heads_distinct:{b(heads_distinct(weights))} causal:{b(future_probabilities_zero(weights))} "
        f"split_merge:{b(split_merge_bitwise(x.value))} gradients:{b(gradients.passed)}",
        "next=wrap this attention transformation in the first pre-normalized residual path",
    ]
    return "\n".join(lines) + "\n"


def render_trace() -> str:
    """The 34-line diagram trace: shapes, head partitions, every causal row, merges, ``W_O``, the prefix proof."""
    layer, x, f = example_pass()
    weights, heads_out = f.attention_weights.value[0], f.head_outputs.value[0]   # [h, T, T], [h, T, d_h]
    merged, output = f.merged.value[0], f.output.value[0]                       # [T, d_model]
    same = rows_unchanged(f.output.value, layer.forward(Tensor(perturbed_input())).output.value)  # per token
    causal = future_probabilities_zero(f.attention_weights.value)
    lines = [
        f"CONFIG|batch={BATCH}|tokens={TOKENS}|model_width={MODEL_WIDTH}|heads={HEADS}|head_width={HEAD_WIDTH}"
        f"|offset=0|max_positions={MAX_POSITIONS}|rope_base={ROPE_BASE:.6f}|bias=false"
        f"|parameter_order={format_list(f'{role}.weight' for role in PARAMETER_ROLES)}|layout=reshape-transpose",
        *(f"SHAPE|stage={stage}|value={format_list(value)}" for stage, value in (
            ("input", x.shape), ("split", f.projected_query_heads.shape), ("rotated", f.rotated_query_heads.shape),
            ("weights", f.attention_weights.shape), ("head-output", f.head_outputs.shape),
            ("merged", f.merged.shape), ("output-weight", layer.w_o.shape), ("output", f.output.shape))),
        *(f"PARTITION|head={head}|columns={format_list(range(head * HEAD_WIDTH, (head + 1) * HEAD_WIDTH))}"
          + "".join(f"|{name}={format_vector(getattr(f, f'{name}_heads').value[0, head])}" for name in (
              "projected_query", "projected_key", "projected_value", "rotated_query", "rotated_key"))
          for head in range(HEADS)),
        *(common.weight_record(head, query, weights[head, query])
          for head in range(HEADS) for query in range(TOKENS)),
        *(f"HEAD_OUTPUT|head={head}|token={token}|values={format_vector(heads_out[head, token])}"
          for head in range(HEADS) for token in range(TOKENS)),
        *(f"MERGED|token={token}" + "".join(f"|head_{head}={format_vector(heads_out[head, token])}"
                                            for head in range(HEADS)) + f"|values={format_vector(merged[token])}"
          for token in range(TOKENS)),
        *(f"OUTPUT_MAP|row={row}|values={format_vector(values)}" for row, values in enumerate(layer.w_o.value)),
        *(f"OUTPUT|token={token}|before={format_vector(merged[token])}|after={format_vector(output[token])}"
          for token in range(TOKENS)),
        f"PREFIX_PROOF|{common.positions_record(same)}"
        f"|split_merge={'bitwise' if split_merge_bitwise(x.value) else 'mismatch'}"
        f"|head_isolation={'before-output' if heads_isolated_before_output(f) else 'failed'}"
        f"|future_probabilities={'exact-zero' if causal else 'nonzero'}"
        f"|common_offset={'preserved' if common_offset_preserved(layer, x.value) else 'changed'}"
        f"|tolerance={INVARIANT_TOLERANCE:.12f}|parameters={layer.parameters().count()}"
        f"|gradchecks={gradient_report().total}",
    ]
    return "\n".join(lines) + "\n"
