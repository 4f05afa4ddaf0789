"""The chapters' lesson, example and contrast helpers fed bad input: one row per case.

Each row names the typed error of the helper's chapter and a piece of its message; a raw
``TypeError``, ``IndexError``, ``MemoryError``, a NumPy warning or a message longer than
``MAX_MESSAGE`` characters fails it (the runner of ``test_bad_input.py``, with the length).
"""

from __future__ import annotations

import fractions
import warnings

import numpy as np
import pytest
from test_bad_input import Row, bad, ok

from llm_from_scratch import (
    CausalAttentionError,
    DecoderBlockError,
    LlmFromScratchError,
    MultiHeadAttentionError,
)
from llm_from_scratch.ch30 import contrasts as contrasts30
from llm_from_scratch.ch30 import example as example30
from llm_from_scratch.ch30 import lesson as lesson30
from llm_from_scratch.ch31 import contrasts as contrasts31
from llm_from_scratch.ch31 import example as example31
from llm_from_scratch.ch31 import lesson as lesson31
from llm_from_scratch.errors import HistoryError, OptimizerError

MAX_MESSAGE = 400
HUGE = "x" * 10**6
C, M, D, HI = CausalAttentionError, MultiHeadAttentionError, DecoderBlockError, HistoryError


def forward30():
    return example30.example_pass()[2]


def forward31():
    return example31.example_pass()[2]


def stage31():
    return lesson31.first_stage(example31.build_block(), example31.example_input())


