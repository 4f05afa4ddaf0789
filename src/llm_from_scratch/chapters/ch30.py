"""Chapter 30 evidence: causal multi-head attention on the worked example.

Builds the chapter's example (``X``, identity ``W_Q = W_K = W_V``, the
group-swapping ``W_O``, ``h = 2``, ``d_h = 2``), runs every check the chapter
describes, and renders the learner report and the diagram trace.

    python -m llm_from_scratch.chapters.ch30          # learner report
    python -m llm_from_scratch.chapters.ch30 --trace  # 34-line diagram trace
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..attention import MultiHeadAttention, MultiHeadAttentionForward
from ..errors import MultiHeadAttentionError
from ..heads import merge_heads, split_heads
from ..parameter import Parameter
from ..rng import SplitMix64
from ..tensor import Tensor
from . import common
from .formatting import format_bool, format_names, format_number, format_shape, format_shapes, format_vector
from .history import rows_normalized, single_head_table, weighted_source_context

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
    return MultiHeadAttention.from_parameters(*parameters, heads=HEADS, max_positions=MAX_POSITIONS,
                                              rope_base=ROPE_BASE)


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

@dataclass(frozen=True)
class PrimaryEvidence(common.WorkedExample):
    forward: MultiHeadAttentionForward
    output_weight: np.ndarray
    uniform_head_zero: bool
    distinct_head_weights: bool
    split_merge_bitwise: bool
    head_isolation_before_output: bool
    common_offset_weights_preserved: bool
    common_offset_max_difference: float


@dataclass(frozen=True)
class ParameterEvidence:
    names: list[str]
    shapes: list[tuple[int, ...]]
    count: int
    formula_count: int
    bias_free: bool
    node_distinct: bool


@dataclass(frozen=True)
class ShapeEvidence:
    input: tuple[int, ...]
    split: tuple[int, ...]
    rotated: tuple[int, ...]
    weights: tuple[int, ...]
    head_output: tuple[int, ...]
    merged: tuple[int, ...]
    output_weight: tuple[int, ...]
    output: tuple[int, ...]
    empty_batch_weights: tuple[int, ...]
    empty_batch_output: tuple[int, ...]
    empty_batch_input_gradient: tuple[int, ...]
    single_token_weights: tuple[int, ...]


@dataclass(frozen=True)
class HistoryEvidence:
    earlier_weighted_context: np.ndarray
    earlier_distributions_per_target: int
    single_head_weights: np.ndarray
    single_head_weight_shape: tuple[int, ...]
    multi_head_weight_shape: tuple[int, ...]
    single_head_tables: int
    multi_head_tables: int
    all_rows_normalized: bool
    mixing_stage: str  # where a change in one head first reaches another


@dataclass(frozen=True)
class LearnerEvidence:
    primary: PrimaryEvidence
    parameters: ParameterEvidence
    shapes: ShapeEvidence
    errors: dict[str, common.ErrorCase]
    gradients: common.GradientEvidence
    history: HistoryEvidence
    replay_bitwise: bool


def primary_evidence() -> PrimaryEvidence:
    """Forward and backward on the worked example, and the invariants that need only this layer."""
    attention = build_attention()
    x_value = example_input()
    shared = common.worked_example(attention, x_value, perturbed_input(), example_upstream())
    forward = shared["forward"]
    weights = forward.attention_weights.value                     # [1, 2, 3, 3]
    expected_uniform = np.tril(np.ones((TOKENS, TOKENS))) / np.arange(1, TOKENS + 1)[:, None]
    offset_weights = attention.forward(Tensor(x_value), position_offset=MAX_POSITIONS - TOKENS).attention_weights.value
    offset_difference = float(np.max(np.abs(offset_weights - weights)))
    return PrimaryEvidence(
        **shared, output_weight=swap_output_weight(),
        uniform_head_zero=bool(np.max(np.abs(weights[0, 0] - expected_uniform)) <= INVARIANT_TOLERANCE),
        distinct_head_weights=bool(np.max(np.abs(weights[0, 0] - weights[0, 1])) > INVARIANT_TOLERANCE),
        split_merge_bitwise=split_merge_is_exact(x_value),
        head_isolation_before_output=heads_isolated_before_output(forward),
        common_offset_weights_preserved=offset_difference <= INVARIANT_TOLERANCE,
        common_offset_max_difference=offset_difference,
    )


def split_merge_is_exact(x_value: np.ndarray) -> bool:
    """``merge_heads(split_heads(X))`` equals ``X`` bit for bit."""
    return common.identical(merge_heads(split_heads(Tensor(x_value), HEADS)).value, x_value)


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


def heads_isolated_before_output(reference: MultiHeadAttentionForward) -> bool:
    """Changing only head 1's value columns leaves head 0's output and its merged columns bitwise unchanged.

    And changing a column of head 0's keys leaves head 1's probabilities unchanged: the heads meet only at ``W_O``.
    """
    other_values = head_one_values_changed()
    weights = example_weights()
    weights["key"] = weights["key"].copy()
    weights["key"][HEAD_WIDTH, 0] = 1.0  # head 0's keys now also read input feature 2
    other_keys = build_attention(weights).forward(Tensor(example_input()))
    head = slice(0, HEAD_WIDTH)
    return (common.identical(other_values.head_outputs.value[:, 0], reference.head_outputs.value[:, 0])
            and common.identical(other_values.merged.value[..., head], reference.merged.value[..., head])
            and not common.identical(other_values.head_outputs.value[:, 1], reference.head_outputs.value[:, 1])
            and common.identical(other_keys.attention_weights.value[:, 1], reference.attention_weights.value[:, 1])
            and not common.identical(other_keys.attention_weights.value[:, 0], reference.attention_weights.value[:, 0]))


def parameter_evidence() -> ParameterEvidence:
    attention = build_attention()
    parameters = attention.parameters()
    return ParameterEvidence(
        names=parameters.names, shapes=[p.shape for p in parameters], count=parameters.count(),
        formula_count=attention.parameter_count(),
        bias_free=common.zero_stays_zero(attention.forward(Tensor(np.zeros((BATCH, TOKENS, MODEL_WIDTH))))),
        node_distinct=len({id(p) for p in parameters}) == len(parameters),
    )


def shape_evidence(primary: PrimaryEvidence) -> ShapeEvidence:
    attention = build_attention()
    empty = Tensor(np.zeros((0, TOKENS, MODEL_WIDTH)), requires_grad=True)
    empty_forward = attention.forward(empty)
    empty_forward.output.backward(np.zeros((0, TOKENS, MODEL_WIDTH)))  # differentiable with no rows at all
    single = attention.forward(Tensor(example_input()[:, :1]))
    f = primary.forward
    return ShapeEvidence(
        input=primary.input.shape, split=f.projected_query_heads.shape, rotated=f.rotated_query_heads.shape,
        weights=f.attention_weights.shape, head_output=f.head_outputs.shape, merged=f.merged.shape,
        output_weight=primary.output_weight.shape, output=f.output.shape,
        empty_batch_weights=empty_forward.attention_weights.shape, empty_batch_output=empty_forward.output.shape,
        empty_batch_input_gradient=empty.grad.shape, single_token_weights=single.attention_weights.shape,
    )


def error_evidence() -> dict[str, common.ErrorCase]:
    """Every rejection the chapter lists, in the report's order."""
    rng = SplitMix64(30)
    x = example_input()

    cases = {
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
    }
    return {key: common.run_error_case(key, MultiHeadAttentionError, attempt) for key, attempt in cases.items()}


