"""Chapter 30 evidence: causal multi-head attention on the worked example.

Builds the chapter's example (``X``, identity ``W_Q = W_K = W_V``, the
group-swapping ``W_O``, ``h = 2``, ``d_h = 2``), runs every check the chapter
describes, and renders the learner report and the diagram trace.

    python -m llm_from_scratch.ch30          # learner report
    python -m llm_from_scratch.ch30 --trace  # 34-line diagram trace
"""

from __future__ import annotations

import functools
from types import SimpleNamespace

import numpy as np

from ..attention import MultiHeadAttention, MultiHeadAttentionForward
from ..book import worked_example as common
from ..book.formats import format_bool, format_list, format_number, format_vector
from ..errors import MultiHeadAttentionError
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
PARAMETER_ROLES = ("query", "key", "value", "output")
# The stages of the forward record, in the order the data flows through them.
STAGES = ("projected_query_heads", "projected_key_heads", "projected_value_heads", "rotated_query_heads",
          "rotated_key_heads", "attention_weights", "head_outputs", "merged", "output")


# -- the worked example ---------------------------------------------------------

def example_input() -> np.ndarray:
    """``X: [1, 3, 4]``. Columns 0-1 of token ``t`` are ``R(-t)[1, 0]``, so RoPE turns them back to ``[1, 0]``."""
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


# -- evidence -------------------------------------------------------------------

def head_one_values_changed() -> MultiHeadAttentionForward:
    """The worked example with only head 1's value columns of ``W_V`` changed."""
    weights = example_weights()
    weights["value"] = weights["value"].copy()
    weights["value"][:, HEAD_WIDTH:] += 0.5
    return build_attention(weights).forward(Tensor(example_input()))


def head_zero_part(forward: MultiHeadAttentionForward, stage: str) -> np.ndarray:
    """What head 0 owns at ``stage``: its lane ``[:, 0]`` of ``[B, h, ...]``, or its columns of ``[B, T, d_model]``."""
    value = getattr(forward, stage).value
    return value[:, 0] if value.ndim == 4 else value[..., :HEAD_WIDTH]


def first_mixing_stage(reference: MultiHeadAttentionForward) -> str:
    """The first stage at which a change made only in head 1 reaches head 0's part, or ``none``."""
    changed = head_one_values_changed()
    for stage in STAGES:
        if not common.identical(head_zero_part(changed, stage), head_zero_part(reference, stage)):
            return stage
    return "none"


def mixing_label(stage: str) -> str:
    """``output`` is the product with ``W_O``, which follows the concatenation of the heads."""
    return "after-concatenation" if stage == "output" else stage.replace("_", "-")


def heads_isolated_before_output(reference: MultiHeadAttentionForward) -> bool:
    """Changing only head 1's value columns leaves head 0's output and its merged columns bitwise unchanged.

    And changing a column of head 0's keys leaves head 1's probabilities unchanged: the heads meet only at ``W_O``.
    """
    other_values = head_one_values_changed()
    weights = example_weights()
    weights["key"] = weights["key"].copy()
    weights["key"][HEAD_WIDTH, 0] = 1.0  # head 0's keys now also read input feature 2
    other_keys = build_attention(weights).forward(Tensor(example_input()))
    same, head = common.identical, slice(0, HEAD_WIDTH)
    return (same(other_values.head_outputs.value[:, 0], reference.head_outputs.value[:, 0])
            and same(other_values.merged.value[..., head], reference.merged.value[..., head])
            and not same(other_values.head_outputs.value[:, 1], reference.head_outputs.value[:, 1])
            and same(other_keys.attention_weights.value[:, 1], reference.attention_weights.value[:, 1])
            and not same(other_keys.attention_weights.value[:, 0], reference.attention_weights.value[:, 0]))


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


