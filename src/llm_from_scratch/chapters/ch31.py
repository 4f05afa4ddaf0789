"""Chapter 31 evidence: the pre-norm decoder block on the worked example.

``X = 2·I`` rows, both RMSNorm gains 1, ``eps = 0``, identity attention and
SwiGLU matrices, ``h = 2``, ``d_ff = 4``. Runs every check the chapter
describes and renders the learner report and the diagram trace.

    python -m llm_from_scratch.chapters.ch31          # learner report
    python -m llm_from_scratch.chapters.ch31 --trace  # 33-line diagram trace
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..attention import MultiHeadAttention
from ..block import DecoderBlock, DecoderBlockConfig, DecoderBlockForward
from ..errors import DecoderBlockError
from ..parameter import Parameter
from ..rmsnorm import RmsNorm
from ..rng import SplitMix64
from ..swiglu import SwiGlu
from ..tensor import Tensor
from . import common
from .formatting import format_bool, format_shape, format_vector
from .history import layer_norm_rows, rnn_style_states

BATCH, TOKENS, MODEL_WIDTH, HEADS, FEED_FORWARD_WIDTH = 1, 3, 4, 2, 4
HEAD_WIDTH = MODEL_WIDTH // HEADS
RMS_EPSILON = 0.0
MAX_POSITIONS, ROPE_BASE = 6, 100.0
POST_NORM_EPSILON = 1e-5          # LayerNorm eps of the Post-LN contrast
INVARIANT_TOLERANCE = 1e-12
GRADIENT_TOLERANCE = 2e-5
PREFIX = "block"
PARAMETER_ORDER = (
    "attention_norm.gain", "attention.query.weight", "attention.key.weight", "attention.value.weight",
    "attention.output.weight", "ffn_norm.gain", "ffn.gate.weight", "ffn.up.weight", "ffn.down.weight",
)
STAGES = ("input", "attention_norm", "attention_branch", "after_attention", "feed_forward_norm",
          "feed_forward_branch", "output")
RNN_INPUTS = (1.0, -0.5, 0.25)


# -- the worked example ---------------------------------------------------------

def example_input() -> np.ndarray:
    """``X: [1, 3, 4]``, token ``t`` is ``2 e_t``: every row has root mean square 1."""
    return 2.0 * np.eye(MODEL_WIDTH)[:TOKENS][None]


def probe_matrix() -> np.ndarray:
    """A fixed ``[4, 3]`` readout: probe logits are ``y @ P``."""
    return np.array([[1.0, 0.0, -1.0], [0.0, 1.0, -1.0], [1.0, 1.0, 0.0], [0.0, 0.0, 0.0]])


def build_block(prefix: str = PREFIX) -> DecoderBlock:
    """The chapter's block: unit gains, identity attention and SwiGLU matrices."""
    identity = np.eye(MODEL_WIDTH)

    def weight(name: str) -> Parameter:
        return Parameter(f"{prefix}.{name}", identity)

    attention = MultiHeadAttention.from_parameters(
        weight("attention.query.weight"), weight("attention.key.weight"), weight("attention.value.weight"),
        weight("attention.output.weight"), heads=HEADS, max_positions=MAX_POSITIONS, rope_base=ROPE_BASE)
    return DecoderBlock.from_parts(
        RmsNorm.from_parameters(Parameter(f"{prefix}.attention_norm.gain", np.ones(MODEL_WIDTH)), epsilon=RMS_EPSILON),
        attention,
        RmsNorm.from_parameters(Parameter(f"{prefix}.ffn_norm.gain", np.ones(MODEL_WIDTH)), epsilon=RMS_EPSILON),
        SwiGlu.from_parameters(weight("ffn.gate.weight"), weight("ffn.up.weight"), weight("ffn.down.weight")),
    )


def example_upstream() -> np.ndarray:
    """A fixed non-uniform output gradient: ``-1.1, -0.9, ..., 1.1`` in row-major order."""
    return np.linspace(-1.1, 1.1, BATCH * TOKENS * MODEL_WIDTH).reshape(BATCH, TOKENS, MODEL_WIDTH)


def perturbed_input() -> np.ndarray:
    """``X`` with only the last token changed."""
    x = example_input()
    x[0, TOKENS - 1] = [1.0, -1.0, 0.5, 2.0]
    return x


def post_norm_first_stage(block: DecoderBlock, x_value: np.ndarray) -> np.ndarray:
    """The original order with the same components: ``LayerNorm(x + MHA(x))`` (unit gain, zero bias)."""
    attention = block.attention.forward(Tensor(x_value)).output.value
    return layer_norm_rows(x_value + attention, POST_NORM_EPSILON)