def history_evidence(primary: PrimaryEvidence) -> HistoryEvidence:
    """One alignment gives one context; one full-width table vs one table per head."""
    alignment = np.array([0.25, 0.75])  # one distribution over two encoder annotations
    context = weighted_source_context(alignment, [[1.0, 0.0], [0.0, 1.0]])
    single = single_head_table(Tensor(primary.input)).value                 # [1, 3, 3]
    multi = primary.forward.attention_weights.value                         # [1, 2, 3, 3]
    return HistoryEvidence(
        earlier_weighted_context=context, earlier_distributions_per_target=len(np.atleast_2d(alignment)),
        single_head_weights=single, single_head_weight_shape=single.shape, multi_head_weight_shape=multi.shape,
        single_head_tables=single.size // (TOKENS * TOKENS), multi_head_tables=multi.size // (TOKENS * TOKENS),
        all_rows_normalized=rows_normalized(single, INVARIANT_TOLERANCE)
        and rows_normalized(multi, INVARIANT_TOLERANCE),
        mixing_stage=mixing_label(first_mixing_stage(primary.forward)),
    )


def mixing_label(stage: str) -> str:
    """``output`` is the product with ``W_O``, which follows the concatenation of the heads."""
    return "after-concatenation" if stage == "output" else stage.replace("_", "-")


