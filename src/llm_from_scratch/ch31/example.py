"""Chapter 31 evidence: the pre-norm decoder block on the worked example.

``X = 2·I`` rows, both RMSNorm gains 1, ``eps = 0``, identity attention and
SwiGLU matrices, ``h = 2``, ``d_ff = 4``. Runs every check the chapter
describes and renders the learner report and the diagram trace.

    python -m llm_from_scratch.ch31          # learner report
    python -m llm_from_scratch.ch31 --trace  # 33-line diagram trace
"""

from __future__ import annotations

import numpy as np

from ..attention import MultiHeadAttention
from ..block import DecoderBlock, DecoderBlockConfig, DecoderBlockForward
from ..book import worked_example as common
from ..book.formats import format_bool, format_list, format_vector
from ..book.worked_example import future_probabilities_zero, rows_unchanged, tape_finite
from ..checks import check_name, instance, values
from ..errors import DecoderBlockError, chained
from ..gradcheck import GradcheckReport
from ..parameter import Parameter, ParameterList
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
ERROR = DecoderBlockError        # every bad argument of the example's helpers
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
    check_name(prefix, "build_block prefix", ERROR)
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
    instance(block, DecoderBlock, "post_norm_first_stage block", ERROR)
    x_value = values(x_value, "post_norm_first_stage x_value", ERROR, rank=3)
    with chained(ERROR, "post_norm_first_stage"):            # the width, the positions, an overflow
        attention = block.attention.forward(Tensor(x_value)).output.value
        return layer_norm_rows(x_value + attention, POST_NORM_EPSILON)


# -- what the report and the trace measure -------------------------------------

def example_pass() -> tuple[DecoderBlock, Tensor, DecoderBlockForward]:
    """The chapter's block on ``X``, forward then backward from ``example_upstream()``: the block, ``X`` (its
    ``grad`` filled, as is every parameter's) and the forward record."""
    block = build_block()
    return (block, *common.forward_backward(block, example_input(), example_upstream()))


def shapes(x_value: np.ndarray, forward: DecoderBlockForward) -> dict[str, tuple[int, ...]]:
    """The seven stages ``[B, T, d_model]``, the weights ``[B, h, T, T]`` after the first norm, the probe logits."""
    x_value = values(x_value, "shapes x_value", ERROR)
    f = instance(forward, DecoderBlockForward, "shapes forward", ERROR)
    return {"input": x_value.shape, "attention_norm": f.attention_norm.shape,
            "attention_weights": f.attention.attention_weights.shape, "attention_branch": f.attention.output.shape,
            "after_attention": f.after_attention.shape, "feed_forward_norm": f.feed_forward_norm.shape,
            "feed_forward_branch": f.feed_forward.output.shape, "output": f.output.shape,
            "probe_logits": (f.output.value @ probe_matrix()).shape}


def pre_norm_order(block: DecoderBlock, x_value: np.ndarray, forward: DecoderBlockForward) -> bool:
    """The block's parts called one by one as the formula reads give its ``x'`` and ``y`` bit for bit:
    ``x' = x + MHA(RMSNorm(x))``, ``y = x' + FFN(RMSNorm(x'))``."""
    instance(block, DecoderBlock, "pre_norm_order block", ERROR)
    x_value = values(x_value, "pre_norm_order x_value", ERROR, rank=3)
    instance(forward, DecoderBlockForward, "pre_norm_order forward", ERROR)
    with chained(ERROR, "pre_norm_order"):
        return _pre_norm_order(block, x_value, forward)


def _pre_norm_order(block: DecoderBlock, x_value: np.ndarray, forward: DecoderBlockForward) -> bool:
    x_prime = x_value + block.attention.forward(block.attention_norm.forward(Tensor(x_value))).output.value
    y = x_prime + block.feed_forward.forward(block.feed_forward_norm.forward(Tensor(x_prime))).output.value
    return common.identical(x_prime, forward.after_attention.value) and common.identical(y, forward.output.value)


def post_norm_differs(post: np.ndarray, x_prime: np.ndarray) -> bool:
    """The original order's first stage ``LayerNorm(x + MHA(x))`` is not the pre-norm ``x'`` (both ``[B, T, d]``)."""
    post = values(post, "post_norm_differs post", ERROR, rank=3)
    x_prime = values(x_prime, "post_norm_differs x_prime", ERROR, shape=post.shape)
    return bool(np.max(np.abs(post - x_prime)) > INVARIANT_TOLERANCE)