@functools.lru_cache(maxsize=1)
def learner_evidence() -> SimpleNamespace:
    """Every finding the report, the trace and the notebook show, measured once per process."""
    attention, x = build_attention(), example_input()
    e = SimpleNamespace(**common.worked_example(attention, x, perturbed_input(), example_upstream()))
    weights = e.forward.attention_weights.value                                     # [1, 2, 3, 3]
    uniform = np.tril(np.ones((TOKENS, TOKENS))) / np.arange(1, TOKENS + 1)[:, None]
    shifted = attention.forward(Tensor(x), MAX_POSITIONS - TOKENS).attention_weights.value
    e.uniform_head_zero = bool(np.max(np.abs(weights[0, 0] - uniform)) <= INVARIANT_TOLERANCE)
    e.distinct_head_weights = bool(np.max(np.abs(weights[0, 0] - weights[0, 1])) > INVARIANT_TOLERANCE)
    e.split_merge_bitwise = common.identical(merge_heads(split_heads(Tensor(x), HEADS)).value, x)
    e.head_isolation_before_output = heads_isolated_before_output(e.forward)
    e.common_offset_weights_preserved = bool(np.max(np.abs(shifted - weights)) <= INVARIANT_TOLERANCE)
    parameters, e.output_weight = attention.parameters(), attention.w_o.value
    e.names, e.shapes, e.count = parameters.names, [p.shape for p in parameters], parameters.count()
    e.bias_free = common.zero_stays_zero(attention.forward(Tensor(np.zeros((BATCH, TOKENS, MODEL_WIDTH)))))
    e.node_distinct = len({id(p) for p in parameters}) == len(parameters)
    empty = Tensor(np.zeros((0, TOKENS, MODEL_WIDTH)), requires_grad=True)
    e.empty_forward = build_attention().forward(empty)
    e.empty_forward.output.backward(np.zeros(empty.shape))  # differentiable with no rows at all
    e.single_token_weights = attention.forward(Tensor(x[:, :1])).attention_weights.shape
    e.errors = error_evidence()
    e.gradients = common.gradient_check(build_attention(), x, example_upstream(), GRADIENT_TOLERANCE)
    e.replay_bitwise = common.replays_bitwise(build_attention, x, example_upstream())
    e.alignment = np.array([0.25, 0.75])  # one distribution over two encoder annotations
    e.earlier_weighted_context = weighted_source_context(e.alignment, [[1.0, 0.0], [0.0, 1.0]])
    e.single_head_weights = single_head_table(Tensor(x)).value                    # [1, 3, 3]
    e.all_rows_normalized = (rows_normalized(e.single_head_weights, INVARIANT_TOLERANCE)
                             and rows_normalized(weights, INVARIANT_TOLERANCE))
    e.mixing_stage = mixing_label(first_mixing_stage(e.forward))
    return e


# -- report and trace -------------------------------------------------------------

def render_report() -> str:
    """The learner report: one ``key=...`` line per finding, in the course's order and format."""
    e, b, shape = learner_evidence(), format_bool, format_list
    f, g = e.forward, [c.coordinates for c in e.gradients.checks]
    tables = e.single_head_weights.size // TOKENS**2, f.attention_weights.value.size // TOKENS**2
    lines = [
        "chapter=30-multi-head-attention",
        "prediction=projection creates two learned feature lanes; each lane normalizes its own causal rows; "
        "W_O first learns how to mix the concatenated results",
        f"config=batch:{BATCH} tokens:{TOKENS} d_model:{MODEL_WIDTH} heads:{HEADS} d_h:{HEAD_WIDTH} offset:0 "
        f"capacity:{MAX_POSITIONS} rope_base:{ROPE_BASE:.6f} bias:false",
        *(f"{key}=shape:{shape(value.shape)} values:{format_vector(value)}" for key, value in (
            ("input", e.input), *((stage, getattr(f, stage).value) for stage in STAGES[:-1]),
            ("output_weight", e.output_weight),
            ("output", f.output.value))),
        f"heads=head_0_uniform:{b(e.uniform_head_zero)} head_1_distinct:{b(e.distinct_head_weights)} "
        f"future_probabilities_zero:{b(e.future_probabilities_zero)}",
        f"prefix_perturbed_output={format_vector(e.prefix_perturbed_output)} "
        f"position_0_unchanged:{b(e.prefix_zero_unchanged)} position_1_unchanged:{b(e.prefix_one_unchanged)} "
        f"position_2_changed:{b(e.suffix_changed)}",
        f"layout=split_merge_bitwise:{b(e.split_merge_bitwise)} "
        f"head_isolation_before_output:{b(e.head_isolation_before_output)} "
        f"common_offset_weights_preserved:{b(e.common_offset_weights_preserved)} tolerance:{INVARIANT_TOLERANCE:.12f}",
        f"parameters=names:{format_list(e.names)} shapes:{format_list(map(shape, e.shapes))} count:{e.count} "
        f"bias_free:{b(e.bias_free)} node_distinct:{b(e.node_distinct)}",
        f"upstream={format_vector(e.upstream)} loss:{format_number(e.loss)}",
        f"input_gradient={format_vector(e.input_gradient)}",
        *(f"{role}_weight_gradient={format_vector(grad)}"
          for role, grad in zip(PARAMETER_ROLES, e.parameter_gradients, strict=True)),
        f"gradcheck=input:{g[0]} query:{g[1]} key:{g[2]} value:{g[3]} output:{g[4]} total:{sum(g)} "
        f"tolerance:{GRADIENT_TOLERANCE:.6f} passed:{b(e.gradients.passed)}",
        "shapes=" + " ".join(f"{key}:{shape(value)}" for key, value in (
            ("input", e.input.shape), ("split", f.projected_query_heads.shape),
            ("rotated", f.rotated_query_heads.shape), ("weights", f.attention_weights.shape),
            ("head_output", f.head_outputs.shape), ("merged", f.merged.shape),
            ("output_weight", e.output_weight.shape), ("output", f.output.shape),
            ("empty_batch_weights", e.empty_forward.attention_weights.shape),
            ("empty_batch_output", e.empty_forward.output.shape), ("single_token_weights", e.single_token_weights))),
        "errors=" + " ".join(f"{key}:{b(isinstance(error, MultiHeadAttentionError))}"
                             for key, error in e.errors.items()),
        f"history=earlier_weighted_context:{format_vector(e.earlier_weighted_context)} "
        f"earlier_distributions_per_target:{len(np.atleast_2d(e.alignment))} "
        f"single_head_shape:{shape(e.single_head_weights.shape)} multi_head_shape:{shape(f.attention_weights.shape)} "
        f"single_head_tables:{tables[0]} multi_head_tables:{tables[1]} rows_normalized:{b(e.all_rows_normalized)} "
        f"mixing:{e.mixing_stage} modern_example:llama-causal-heads-plus-rope weight_api:dense-teaching-evidence",
        f"proof=tape_finite:{b(e.tape_finite)} replay:{'bitwise' if e.replay_bitwise else 'mismatch'} "
        f"heads_distinct:{b(e.distinct_head_weights)} causal:{b(e.future_probabilities_zero)} "
        f"split_merge:{b(e.split_merge_bitwise)} gradients:{b(e.gradients.passed)}",
        "next=wrap this attention transformation in the first pre-normalized residual path",
    ]
    return "\n".join(lines) + "\n"


