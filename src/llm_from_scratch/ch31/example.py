"""Chapter 31 evidence: the pre-norm decoder block on the worked example.

``X = 2·I`` rows, both RMSNorm gains 1, ``eps = 0``, identity attention and
SwiGLU matrices, ``h = 2``, ``d_ff = 4``. Runs every check the chapter
describes and renders the learner report and the diagram trace.

    python -m llm_from_scratch.ch31          # learner report
    python -m llm_from_scratch.ch31 --trace  # 33-line diagram trace
"""

from __future__ import annotations

import functools
from types import SimpleNamespace

import numpy as np

from ..attention import MultiHeadAttention
from ..block import DecoderBlock, DecoderBlockConfig
from ..book import worked_example as common
from ..book.formats import format_bool, format_list, format_vector
from ..errors import DecoderBlockError
from ..parameter import Parameter
from ..rmsnorm import RmsNorm
from ..rng import SplitMix64
from ..swiglu import SwiGlu
from ..tensor import Tensor
from .contrasts import layer_norm_rows, rnn_style_states

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

    attention = MultiHeadAttention(
        weight("attention.query.weight"), weight("attention.key.weight"), weight("attention.value.weight"),
        weight("attention.output.weight"), heads=HEADS, max_positions=MAX_POSITIONS, rope_base=ROPE_BASE)
    return DecoderBlock(
        RmsNorm(Parameter(f"{prefix}.attention_norm.gain", np.ones(MODEL_WIDTH)), epsilon=RMS_EPSILON),
        attention,
        RmsNorm(Parameter(f"{prefix}.ffn_norm.gain", np.ones(MODEL_WIDTH)), epsilon=RMS_EPSILON),
        SwiGlu(weight("ffn.gate.weight"), weight("ffn.up.weight"), weight("ffn.down.weight")),
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

def bias_free(block: DecoderBlock) -> bool:
    """No part of the block adds a constant: its two branches map a zero input to exactly zero at every
    stage, and both norms are odd, ``N(-x) = -N(x)`` (a LayerNorm-style shift would break that)."""
    zeros = Tensor(np.zeros((BATCH, TOKENS, MODEL_WIDTH)))
    x = example_input()
    norms_odd = all(common.identical(norm.forward(Tensor(-x)).value, -norm.forward(Tensor(x)).value)
                    for norm in (block.attention_norm, block.feed_forward_norm))
    return (norms_odd and common.zero_stays_zero(block.attention.forward(zeros))
            and common.zero_stays_zero(block.feed_forward.forward(zeros)))


def error_evidence() -> dict[str, DecoderBlockError | None]:
    """Every rejection the chapter lists, in the report's order: the typed error each attempt raised."""
    x = example_input()

    def component_width():
        good = build_block()
        wide_norm = RmsNorm(Parameter("block.ffn_norm.gain", np.ones(MODEL_WIDTH + 1)), epsilon=0.0)
        DecoderBlock(good.attention_norm, good.attention, wide_norm, good.feed_forward)

    config = DecoderBlockConfig(model_width=MODEL_WIDTH, heads=3, feed_forward_width=FEED_FORWARD_WIDTH,
                                max_positions=MAX_POSITIONS, rope_base=ROPE_BASE, rms_epsilon=1e-5)
    return common.error_cases({
        "configuration": lambda: DecoderBlock.new(PREFIX, config, SplitMix64(31)),
        "component_width": component_width,
        "input_rank": lambda: build_block().forward(Tensor(x[0])),
        "input_width": lambda: build_block().forward(Tensor(np.ones((1, 3, 5)))),
        "empty_tokens": lambda: build_block().forward(Tensor(np.zeros((1, 0, 4)))),
        "position_range": lambda: build_block().forward(Tensor(x), position_offset=4),
        "released_input": lambda: common.reuse_released_input(build_block(), x),
    })


@functools.lru_cache(maxsize=1)
def learner_evidence() -> SimpleNamespace:
    """Every finding the report, the trace and the notebook show, measured once per process."""
    block, x = build_block(), example_input()
    e = SimpleNamespace(**common.worked_example(block, x, perturbed_input(), example_upstream()))
    f = e.forward
    e.stages = {"input": x, "attention_norm": f.attention_norm.value, "attention_branch": f.attention.output.value,
                "after_attention": f.after_attention.value, "feed_forward_norm": f.feed_forward_norm.value,
                "feed_forward_branch": f.feed_forward.output.value, "output": f.output.value}
    e.probe_logits = f.output.value @ probe_matrix()
    # The same components called one by one, in the pre-norm order of the formula.
    a = block.attention.forward(block.attention_norm.forward(Tensor(x))).output.value
    n_f = block.feed_forward_norm.forward(Tensor(x + a)).value
    y = x + a + block.feed_forward.forward(Tensor(n_f)).output.value
    e.pre_norm_order = common.identical(y, f.output.value) and common.identical(x + a, f.after_attention.value)
    x_prime = f.after_attention.value
    e.first_residual_exact = common.identical(x_prime, x + e.stages["attention_branch"])
    e.second_residual_exact = common.identical(f.output.value, x_prime + e.stages["feed_forward_branch"])
    e.post_norm_first_stage = post_norm_first_stage(block, x)
    e.post_norm_differs = bool(np.max(np.abs(e.post_norm_first_stage - f.after_attention.value)) > INVARIANT_TOLERANCE)
    parameters = block.parameters()
    e.names, e.tensors, e.scalars = parameters.names, len(parameters), parameters.count()
    e.bias_free = bias_free(block)
    e.stable_order = parameters.names == [f"{PREFIX}.{name}" for name in PARAMETER_ORDER]
    e.node_distinct = (len({id(p) for p in parameters}) == len(parameters)
                       and block.attention_norm.gain is not block.feed_forward_norm.gain)
    e.errors = error_evidence()
    e.gradients = common.gradient_check(build_block(), x, example_upstream(), GRADIENT_TOLERANCE)
    e.replay_bitwise = common.replays_bitwise(build_block, x, example_upstream())
    inputs = np.array(RNN_INPUTS)
    e.rnn_style_states, changed_first = rnn_style_states(inputs), inputs * [-1.0, 1.0, 1.0]
    # the last state still remembers the first input: it travelled through every step
    e.sequential_recurrence = bool(rnn_style_states(changed_first)[-1] != e.rnn_style_states[-1])
    # Post-LN: the stage's own output is normalised (every row has mean 0)
    e.original_post_norm = bool(np.all(np.abs(e.post_norm_first_stage.mean(axis=-1)) <= INVARIANT_TOLERANCE))
    # Pre-LN: the residual stream x' itself stays unnormalised
    rms = np.sqrt(np.mean(f.after_attention.value ** 2, axis=-1))
    e.modern_pre_norm = bool(np.any(np.abs(rms - 1.0) > INVARIANT_TOLERANCE))
    return e


def shapes(e: SimpleNamespace) -> dict[str, tuple[int, ...]]:
    """Shapes in the report's order: seven residual-width tensors, the weights, the probe logits."""
    found = {key: value.shape for key, value in e.stages.items()}
    found["attention_weights"] = e.forward.attention.attention_weights.shape
    found["probe_logits"] = e.probe_logits.shape
    order = ("input", "attention_norm", "attention_weights", "attention_branch", "after_attention",
             "feed_forward_norm", "feed_forward_branch", "output", "probe_logits")
    return {key: found[key] for key in order}


# -- report and trace -------------------------------------------------------------

def render_report() -> str:
    e, b = learner_evidence(), format_bool
    g = [c.coordinates for c in e.gradients.checks]
    lines = [
        "chapter=31-decoder-block",
        f"config=batch:{BATCH} tokens:{TOKENS} model_width:{MODEL_WIDTH} heads:{HEADS} head_width:{HEAD_WIDTH} "
        f"feed_forward_width:{FEED_FORWARD_WIDTH} epsilon:{RMS_EPSILON:.6f}",
        "shape=" + " ".join(f"{key}:{format_list(shape)}" for key, shape in shapes(e).items()),
        "order=attention_norm->attention->residual->feed_forward_norm->feed_forward->residual "
        f"pre_norm:{b(e.pre_norm_order)} post_norm_differs:{b(e.post_norm_differs)}",
        f"causality=prefix_0_bitwise:{b(e.prefix_zero_unchanged)} prefix_1_bitwise:{b(e.prefix_one_unchanged)} "
        f"suffix_changed:{b(e.suffix_changed)} future_probabilities_zero:{b(e.future_probabilities_zero)}",
        f"parameters=tensors:{e.tensors} scalars:{e.scalars} bias_free:{b(e.bias_free)} "
        f"stable_order:{b(e.stable_order)} distinct:{b(e.node_distinct)}",
        f"gradcheck=input:{g[0]} parameters:{sum(g[1:])} total:{sum(g)} "
        f"tolerance:{GRADIENT_TOLERANCE:.6f} passed:{b(e.gradients.passed)} tape_finite:{b(e.tape_finite)}",
        "errors=" + " ".join(f"{key}:{b(isinstance(error, DecoderBlockError))}" for key, error in e.errors.items()),
        f"history=sequential_recurrence:{b(e.sequential_recurrence)} original_post_norm:{b(e.original_post_norm)} "
        f"modern_pre_norm:{b(e.modern_pre_norm)} numeric_order_contrast:{b(e.post_norm_differs)}",
        f"replay={'bitwise' if e.replay_bitwise else 'mismatch'}",
        "next=stack these blocks between token embeddings and a tied vocabulary head",
    ]
    return "\n".join(lines) + "\n"


def render_trace() -> str:
    """The 33-line diagram trace of both residual paths."""
    e, b = learner_evidence(), format_bool
    g = [c.coordinates for c in e.gradients.checks]
    weights = e.forward.attention.attention_weights.value[0]                   # [h, T, T]
    lines = [
        f"CONFIG|batch={BATCH}|tokens={TOKENS}|model_width={MODEL_WIDTH}|heads={HEADS}|head_width={HEAD_WIDTH}"
        f"|feed_forward_width={FEED_FORWARD_WIDTH}|epsilon={RMS_EPSILON:.6f}"
        "|stage_order=[attention-norm,attention,residual-1,feed-forward-norm,feed-forward,residual-2]",
        *(f"SHAPE|stage={key.replace('_', '-')}|value={format_list(shape)}" for key, shape in shapes(e).items()),
        *(f"STAGE|name={key.replace('_', '-')}|values={format_vector(value)}" for key, value in e.stages.items()),
        *(common.weight_record(head, query, weights[head, query]) for head in range(HEADS) for query in range(TOKENS)),
        f"MERGE|name=attention|identity=input|branch=attention-branch|result=after-attention"
        f"|exact={b(e.first_residual_exact)}",
        f"MERGE|name=feed-forward|identity=after-attention|branch=feed-forward-branch|result=output"
        f"|exact={b(e.second_residual_exact)}",
        *(f"PROBE|token={token}|values={format_vector(e.probe_logits[0, token])}" for token in range(TOKENS)),
        f"ORDER_PROOF|pre_norm={b(e.pre_norm_order)}|post_norm_differs={b(e.post_norm_differs)}"
        f"|post_norm_token_1={format_vector(e.post_norm_first_stage[0, 1])}"
        f"|pre_norm_token_1={format_vector(e.stages['after_attention'][0, 1])}",
        f"CAUSAL_PROOF|position_0={'bitwise-unchanged' if e.prefix_zero_unchanged else 'changed'}"
        f"|position_1={'bitwise-unchanged' if e.prefix_one_unchanged else 'changed'}"
        f"|position_2={'changed' if e.suffix_changed else 'unchanged'}"
        f"|future_probabilities={'exact-zero' if e.future_probabilities_zero else 'nonzero'}",
        f"PARAMETERS|tensors={e.tensors}|scalars={e.scalars}|bias={b(not e.bias_free)}"
        f"|stable_order={b(e.stable_order)}|distinct={b(e.node_distinct)}|names={format_list(e.names)}",
        f"GRADIENTS|input={g[0]}|parameters={sum(g[1:])}|total={sum(g)}"
        f"|tolerance={GRADIENT_TOLERANCE:.6f}|passed={b(e.gradients.passed)}|tape_finite={b(e.tape_finite)}",
        f"HISTORY|rnn_style_states={format_vector(e.rnn_style_states)}|sequential={b(e.sequential_recurrence)}"
        f"|original_post_norm={b(e.original_post_norm)}|modern_pre_norm={b(e.modern_pre_norm)}"
        f"|numeric_order_contrast={b(e.post_norm_differs)}",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    return common.chapter_main(argv, "llm_from_scratch.ch31", "Chapter 31: the pre-norm decoder block, learner report",
                               render_report, render_trace)