def original_post_norm(post: np.ndarray) -> bool:
    """Post-LN normalises the stage's own output: every row of ``LayerNorm(x + MHA(x))`` has mean 0."""
    post = values(post, "original_post_norm post", ERROR, rank=(1, 32))
    return bool(np.all(np.abs(post.mean(axis=-1)) <= INVARIANT_TOLERANCE))


def modern_pre_norm(x_prime: np.ndarray) -> bool:
    """Pre-LN leaves the residual stream unnormalised: some row of ``x'`` has a root mean square other than 1."""
    x_prime = values(x_prime, "modern_pre_norm x_prime", ERROR, rank=(1, 32))
    with np.errstate(over="ignore"):                 # an infinite RMS is not 1 either
        rms = np.sqrt(np.mean(x_prime ** 2, axis=-1))   # [B, T]
    return bool(np.any(np.abs(rms - 1.0) > INVARIANT_TOLERANCE))


def sequential_recurrence() -> bool:
    """The RNN-style last state still remembers the first input: it travelled through every step."""
    inputs = np.array(RNN_INPUTS)
    return bool(rnn_style_states(inputs * [-1.0, 1.0, 1.0])[-1] != rnn_style_states(inputs)[-1])


def bias_free(block: DecoderBlock) -> bool:
    """No part of the block adds a constant: its two branches map a zero input to exactly zero at every
    stage, and both norms are odd, ``N(-x) = -N(x)`` (a LayerNorm-style shift would break that)."""
    instance(block, DecoderBlock, "bias_free block", ERROR)
    zeros = Tensor(np.zeros((BATCH, TOKENS, MODEL_WIDTH)))
    x = example_input()
    norms_odd = all(common.identical(norm.forward(Tensor(-x)).value, -norm.forward(Tensor(x)).value)
                    for norm in (block.attention_norm, block.feed_forward_norm))
    return (norms_odd and common.zero_stays_zero(block.attention.forward(zeros))
            and common.zero_stays_zero(block.feed_forward.forward(zeros)))


def stable_order(parameters: ParameterList) -> bool:
    """The parameters come in the seed's order: first norm, ``W_Q, W_K, W_V, W_O``, second norm, SwiGLU."""
    instance(parameters, ParameterList, "stable_order parameters", ERROR)
    return parameters.names == [f"{PREFIX}.{name}" for name in PARAMETER_ORDER]


def gradient_report() -> GradcheckReport:
    """Central differences against ``backward`` for ``X`` and the nine parameters: ``12 + 120 = 132`` coordinates."""
    return common.gradient_check(build_block(), example_input(), example_upstream(), GRADIENT_TOLERANCE)


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


# -- report and trace -------------------------------------------------------------

def measure() -> tuple[DecoderBlock, Tensor, DecoderBlockForward, np.ndarray, list[bool], GradcheckReport]:
    """What both texts print from: one pass over the example, the Post-LN contrast ``[1, T, d_model]``,
    each token's row unchanged when only the last token changes, and the gradient check."""
    block, x, f = example_pass()
    post = post_norm_first_stage(block, x.value)                               # LayerNorm(x + MHA(x))
    same = rows_unchanged(f.output.value, block.forward(Tensor(perturbed_input())).output.value)
    return block, x, f, post, same, gradient_report()


def render_report() -> str:
    """The learner report: one ``key=...`` line per finding, in the seed's order and format."""
    block, x, f, post, same, gradients = measure()
    x_prime, parameters = f.after_attention.value, block.parameters()         # x': [1, T, d_model]
    differs, distinct = post_norm_differs(post, x_prime), len({id(p) for p in parameters}) == len(parameters)
    g, b = [check.coordinates for check in gradients.checks], format_bool     # g: X, then the nine parameters
    lines = [
        "chapter=31-decoder-block",
        f"config=batch:{BATCH} tokens:{TOKENS} model_width:{MODEL_WIDTH} heads:{HEADS} head_width:{HEAD_WIDTH} "
        f"feed_forward_width:{FEED_FORWARD_WIDTH} epsilon:{RMS_EPSILON:.6f}",
        "shape=" + " ".join(f"{key}:{format_list(shape)}" for key, shape in shapes(x.value, f).items()),
        "order=attention_norm->attention->residual->feed_forward_norm->feed_forward->residual "
        f"pre_norm:{b(pre_norm_order(block, x.value, f))} post_norm_differs:{b(differs)}",
        f"causality=prefix_0_bitwise:{b(same[0])} prefix_1_bitwise:{b(same[1])} suffix_changed:{b(not same[2])} "
        f"future_probabilities_zero:{b(future_probabilities_zero(f.attention.attention_weights.value))}",
        f"parameters=tensors:{len(parameters)} scalars:{parameters.count()} bias_free:{b(bias_free(block))} "
        f"stable_order:{b(stable_order(parameters))} distinct:{b(distinct)}",
        f"gradcheck=input:{g[0]} parameters:{sum(g[1:])} total:{sum(g)} tolerance:{GRADIENT_TOLERANCE:.6f} "
        f"passed:{b(gradients.passed)} tape_finite:{b(tape_finite(block, x, f))}",
        "errors=" + " ".join(f"{key}:{b(isinstance(error, DecoderBlockError))}"
                             for key, error in error_evidence().items()),
        f"history=sequential_recurrence:{b(sequential_recurrence())} original_post_norm:{b(original_post_norm(post))} "
        f"modern_pre_norm:{b(modern_pre_norm(x_prime))} numeric_order_contrast:{b(differs)}",
        f"replay={'bitwise' if common.replays_bitwise(build_block, x.value, example_upstream()) else 'mismatch'}",
        "next=stack these blocks between token embeddings and a tied vocabulary head",
    ]
    return "\n".join(lines) + "\n"