# -- evidence -------------------------------------------------------------------

@dataclass(frozen=True)
class PrimaryEvidence(common.WorkedExample):
    forward: DecoderBlockForward
    probe_logits: np.ndarray
    pre_norm_order: bool
    first_residual_exact: bool
    second_residual_exact: bool
    post_norm_first_stage: np.ndarray
    post_norm_differs: bool


@dataclass(frozen=True)
class ParameterEvidence:
    names: list[str]
    shapes: list[tuple[int, ...]]
    tensors: int
    scalars: int
    formula_scalars: int
    bias_free: bool
    stable_order: bool
    node_distinct: bool


@dataclass(frozen=True)
class HistoryEvidence:
    rnn_inputs: np.ndarray
    rnn_style_states: np.ndarray
    sequential_recurrence: bool
    original_post_norm: bool
    modern_pre_norm: bool
    numeric_order_contrast: bool


@dataclass(frozen=True)
class LearnerEvidence:
    primary: PrimaryEvidence
    shapes: dict[str, tuple[int, ...]]
    parameters: ParameterEvidence
    errors: dict[str, common.ErrorCase]
    gradients: common.GradientEvidence
    history: HistoryEvidence
    replay_bitwise: bool


def primary_evidence() -> PrimaryEvidence:
    """Forward and backward on the worked example, the residual paths and the order of the stages."""
    block = build_block()
    x_value = example_input()
    shared = common.worked_example(block, x_value, perturbed_input(), example_upstream())
    f = shared["forward"]
    output, x_prime = f.output.value, f.after_attention.value
    # The same components called one by one, in the pre-norm order of the formula.
    n_a = block.attention_norm.forward(Tensor(x_value)).value
    a = block.attention.forward(Tensor(n_a)).output.value
    n_f = block.feed_forward_norm.forward(Tensor(x_value + a)).value
    y = x_value + a + block.feed_forward.forward(Tensor(n_f)).output.value
    post_norm = post_norm_first_stage(block, x_value)
    return PrimaryEvidence(
        **shared, probe_logits=output @ probe_matrix(),
        pre_norm_order=common.identical(y, output) and common.identical(x_value + a, x_prime),
        first_residual_exact=common.identical(x_prime, x_value + f.attention_branch.value),
        second_residual_exact=common.identical(output, x_prime + f.feed_forward_branch.value),
        post_norm_first_stage=post_norm,
        post_norm_differs=bool(np.max(np.abs(post_norm - x_prime)) > INVARIANT_TOLERANCE),
    )


def shape_evidence(primary: PrimaryEvidence) -> dict[str, tuple[int, ...]]:
    """Shapes in the report's order: seven residual-width tensors, the weights, the probe logits."""
    shapes = {stage: primary.value(stage).shape for stage in STAGES}
    shapes["attention_weights"] = primary.value("attention_weights").shape
    shapes["probe_logits"] = primary.probe_logits.shape
    order = ("input", "attention_norm", "attention_weights", "attention_branch", "after_attention",
             "feed_forward_norm", "feed_forward_branch", "output", "probe_logits")
    return {key: shapes[key] for key in order}


def parameter_evidence() -> ParameterEvidence:
    block = build_block()
    parameters = block.parameters()
    d, d_ff = MODEL_WIDTH, FEED_FORWARD_WIDTH
    return ParameterEvidence(
        names=parameters.names, shapes=[p.shape for p in parameters], tensors=len(parameters),
        scalars=parameters.count(), formula_scalars=2 * d + 4 * d * d + 3 * d * d_ff,
        bias_free=bias_free(block),
        stable_order=parameters.names == [f"{PREFIX}.{name}" for name in PARAMETER_ORDER],
        node_distinct=len({id(p) for p in parameters}) == len(parameters)
        and block.attention_norm.gain is not block.feed_forward_norm.gain,
    )


def bias_free(block: DecoderBlock) -> bool:
    """No part of the block adds a constant: its two branches map a zero input to exactly zero at every
    stage, and both norms are odd, ``N(-x) = -N(x)`` (a LayerNorm-style shift would break that)."""
    zeros = Tensor(np.zeros((BATCH, TOKENS, MODEL_WIDTH)))
    x = example_input()
    norms_odd = all(common.identical(norm.forward(Tensor(-x)).value, -norm.forward(Tensor(x)).value)
                    for norm in (block.attention_norm, block.feed_forward_norm))
    return (norms_odd and common.zero_stays_zero(block.attention.forward(zeros))
            and common.zero_stays_zero(block.feed_forward.forward(zeros)))