@functools.lru_cache(maxsize=1)
def learner_evidence() -> LearnerEvidence:
    """Everything the report, the trace, the figures and the notebook show (computed once per process)."""
    primary = primary_evidence()
    return LearnerEvidence(
        primary=primary, parameters=parameter_evidence(), shapes=shape_evidence(primary),
        errors=error_evidence(), history=history_evidence(primary),
        gradients=common.gradient_evidence(build_attention(), example_input(), example_upstream(), GRADIENT_TOLERANCE),
        replay_bitwise=common.replays_bitwise(primary, primary_evidence()),
    )


# -- report and trace -------------------------------------------------------------

def _stage_line(key: str, values: np.ndarray) -> str:
    return f"{key}=shape:{format_shape(values.shape)} values:{format_vector(values)}"


def render_report(evidence: LearnerEvidence | None = None) -> str:
    """The learner report: one ``key=...`` line per finding, in the course's order and format."""
    e = evidence or learner_evidence()
    p, params, s, errors, g, h = e.primary, e.parameters, e.shapes, e.errors, e.gradients, e.history
    b = format_bool
    lines = [
        "chapter=30-multi-head-attention",
        "prediction=projection creates two learned feature lanes; each lane normalizes its own causal rows; "
        "W_O first learns how to mix the concatenated results",
        f"config=batch:{BATCH} tokens:{TOKENS} d_model:{MODEL_WIDTH} heads:{HEADS} d_h:{HEAD_WIDTH} offset:0 "
        f"capacity:{MAX_POSITIONS} rope_base:{ROPE_BASE:.6f} bias:false",
        _stage_line("input", p.input),
        *(_stage_line(stage, p.value(stage)) for stage in (
            "projected_query_heads", "projected_key_heads", "projected_value_heads", "rotated_query_heads",
            "rotated_key_heads", "attention_weights", "head_outputs", "merged")),
        _stage_line("output_weight", p.output_weight),
        _stage_line("output", p.value("output")),
        f"heads=head_0_uniform:{b(p.uniform_head_zero)} head_1_distinct:{b(p.distinct_head_weights)} "
        f"future_probabilities_zero:{b(p.future_probabilities_zero)}",
        f"prefix_perturbed_output={format_vector(p.prefix_perturbed_output)} "
        f"position_0_unchanged:{b(p.prefix_zero_unchanged)} position_1_unchanged:{b(p.prefix_one_unchanged)} "
        f"position_2_changed:{b(p.suffix_changed)}",
        f"layout=split_merge_bitwise:{b(p.split_merge_bitwise)} "
        f"head_isolation_before_output:{b(p.head_isolation_before_output)} "
        f"common_offset_weights_preserved:{b(p.common_offset_weights_preserved)} tolerance:{INVARIANT_TOLERANCE:.12f}",
        f"parameters=names:{format_names(params.names)} shapes:{format_shapes(params.shapes)} count:{params.count} "
        f"bias_free:{b(params.bias_free)} node_distinct:{b(params.node_distinct)}",
        f"upstream={format_vector(p.upstream)} loss:{format_number(p.loss)}",
        f"input_gradient={format_vector(p.input_gradient)}",
        *(f"{role}_weight_gradient={format_vector(grad)}"
          for role, grad in zip(PARAMETER_ROLES, p.parameter_gradients, strict=True)),
        f"gradcheck=input:{g.checks(0)} query:{g.checks(1)} key:{g.checks(2)} value:{g.checks(3)} "
        f"output:{g.checks(4)} total:{g.total} tolerance:{GRADIENT_TOLERANCE:.6f} passed:{b(g.passed)}",
        f"shapes=input:{format_shape(s.input)} split:{format_shape(s.split)} rotated:{format_shape(s.rotated)} "
        f"weights:{format_shape(s.weights)} head_output:{format_shape(s.head_output)} "
        f"merged:{format_shape(s.merged)} output_weight:{format_shape(s.output_weight)} "
        f"output:{format_shape(s.output)} empty_batch_weights:{format_shape(s.empty_batch_weights)} "
        f"empty_batch_output:{format_shape(s.empty_batch_output)} "
        f"single_token_weights:{format_shape(s.single_token_weights)}",
        "errors=" + " ".join(f"{key}:{b(case.rejected)}" for key, case in errors.items()),
        f"history=earlier_weighted_context:{format_vector(h.earlier_weighted_context)} "
        f"earlier_distributions_per_target:{h.earlier_distributions_per_target} "
        f"single_head_shape:{format_shape(h.single_head_weight_shape)} "
        f"multi_head_shape:{format_shape(h.multi_head_weight_shape)} single_head_tables:{h.single_head_tables} "
        f"multi_head_tables:{h.multi_head_tables} rows_normalized:{b(h.all_rows_normalized)} "
        f"mixing:{h.mixing_stage} modern_example:llama-causal-heads-plus-rope weight_api:dense-teaching-evidence",
        f"proof=tape_finite:{b(p.tape_finite)} replay:{'bitwise' if e.replay_bitwise else 'mismatch'} "
        f"heads_distinct:{b(p.distinct_head_weights)} causal:{b(p.future_probabilities_zero)} "
        f"split_merge:{b(p.split_merge_bitwise)} gradients:{b(g.passed)}",
        "next=wrap this attention transformation in the first pre-normalized residual path",
    ]
    return "\n".join(lines) + "\n"