def render_trace() -> str:
    """The 33-line diagram trace of both residual connections."""
    block, x, f, post, same, gradients = measure()
    x_prime, parameters = f.after_attention.value, block.parameters()         # x': [1, T, d_model]
    differs, distinct = post_norm_differs(post, x_prime), len({id(p) for p in parameters}) == len(parameters)
    g, b = [check.coordinates for check in gradients.checks], format_bool     # g: X, then the nine parameters
    weights = f.attention.attention_weights.value                              # [1, h, T, T]
    logits = f.output.value @ probe_matrix()                                   # [1, T, 3]
    lines = [
        f"CONFIG|batch={BATCH}|tokens={TOKENS}|model_width={MODEL_WIDTH}|heads={HEADS}|head_width={HEAD_WIDTH}"
        f"|feed_forward_width={FEED_FORWARD_WIDTH}|epsilon={RMS_EPSILON:.6f}"
        "|stage_order=[attention-norm,attention,residual-1,feed-forward-norm,feed-forward,residual-2]",
        *(f"SHAPE|stage={key.replace('_', '-')}|value={format_list(shape)}"
          for key, shape in shapes(x.value, f).items()),
        *(f"STAGE|name={name}|values={format_vector(value)}" for name, value in (
            ("input", x.value), ("attention-norm", f.attention_norm.value),
            ("attention-branch", f.attention.output.value), ("after-attention", x_prime),
            ("feed-forward-norm", f.feed_forward_norm.value), ("feed-forward-branch", f.feed_forward.output.value),
            ("output", f.output.value))),
        *(common.weight_record(head, query, weights[0, head, query])
          for head in range(HEADS) for query in range(TOKENS)),
        "MERGE|name=attention|identity=input|branch=attention-branch|result=after-attention"
        f"|exact={b(common.identical(x_prime, x.value + f.attention.output.value))}",
        "MERGE|name=feed-forward|identity=after-attention|branch=feed-forward-branch|result=output"
        f"|exact={b(common.identical(f.output.value, x_prime + f.feed_forward.output.value))}",
        *(f"PROBE|token={token}|values={format_vector(logits[0, token])}" for token in range(TOKENS)),
        f"ORDER_PROOF|pre_norm={b(pre_norm_order(block, x.value, f))}|post_norm_differs={b(differs)}"
        f"|post_norm_token_1={format_vector(post[0, 1])}|pre_norm_token_1={format_vector(x_prime[0, 1])}",
        f"CAUSAL_PROOF|{common.positions_record(same)}"
        f"|future_probabilities={'exact-zero' if future_probabilities_zero(weights) else 'nonzero'}",
        f"PARAMETERS|tensors={len(parameters)}|scalars={parameters.count()}|bias={b(not bias_free(block))}"
        f"|stable_order={b(stable_order(parameters))}|distinct={b(distinct)}|names={format_list(parameters.names)}",
        f"GRADIENTS|input={g[0]}|parameters={sum(g[1:])}|total={sum(g)}|tolerance={GRADIENT_TOLERANCE:.6f}"
        f"|passed={b(gradients.passed)}|tape_finite={b(tape_finite(block, x, f))}",
        f"HISTORY|rnn_style_states={format_vector(rnn_style_states(np.array(RNN_INPUTS)))}"
        f"|sequential={b(sequential_recurrence())}|original_post_norm={b(original_post_norm(post))}"
        f"|modern_pre_norm={b(modern_pre_norm(x_prime))}|numeric_order_contrast={b(differs)}",
    ]
    return "\n".join(lines) + "\n"