def error_evidence() -> dict[str, common.ErrorCase]:
    """Every rejection the chapter lists, in the report's order."""
    x = example_input()

    def component_width():
        good = build_block()
        wide_norm = RmsNorm.from_parameters(Parameter("block.ffn_norm.gain", np.ones(MODEL_WIDTH + 1)), epsilon=0.0)
        DecoderBlock.from_parts(good.attention_norm, good.attention, wide_norm, good.feed_forward)

    config = DecoderBlockConfig(model_width=MODEL_WIDTH, heads=3, feed_forward_width=FEED_FORWARD_WIDTH,
                                max_positions=MAX_POSITIONS, rope_base=ROPE_BASE, rms_epsilon=1e-5)
    cases = {
        "configuration": lambda: DecoderBlock.new(PREFIX, config, SplitMix64(31)),
        "component_width": component_width,
        "input_rank": lambda: build_block().forward(Tensor(x[0])),
        "input_width": lambda: build_block().forward(Tensor(np.ones((1, 3, 5)))),
        "empty_tokens": lambda: build_block().forward(Tensor(np.zeros((1, 0, 4)))),
        "position_range": lambda: build_block().forward(Tensor(x), position_offset=4),
        "released_input": lambda: common.reuse_released_input(build_block(), x),
    }
    return {key: common.run_error_case(key, DecoderBlockError, attempt) for key, attempt in cases.items()}


def history_evidence(primary: PrimaryEvidence) -> HistoryEvidence:
    """A serial state vs the two residual orders of the same fixed components."""
    inputs = np.array(RNN_INPUTS)
    states = rnn_style_states(inputs)
    changed_first = inputs.copy()
    changed_first[0] = -changed_first[0]
    post_norm = primary.post_norm_first_stage
    x_prime = primary.value("after_attention")
    return HistoryEvidence(
        rnn_inputs=inputs, rnn_style_states=states,
        # the last state still remembers the first input: it travelled through every step
        sequential_recurrence=bool(rnn_style_states(changed_first)[-1] != states[-1]),
        # Post-LN: the stage's own output is normalised (every row has mean 0)
        original_post_norm=bool(np.all(np.abs(post_norm.mean(axis=-1)) <= INVARIANT_TOLERANCE)),
        # Pre-LN: the residual stream x' itself stays unnormalised
        modern_pre_norm=bool(np.any(np.abs(np.sqrt(np.mean(x_prime ** 2, axis=-1)) - 1.0) > INVARIANT_TOLERANCE)),
        numeric_order_contrast=primary.post_norm_differs,
    )


@functools.lru_cache(maxsize=1)
def learner_evidence() -> LearnerEvidence:
    """Everything the report, the trace, the figures and the notebook show (computed once per process)."""
    primary = primary_evidence()
    return LearnerEvidence(
        primary=primary, shapes=shape_evidence(primary), parameters=parameter_evidence(),
        errors=error_evidence(), history=history_evidence(primary),
        gradients=common.gradient_evidence(build_block(), example_input(), example_upstream(), GRADIENT_TOLERANCE),
        replay_bitwise=common.replays_bitwise(primary, primary_evidence()),
    )


# -- report and trace -------------------------------------------------------------