def render_trace(evidence: LearnerEvidence | None = None) -> str:
    """The 34-line diagram trace: shapes, head partitions, every causal row, merges, ``W_O``, the prefix proof."""
    e = evidence or learner_evidence()
    p, s = e.primary, e.shapes
    weights, heads_out = p.value("attention_weights")[0], p.value("head_outputs")[0]   # [h, T, T], [h, T, d_h]
    merged, output = p.value("merged")[0], p.value("output")[0]                       # [T, d_model]
    lines = [
        f"CONFIG|batch={BATCH}|tokens={TOKENS}|model_width={MODEL_WIDTH}|heads={HEADS}|head_width={HEAD_WIDTH}"
        f"|offset=0|max_positions={MAX_POSITIONS}|rope_base={ROPE_BASE:.6f}|bias=false"
        f"|parameter_order=[{','.join(f'{role}.weight' for role in PARAMETER_ROLES)}]|layout=reshape-transpose",
        *(f"SHAPE|stage={stage}|value={format_shape(getattr(s, field))}" for stage, field in (
            ("input", "input"), ("split", "split"), ("rotated", "rotated"), ("weights", "weights"),
            ("head-output", "head_output"), ("merged", "merged"), ("output-weight", "output_weight"),
            ("output", "output"))),
    ]
    for head in range(HEADS):
        columns = list(range(head * HEAD_WIDTH, (head + 1) * HEAD_WIDTH))
        lines.append(
            f"PARTITION|head={head}|columns=[{','.join(map(str, columns))}]"
            + "".join(f"|{name}={format_vector(p.value(field)[0, head])}" for name, field in (
                ("projected_query", "projected_query_heads"), ("projected_key", "projected_key_heads"),
                ("projected_value", "projected_value_heads"), ("rotated_query", "rotated_query_heads"),
                ("rotated_key", "rotated_key_heads"))))
    for head in range(HEADS):
        for query in range(TOKENS):
            lines.append(common.weight_record(head, query, weights[head, query]))
    for head in range(HEADS):
        for token in range(TOKENS):
            lines.append(f"HEAD_OUTPUT|head={head}|token={token}|values={format_vector(heads_out[head, token])}")
    for token in range(TOKENS):
        lines.append(f"MERGED|token={token}"
                     + "".join(f"|head_{head}={format_vector(heads_out[head, token])}" for head in range(HEADS))
                     + f"|values={format_vector(merged[token])}")
    for row in range(MODEL_WIDTH):
        lines.append(f"OUTPUT_MAP|row={row}|values={format_vector(p.output_weight[row])}")
    for token in range(TOKENS):
        lines.append(f"OUTPUT|token={token}|before={format_vector(merged[token])}|after={format_vector(output[token])}")
    lines.append(
        f"PREFIX_PROOF|position_0={'bitwise-unchanged' if p.prefix_zero_unchanged else 'changed'}"
        f"|position_1={'bitwise-unchanged' if p.prefix_one_unchanged else 'changed'}"
        f"|position_2={'changed' if p.suffix_changed else 'unchanged'}"
        f"|split_merge={'bitwise' if p.split_merge_bitwise else 'mismatch'}"
        f"|head_isolation={'before-output' if p.head_isolation_before_output else 'failed'}"
        f"|future_probabilities={'exact-zero' if p.future_probabilities_zero else 'nonzero'}"
        f"|common_offset={'preserved' if p.common_offset_weights_preserved else 'changed'}"
        f"|tolerance={INVARIANT_TOLERANCE:.12f}|parameters={e.parameters.count}|gradchecks={e.gradients.total}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    return common.chapter_main(argv, "Chapter 30: causal multi-head attention, learner report",
                        lambda: render_report(), lambda: render_trace())


if __name__ == "__main__":
    raise SystemExit(main())