ROWS = [
    # ch30 lesson
    bad("score-spread-huge-width", lambda: lesson30.score_spread((10**9,)), C, "widths must be 1 to 16 integers"),
    bad("score-spread-huge-samples", lambda: lesson30.score_spread(samples=10**9), C, "samples must be an integer"),
    bad("score-spread-size", lambda: lesson30.score_spread((2**16,), samples=10**5), C, "more than the limit"),
    bad("score-spread-zero-tokens", lambda: lesson30.score_spread(tokens=0), C, "tokens must be an integer"),
    bad("score-spread-float-tokens", lambda: lesson30.score_spread(tokens=2.5), C, "got 2.5"),
    bad("score-spread-widths-none", lambda: lesson30.score_spread(None), C, "got None"),
    bad("score-spread-seed-negative", lambda: lesson30.score_spread(seed=-1), C, "seed must be an integer"),
    bad("jacobian-spread-widths-huge-repr", lambda: lesson30.jacobian_spread(HUGE), C, "widths must be"),
    bad("saturated-rows-below-str", lambda: lesson30.saturated_rows(below="0.1"), C, "below must be a finite"),
    bad("two-job-weights-none", lambda: lesson30.two_job_weights(None), C, "sharpness must be"),
    bad("two-job-weights-nan", lambda: lesson30.two_job_weights(float("nan")), C, "got nan"),
    bad("two-job-layer-three-heads", lambda: lesson30.two_job_layer(3), C, "heads must be an integer in [1, 2]"),
    bad("two-job-layer-matched-array", lambda: lesson30.two_job_layer(1, matched=np.zeros(2)), C, "True or False"),
    bad("last-query-weights-none", lambda: lesson30.last_query_weights(None), C, "plain numeric array"),
    bad("last-query-weights-rank", lambda: lesson30.last_query_weights(np.zeros(3)), C, "rank 2"),
    bad("last-query-weights-size", lambda: lesson30.last_query_weights(np.zeros((1, 5000))), C, "more than the limit"),
    bad("relative-scores-scalar", lambda: lesson30.relative_scores(1.0, 1.0, 100.0, 3), C, "rank 1"),
    bad("relative-scores-key-shape", lambda: lesson30.relative_scores(np.ones(4), np.ones(2), 100.0, 3), C,
        "shape [4]"),
    bad("example-layer-unknown-weight", lambda: lesson30.example_layer(querry=np.eye(4)), C, "'querry' is unknown"),
    bad("changed-columns-head", lambda: lesson30.changed_output_columns(np.eye(4), 2), C, "head must be"),
    bad("changed-columns-float-head", lambda: lesson30.changed_output_columns(np.eye(4), 0.5), C, "got 0.5"),
    bad("symbolic-output-none", lambda: lesson30.symbolic_output(None), C, "plain numeric array"),
    bad("symbolic-output-symbols", lambda: lesson30.symbolic_output(np.eye(4), "abc"), C, "shape [3, *]"),
    bad("symbolic-output-symbols-none", lambda: lesson30.symbolic_output(np.eye(4), None), C, "1 to 26 letters"),
    bad("stage-values-none", lambda: lesson30.stage_values(None), C, "MultiHeadAttentionForward"),
    bad("stage-values-sequence", lambda: lesson30.stage_values(forward30(), 1), C, "sequence must be"),
    ok("stage-values-sequence-0", lambda: lesson30.stage_values(forward30(), 0), lambda r: "output" in r),
    # ch30 example and contrasts
    bad("build-attention-weights-str", lambda: example30.build_attention("x"), M, "dict of query"),
    bad("build-attention-prefix", lambda: example30.build_attention(None, 5), M, "prefix must be"),
    bad("head-zero-uniform-none", lambda: example30.head_zero_uniform(None), M, "plain numeric array"),
    bad("head-zero-uniform-shape", lambda: example30.head_zero_uniform(np.zeros((1, 2, 4, 4))), M,
        "shape [*, *, 3, 3]"),
    bad("heads-distinct-one-head", lambda: example30.heads_distinct(np.zeros((1, 1, 3, 3))), M, "two heads"),
    bad("common-offset-layer", lambda: example30.common_offset_preserved(None, example30.example_input()), M,
        "MultiHeadAttention"),
    bad("head-zero-part-stage", lambda: example30.head_zero_part(forward30(), "merge"), M, "stage must be one of"),
    bad("first-mixing-none", lambda: example30.first_mixing_stage(None), M, "reference must be"),
    bad("mixing-label-none", lambda: example30.mixing_label(None), M, "stage must be one of"),
    bad("heads-isolated-none", lambda: example30.heads_isolated_before_output(1), M, "reference must be"),
    bad("rows-normalized-none", lambda: contrasts30.rows_normalized(None, 1e-12), HI, "plain numeric array"),
    bad("rows-normalized-tolerance", lambda: contrasts30.rows_normalized(np.eye(2), "0"), HI, "tolerance must be"),
    # ch31 lesson
    bad("rms-none", lambda: lesson31.rms(None), D, "plain numeric array"),
    bad("rms-scalar", lambda: lesson31.rms(2.0), D, "rank 1 to 32"),
    bad("rms-overflow", lambda: lesson31.rms([1e200, 1.0]), D, "overflow when squared"),
    bad("rms-text-str", lambda: lesson31.rms_text("abc"), D, "plain numeric array"),
    bad("token-summary-token", lambda: lesson31.token_summary(stage31(), 9), D, "token must be an integer in [0, 2]"),
    bad("token-summary-stage", lambda: lesson31.token_summary(None), D, "FirstStage"),
    bad("first-stage-order", lambda: lesson31.first_stage(example31.build_block(), example31.example_input(),
                                                          "middle"), D, "order must be one of"),
    bad("first-stage-norm", lambda: lesson31.first_stage(example31.build_block(), example31.example_input(),
                                                         norm="batch"), D, "norm must be one of"),
    bad("first-stage-x-width", lambda: lesson31.first_stage(example31.build_block(), np.ones((1, 3, 5))), D,
        "first_stage:"),
    bad("first-stage-block", lambda: lesson31.first_stage(None, example31.example_input()), D, "DecoderBlock"),
    bad("rotate-pair", lambda: lesson31.rotate(np.ones(3), 1.0), D, "shape [2]"),
    bad("rotate-angle-inf", lambda: lesson31.rotate(np.ones(2), float("inf")), D, "angle must be"),
    bad("adam-step-t", lambda: lesson31.adam_step(np.ones(2), np.ones(2), np.zeros(2), np.zeros(2), 0),
        OptimizerError, "adam_step t must be"),
    bad("adam-step-shapes", lambda: lesson31.adam_step(np.ones(2), np.ones(3), np.zeros(2), np.zeros(2), 1),
        OptimizerError, "one shape"),
    bad("adam-step-v", lambda: lesson31.adam_step(np.ones(2), np.ones(2), np.zeros(2), -np.ones(2), 1),
        OptimizerError, "v is a mean of squares"),
    bad("adam-step-warmup", lambda: lesson31.adam_step(np.ones(2), np.ones(2), np.zeros(2), np.zeros(2), 1,
                                                        warmup=2.5), OptimizerError, "warmup must be"),
    bad("adam-step-g-nan", lambda: lesson31.adam_step(np.ones(2), [np.nan, 1.0], np.zeros(2), np.zeros(2), 1),
        OptimizerError, "adam_step g"),
    bad("adam-step-g-huge", lambda: lesson31.adam_step(np.ones(2), [1e200, 1.0], np.zeros(2), np.zeros(2), 1),
        OptimizerError, "overflows when squared"),
    # ch31 example and contrasts
    bad("build-block-prefix", lambda: example31.build_block(""), D, "prefix must be"),
    bad("post-norm-first-stage-block", lambda: example31.post_norm_first_stage(None, example31.example_input()), D,
        "DecoderBlock"),
    bad("post-norm-first-stage-width", lambda: example31.post_norm_first_stage(example31.build_block(),
                                                                                np.ones((1, 3, 5))), D,
        "post_norm_first_stage:"),
    bad("shapes-forward", lambda: example31.shapes(example31.example_input(), None), D, "DecoderBlockForward"),
    bad("pre-norm-order-forward", lambda: example31.pre_norm_order(example31.build_block(),
                                                                   example31.example_input(), None), D,
        "DecoderBlockForward"),
    bad("post-norm-differs-shapes", lambda: example31.post_norm_differs(np.ones((1, 3, 4)), np.ones((1, 2, 4))), D,
        "shape [1, 3, 4]"),
    bad("original-post-norm-none", lambda: example31.original_post_norm(None), D, "plain numeric array"),
    bad("modern-pre-norm-scalar", lambda: example31.modern_pre_norm(1.0), D, "rank 1 to 32"),
    ok("modern-pre-norm-overflow", lambda: example31.modern_pre_norm(np.full((1, 2), 1e200)), lambda r: r is True),
    bad("bias-free-none", lambda: example31.bias_free(None), D, "DecoderBlock"),
    bad("stable-order-list", lambda: example31.stable_order([]), D, "ParameterList"),
    bad("layer-norm-epsilon-negative", lambda: contrasts31.layer_norm_rows(np.ones((2, 3)), -1.0), HI,
        "epsilon must be a finite number >= 0"),
    bad("layer-norm-epsilon-none", lambda: contrasts31.layer_norm_rows(np.ones((2, 3)), None), HI,
        "got None"),
    ok("layer-norm-epsilon-fraction", lambda: contrasts31.layer_norm_rows(np.ones((2, 3)), fractions.Fraction(1, 3)),
       lambda r: r.shape == (2, 3)),
]