def render_trace() -> str:
    """The 34-line diagram trace: shapes, head partitions, every causal row, merges, ``W_O``, the prefix proof."""
    e = learner_evidence()
    f = e.forward
    weights, heads_out = f.attention_weights.value[0], f.head_outputs.value[0]   # [h, T, T], [h, T, d_h]
    merged, output = f.merged.value[0], f.output.value[0]                       # [T, d_model]
    lines = [
        f"CONFIG|batch={BATCH}|tokens={TOKENS}|model_width={MODEL_WIDTH}|heads={HEADS}|head_width={HEAD_WIDTH}"
        f"|offset=0|max_positions={MAX_POSITIONS}|rope_base={ROPE_BASE:.6f}|bias=false"
        f"|parameter_order={format_list(f'{role}.weight' for role in PARAMETER_ROLES)}|layout=reshape-transpose",
        *(f"SHAPE|stage={stage}|value={format_list(value)}" for stage, value in (
            ("input", e.input.shape), ("split", f.projected_query_heads.shape),
            ("rotated", f.rotated_query_heads.shape), ("weights", f.attention_weights.shape),
            ("head-output", f.head_outputs.shape), ("merged", f.merged.shape),
            ("output-weight", e.output_weight.shape), ("output", f.output.shape))),
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
        *(f"OUTPUT_MAP|row={row}|values={format_vector(values)}" for row, values in enumerate(e.output_weight)),
        *(f"OUTPUT|token={token}|before={format_vector(merged[token])}|after={format_vector(output[token])}"
          for token in range(TOKENS)),
        f"PREFIX_PROOF|position_0={'bitwise-unchanged' if e.prefix_zero_unchanged else 'changed'}"
        f"|position_1={'bitwise-unchanged' if e.prefix_one_unchanged else 'changed'}"
        f"|position_2={'changed' if e.suffix_changed else 'unchanged'}"
        f"|split_merge={'bitwise' if e.split_merge_bitwise else 'mismatch'}"
        f"|head_isolation={'before-output' if e.head_isolation_before_output else 'failed'}"
        f"|future_probabilities={'exact-zero' if e.future_probabilities_zero else 'nonzero'}"
        f"|common_offset={'preserved' if e.common_offset_weights_preserved else 'changed'}"
        f"|tolerance={INVARIANT_TOLERANCE:.12f}|parameters={e.count}|gradchecks={e.gradients.total}",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    return common.chapter_main(argv, "llm_from_scratch.ch30", "Chapter 30: causal multi-head attention, learner report",
                               render_report, render_trace)