def render_report(evidence: LearnerEvidence | None = None) -> str:
    e = evidence or learner_evidence()
    p, params, g, h, b = e.primary, e.parameters, e.gradients, e.history, format_bool
    lines = [
        "chapter=31-decoder-block",
        f"config=batch:{BATCH} tokens:{TOKENS} model_width:{MODEL_WIDTH} heads:{HEADS} head_width:{HEAD_WIDTH} "
        f"feed_forward_width:{FEED_FORWARD_WIDTH} epsilon:{RMS_EPSILON:.6f}",
        "shape=" + " ".join(f"{key}:{format_shape(shape)}" for key, shape in e.shapes.items()),
        "order=attention_norm->attention->residual->feed_forward_norm->feed_forward->residual "
        f"pre_norm:{b(p.pre_norm_order)} post_norm_differs:{b(p.post_norm_differs)}",
        f"causality=prefix_0_bitwise:{b(p.prefix_zero_unchanged)} prefix_1_bitwise:{b(p.prefix_one_unchanged)} "
        f"suffix_changed:{b(p.suffix_changed)} future_probabilities_zero:{b(p.future_probabilities_zero)}",
        f"parameters=tensors:{params.tensors} scalars:{params.scalars} bias_free:{b(params.bias_free)} "
        f"stable_order:{b(params.stable_order)} distinct:{b(params.node_distinct)}",
        f"gradcheck=input:{g.input_checks} parameters:{g.parameter_checks} total:{g.report.total} "
        f"tolerance:{GRADIENT_TOLERANCE:.6f} passed:{b(g.passed)} tape_finite:{b(p.tape_finite)}",
        "errors=" + " ".join(f"{key}:{b(case.rejected)}" for key, case in e.errors.items()),
        f"history=sequential_recurrence:{b(h.sequential_recurrence)} original_post_norm:{b(h.original_post_norm)} "
        f"modern_pre_norm:{b(h.modern_pre_norm)} numeric_order_contrast:{b(h.numeric_order_contrast)}",
        f"replay={'bitwise' if e.replay_bitwise else 'mismatch'}",
        "next=stack these blocks between token embeddings and a tied vocabulary head",
    ]
    return "\n".join(lines) + "\n"


def render_trace(evidence: LearnerEvidence | None = None) -> str:
    """The 33-line diagram trace of both residual paths."""
    e = evidence or learner_evidence()
    p, params, g, h, b = e.primary, e.parameters, e.gradients, e.history, format_bool
    weights = p.value("attention_weights")[0]                                  # [h, T, T]
    lines = [
        f"CONFIG|batch={BATCH}|tokens={TOKENS}|model_width={MODEL_WIDTH}|heads={HEADS}|head_width={HEAD_WIDTH}"
        f"|feed_forward_width={FEED_FORWARD_WIDTH}|epsilon={RMS_EPSILON:.6f}"
        "|stage_order=[attention-norm,attention,residual-1,feed-forward-norm,feed-forward,residual-2]",
        *(f"SHAPE|stage={key.replace('_', '-')}|value={format_shape(shape)}" for key, shape in e.shapes.items()),
        *(f"STAGE|name={stage.replace('_', '-')}|values={format_vector(p.value(stage))}" for stage in STAGES),
        *(common.weight_record(head, query, weights[head, query]) for head in range(HEADS) for query in range(TOKENS)),
        f"MERGE|name=attention|identity=input|branch=attention-branch|result=after-attention"
        f"|exact={b(p.first_residual_exact)}",
        f"MERGE|name=feed-forward|identity=after-attention|branch=feed-forward-branch|result=output"
        f"|exact={b(p.second_residual_exact)}",
        *(f"PROBE|token={token}|values={format_vector(p.probe_logits[0, token])}" for token in range(TOKENS)),
        f"ORDER_PROOF|pre_norm={b(p.pre_norm_order)}|post_norm_differs={b(p.post_norm_differs)}"
        f"|post_norm_token_1={format_vector(p.post_norm_first_stage[0, 1])}"
        f"|pre_norm_token_1={format_vector(p.value('after_attention')[0, 1])}",
        f"CAUSAL_PROOF|position_0={'bitwise-unchanged' if p.prefix_zero_unchanged else 'changed'}"
        f"|position_1={'bitwise-unchanged' if p.prefix_one_unchanged else 'changed'}"
        f"|position_2={'changed' if p.suffix_changed else 'unchanged'}"
        f"|future_probabilities={'exact-zero' if p.future_probabilities_zero else 'nonzero'}",
        f"PARAMETERS|tensors={params.tensors}|scalars={params.scalars}|bias={b(not params.bias_free)}"
        f"|stable_order={b(params.stable_order)}|distinct={b(params.node_distinct)}|names=[{','.join(params.names)}]",
        f"GRADIENTS|input={g.input_checks}|parameters={g.parameter_checks}|total={g.report.total}"
        f"|tolerance={GRADIENT_TOLERANCE:.6f}|passed={b(g.passed)}|tape_finite={b(p.tape_finite)}",
        f"HISTORY|rnn_style_states={format_vector(h.rnn_style_states)}|sequential={b(h.sequential_recurrence)}"
        f"|original_post_norm={b(h.original_post_norm)}|modern_pre_norm={b(h.modern_pre_norm)}"
        f"|numeric_order_contrast={b(h.numeric_order_contrast)}",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    return common.chapter_main(argv, "Chapter 31: the pre-norm decoder block, learner report",
                        lambda: render_report(), lambda: render_trace())


if __name__ == "__main__":
    raise SystemExit(main())