def test_row_ids_are_unique():
    assert len({row.id for row in ROWS}) == len(ROWS)


@pytest.mark.parametrize("row", ROWS, ids=[row.id for row in ROWS])
def test_a_chapter_helper_answers_bad_input_with_its_typed_error(row: Row, capfd):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            result = row.attempt()
        except LlmFromScratchError as error:
            assert row.error is not None, f"documented as accepted, but raised {type(error).__name__}: {error}"
            assert type(error) is row.error, f"expected {row.error.__name__}, got {type(error).__name__}: {error}"
            assert row.message in str(error), f"{row.message!r} not in {str(error)!r}"
            assert len(str(error)) <= MAX_MESSAGE, f"a message of {len(str(error))} characters"
            assert capfd.readouterr().err == ""
            return
        except Exception as error:
            pytest.fail(f"raw {type(error).__name__} escaped: {error}")
    assert capfd.readouterr().err == ""
    assert row.error is None, f"expected {row.error.__name__} containing {row.message!r}, but it was accepted"
    if row.check is not None:
        assert row.check(result), f"accepted, but the result failed its check: {result!r}"


# --- the [T, T] tables are bounded before they are made -----------------------------------

def test_causal_attention_bounds_its_score_tables_before_the_product(monkeypatch):
    from llm_from_scratch import Tensor, causal_scaled_dot_product_self_attention
    from llm_from_scratch import causal as causal_module
    from llm_from_scratch.tensor import MAX_SIZE, causal_softmax

    products = []
    monkeypatch.setattr(causal_module, "transpose", lambda *a: products.append(a) or a[0])
    long = Tensor(np.zeros((1, 5000, 1)))           # 5000 values; its scores would be 25 million
    with pytest.raises(CausalAttentionError, match="scores would hold 25000000 values, more than the limit"):
        causal_scaled_dot_product_self_attention(long, long, long)
    assert not products
    from llm_from_scratch import TensorError
    with pytest.raises(TensorError, match=f"T \\* T at most {MAX_SIZE}, got \\[0, 5000, 5000\\]"):
        causal_softmax(Tensor(np.zeros((0, 5000, 5000))))   # empty, yet np.tri(5000) would be made
    with pytest.raises(TensorError, match=r"tables \[\.\.\., T, T\]"):
        causal_softmax(Tensor(np.zeros((2, 3))))


def test_the_fused_attention_bounds_its_score_tables():
    from llm_from_scratch import Tensor, TensorError
    from llm_from_scratch.fused import causal_self_attention

    x, w, table = Tensor(np.zeros((1, 5000, 2))), Tensor(np.eye(2)), np.ones((5000, 1))
    with pytest.raises(TensorError, match="scores \\[1, 1, 5000, 5000\\] would hold more than"):
        causal_self_attention(x, w, w, w, w, 1, table, table)


# --- train(): a bad batch moves nothing in its step; the error keeps the losses so far -----

@pytest.mark.parametrize("bad_targets, message", [
    (np.array([[1, 2, 9]]), "got 9"),                # past the vocabulary: known once the logits are
    (np.array([[1.0, 2.0, 0.0]]), "dtype float64"),   # not token ids: known before the model runs
    (np.array([[1, -1, 0]]), "got -1"),
])
def test_a_bad_batch_raises_before_its_step_moves_a_parameter(bad_targets, message):
    from llm_from_scratch import Parameter, Tensor
    from llm_from_scratch.book.optim import Adam
    from llm_from_scratch.book.training import train
    from llm_from_scratch.errors import TrainingError

    vocabulary, inputs, targets = 3, np.array([[0, 1, 2]]), np.array([[1, 2, 0]])

    def run(steps, batches):
        table = Parameter("table", np.zeros((vocabulary, vocabulary)))
        model = lambda tokens: Tensor(np.eye(vocabulary)[tokens]) @ table   # noqa: E731
        try:
            return train(model, batches, Adam([table]), steps), table.value
        except TrainingError as error:
            return error, table.value

    clean, after_two = run(2, lambda step: (inputs, targets))
    seen = []

    def batches(step):
        seen.append(step)
        return inputs, (targets if step < 2 else bad_targets)

    error, value = run(4, batches)
    assert isinstance(error, TrainingError) and message in str(error)
    assert np.array_equal(value, after_two)                  # two updates, none from step 2
    assert np.array_equal(error.losses, clean.losses)        # their losses are not lost
    assert "keeps the 2 update(s)" in " ".join(error.__notes__)
    assert seen == [0, 1, 2]


# --- the training lab: the dataclasses a learner builds, the readers of a run ---------------

def _lab_rows():
    from llm_from_scratch import Parameter
    from llm_from_scratch.book.training import TrainingRun
    from llm_from_scratch.ch31 import depth_lab, training_lab
    from llm_from_scratch.errors import DepthLabError, TrainingError

    L, T_ = DepthLabError, TrainingError
    tiny = dict(layers=1, width=4, heads=2, vocabulary=5, batch=2, tokens=4)

    def model(**parts):
        m = training_lab.new_model(**tiny)
        fields = dict(variant=m.variant, embedding=m.embedding, blocks=m.blocks, final_norm=m.final_norm,
                      head=m.head)
        return training_lab.StackModel(**{**fields, **parts})

    def training(**parts):
        fields = dict(settings=training_lab.Settings(), run=TrainingRun(np.ones(3)))
        return training_lab.Training(**{**fields, **parts})

    top = dict(start_rms=1.0, start_varying=0.5, moves=np.ones(3), rms=np.ones(3), varying=np.ones(3))
    return [
        bad("smoothed-strings", lambda: training_lab.smoothed(["1", "2"]), L, "got '1'"),
        bad("smoothed-bools", lambda: training_lab.smoothed([1.0, True]), L, "got True"),
        bad("smoothed-bool-array", lambda: training_lab.smoothed(np.array([True, False])), L, "dtype bool"),
        ok("smoothed-numbers", lambda: training_lab.smoothed((1, 2.5)), lambda r: list(r) == [1.0, 1.75]),
        ok("short-fraction", lambda: depth_lab.short(fractions.Fraction(1, 3)), lambda r: r == "0.333"),
        ok("short-int", lambda: depth_lab.short(2363), lambda r: r == "2363"),
        bad("settings-layers-huge-str", lambda: training_lab.Settings(layers=HUGE), L, "layers must be"),
        bad("settings-unknown-huge-name", lambda: training_lab.train_stack(**{HUGE: 1}), L, "is unknown"),
        bad("depth-variants-huge-repr", lambda: depth_lab.compare(variants=HUGE), L, "variants must be"),
        bad("depth-depths-huge-repr", lambda: depth_lab.top_block_gradient(HUGE), L, "depths must be"),
        bad("depth-table-title-huge-repr", lambda: depth_lab.summary_table({}, title=HUGE), L, "runs must map"),
        bad("training-run-losses-strings", lambda: TrainingRun(["1", "2"]), T_, "losses must be"),
        bad("training-run-losses-nan", lambda: TrainingRun(np.array([1.0, np.nan])), T_, "finite"),
        bad("training-run-diverged-at", lambda: TrainingRun(np.ones(3), 7), T_, "got 7"),
        bad("training-run-message", lambda: TrainingRun(np.ones(3), None, 5), T_, "message must be"),
        ok("training-run-list", lambda: TrainingRun([1, 2.5]), lambda r: r.losses.dtype == np.float64),
        bad("training-settings-none", lambda: training(settings=None), L, "settings must be a Settings"),
        bad("training-run-array", lambda: training(run=np.ones(3)), L, "run must be a TrainingRun"),
        bad("training-top-dict", lambda: training(top={}), L, "top must be a TopReadings or None"),
        bad("training-readings-length", lambda: training(
            readings=training_lab.BatchReadings(np.ones(2), np.ones(2))), L, "one value a step, 3, got 2"),
        bad("batch-readings-lengths", lambda: training_lab.BatchReadings(np.ones(2), np.ones(3)), L,
            "must have one length"),
        bad("batch-readings-list", lambda: training_lab.BatchReadings([1.0], np.ones(1)), L, "1-D array"),
        bad("top-readings-start", lambda: training_lab.TopReadings(**{**top, "start_rms": "1"}), L,
            "start_rms must be a number"),
        bad("top-readings-lengths", lambda: training_lab.TopReadings(**{**top, "rms": np.ones(2)}), L,
            "one length"),
        bad("top-readings-stream", lambda: training_lab.TopReadings(**top, stream=np.ones(2)), L,
            "stream must be [steps]"),
        ok("top-readings-relative", lambda: training_lab.TopReadings(**top).relative_moves,
           lambda r: list(r) == [1.0, 1.0, 1.0]),
        bad("stack-model-variant", lambda: model(variant="middle"), L, "variant must be one of"),
        bad("stack-model-embedding", lambda: model(embedding=np.ones((5, 4))), L, "embedding must be a Parameter"),
        bad("stack-model-head-shape", lambda: model(head=Parameter("head", np.ones((5, 4)))), L,
            "head must be [d, V] = [4, 5]"),
        bad("stack-model-blocks-tuple", lambda: model(blocks=()), L, "blocks must be a list"),
        bad("stack-model-final-norm", lambda: model(final_norm=None), L, "final_norm must be an RmsNorm"),
    ]


LAB_ROWS = _lab_rows()


@pytest.mark.parametrize("row", LAB_ROWS, ids=[row.id for row in LAB_ROWS])
def test_a_training_lab_reader_or_dataclass_answers_bad_input(row: Row, capfd):
    test_a_chapter_helper_answers_bad_input_with_its_typed_error(row, capfd)
