"""The learner reports and diagram traces say what the seed's say: its keys in its order, its line counts, its
numbers to six decimals and its verdicts. (The notebooks print both texts whole, so nbval pins their bytes.)
The command line prints them, and quits with one line when it cannot write them. Their verdicts are measured:
the same code reports the opposite when the model differs."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from llm_from_scratch import SwiGluForward, Tensor
from llm_from_scratch.book import worked_example as common
from llm_from_scratch.book.formats import format_vector
from llm_from_scratch.ch30 import example as ch30
from llm_from_scratch.ch31 import example as ch31

from worked_examples import SEED30, SEED31, SEED31_POST_LN_TOKEN_1

TEXTS = {("30", "report"): ch30.render_report, ("30", "trace"): ch30.render_trace,
         ("31", "report"): ch31.render_report, ("31", "trace"): ch31.render_trace}

# Each line of the seed's render_report: its key, then the names of its fields, in order.
_STAGES_30 = ("input", "projected_query_heads", "projected_key_heads", "projected_value_heads",
              "rotated_query_heads", "rotated_key_heads", "attention_weights", "head_outputs", "merged",
              "output_weight", "output")
REPORT_KEYS = {
    "30": ["chapter", "prediction", "config batch tokens d_model heads d_h offset capacity rope_base bias",
           *(f"{stage} shape values" for stage in _STAGES_30),
           "heads head_0_uniform head_1_distinct future_probabilities_zero",
           "prefix_perturbed_output position_0_unchanged position_1_unchanged position_2_changed",
           "layout split_merge_bitwise head_isolation_before_output common_offset_weights_preserved tolerance",
           "parameters names shapes count bias_free node_distinct", "upstream loss", "input_gradient",
           *(f"{role}_weight_gradient" for role in ("query", "key", "value", "output")),
           "gradcheck input query key value output total tolerance passed",
           "shapes input split rotated weights head_output merged output_weight output empty_batch_weights "
           "empty_batch_output single_token_weights",
           # the seed's offset_overflow (a Rust usize offset that overflows) is a negative offset in Python
           "errors zero_model_width zero_heads nondivisible odd_head_width input_rank input_width empty_tokens "
           "invalid_offset position_range released_input",
           "history earlier_weighted_context earlier_distributions_per_target single_head_shape multi_head_shape "
           "single_head_tables multi_head_tables rows_normalized mixing modern_example weight_api",
           "proof tape_finite replay heads_distinct causal split_merge gradients", "next"],
    "31": ["chapter", "config batch tokens model_width heads head_width feed_forward_width epsilon",
           "shape input attention_norm attention_weights attention_branch after_attention feed_forward_norm "
           "feed_forward_branch output probe_logits",
           "order pre_norm post_norm_differs",
           "causality prefix_0_bitwise prefix_1_bitwise suffix_changed future_probabilities_zero",
           "parameters tensors scalars bias_free stable_order distinct",
           "gradcheck input parameters total tolerance passed tape_finite",
           "errors configuration component_width input_rank input_width empty_tokens position_range released_input",
           "history sequential_recurrence original_post_norm modern_pre_norm numeric_order_contrast",
           "replay", "next"],
}
# Each record of the seed's render_trace: its kind, its fields in order, and how many times it comes.
TRACE_KEYS = {
    "30": [("CONFIG batch tokens model_width heads head_width offset max_positions rope_base bias parameter_order "
            "layout", 1), ("SHAPE stage value", 8),
           ("PARTITION head columns projected_query projected_key projected_value rotated_query rotated_key", 2),
           ("WEIGHTS head query values visible masked row_sum", 6), ("HEAD_OUTPUT head token values", 6),
           ("MERGED token head_0 head_1 values", 3), ("OUTPUT_MAP row values", 4), ("OUTPUT token before after", 3),
           ("PREFIX_PROOF position_0 position_1 position_2 split_merge head_isolation future_probabilities "
            "common_offset tolerance parameters gradchecks", 1)],
    "31": [("CONFIG batch tokens model_width heads head_width feed_forward_width epsilon stage_order", 1),
           ("SHAPE stage value", 9), ("STAGE name values", 7), ("WEIGHTS head query values visible masked row_sum", 6),
           ("MERGE name identity branch result exact", 2), ("PROBE token values", 3),
           ("ORDER_PROOF pre_norm post_norm_differs post_norm_token_1 pre_norm_token_1", 1),
           ("CAUSAL_PROOF position_0 position_1 position_2 future_probabilities", 1),
           ("PARAMETERS tensors scalars bias stable_order distinct names", 1),
           ("GRADIENTS input parameters total tolerance passed tape_finite", 1),
           ("HISTORY rnn_style_states sequential original_post_norm modern_pre_norm numeric_order_contrast", 1)],
}


def report_lines(text: str) -> list[tuple[str, dict[str, str]]]:
    """``key=... name:value name:value`` -> ``(key, {name: value})`` per line."""
    lines = []
    for line in text.splitlines():
        key, _, rest = line.partition("=")
        lines.append((key, dict(item.split(":", 1) for item in rest.split(" ") if ":" in item)))
    return lines


def trace_records(text: str) -> list[tuple[str, dict[str, str]]]:
    """``KIND|name=value|name=value`` -> ``(KIND, {name: value})`` per line."""
    return [(kind, dict(item.split("=", 1) for item in items))
            for kind, *items in (line.split("|") for line in text.splitlines())]


def vector(rows) -> str:
    return format_vector(np.asarray(rows, dtype=np.float64))


@pytest.mark.parametrize("chapter", ["30", "31"])
def test_the_report_has_the_seeds_lines_keys_and_fields_in_order(chapter):
    expected = [(key, names) for key, *names in (line.split(" ") for line in REPORT_KEYS[chapter])]
    lines = report_lines(TEXTS[chapter, "report"]())
    assert len(lines) == {"30": 30, "31": 11}[chapter]
    assert [(key, list(fields)) for key, fields in lines] == expected


@pytest.mark.parametrize("chapter", ["30", "31"])
def test_the_trace_has_the_seeds_records_and_fields_in_order(chapter):
    expected = [(kind, names) for line, times in TRACE_KEYS[chapter]
                for kind, *names in [line.split(" ")] for _ in range(times)]
    records = trace_records(TEXTS[chapter, "trace"]())
    assert len(records) == {"30": 34, "31": 33}[chapter]
    assert [(kind, list(fields)) for kind, fields in records] == expected


@pytest.mark.parametrize(("chapter", "kind"), list(TEXTS))
def test_every_check_says_what_the_seed_says(chapter, kind):
    """Every true/false field is true, but the two that say the layers have no bias."""
    parse = report_lines if kind == "report" else trace_records
    flags = [(key, name, value) for key, fields in parse(TEXTS[chapter, kind]())
             for name, value in fields.items() if value in ("true", "false")]
    assert len(flags) == {("30", "report"): 29, ("30", "trace"): 1, ("31", "report"): 22, ("31", "trace"): 13}[
        chapter, kind]
    no_bias = {("config", "bias"), ("CONFIG", "bias"), ("PARAMETERS", "bias")}
    assert all(value == ("false" if (key, name) in no_bias else "true") for key, name, value in flags)


def test_the_proofs_and_counts_are_the_seeds():
    report30, report31 = dict(report_lines(ch30.render_report())), dict(report_lines(ch31.render_report()))
    trace30, trace31 = dict(trace_records(ch30.render_trace())), dict(trace_records(ch31.render_trace()))
    assert trace30["PREFIX_PROOF"] == {
        "position_0": "bitwise-unchanged", "position_1": "bitwise-unchanged", "position_2": "changed",
        "split_merge": "bitwise", "head_isolation": "before-output", "future_probabilities": "exact-zero",
        "common_offset": "preserved", "tolerance": "0.000000000001", "parameters": "64", "gradchecks": "76"}
    assert trace31["CAUSAL_PROOF"] == {"position_0": "bitwise-unchanged", "position_1": "bitwise-unchanged",
                                       "position_2": "changed", "future_probabilities": "exact-zero"}
    assert (report30["proof"]["replay"], report30["history"]["mixing"]) == ("bitwise", "after-concatenation")
    assert "replay=bitwise" in ch31.render_report().splitlines()
    assert report30["gradcheck"] == {"input": "12", "query": "16", "key": "16", "value": "16", "output": "16",
                                     "total": "76", "tolerance": "0.000008", "passed": "true"}
    assert report31["gradcheck"] == {"input": "12", "parameters": "120", "total": "132", "tolerance": "0.000020",
                                     "passed": "true", "tape_finite": "true"}
    assert (report30["parameters"]["count"], report31["parameters"]["tensors"],
            report31["parameters"]["scalars"]) == ("64", "9", "120")
    assert (report30["history"]["single_head_tables"], report30["history"]["multi_head_tables"]) == ("1", "2")


def test_the_chapter_30_texts_print_the_seeds_numbers():
    report = dict(report_lines(ch30.render_report()))
    for stage, rows in SEED30.items():
        assert report[stage]["values"] == vector(rows), stage
    # the run with a new last token: rows 0 and 1 are the seed's output rows (row 2 is a free choice)
    perturbed = ch30.render_report().split("prefix_perturbed_output=")[1].split(" ")[0]
    assert perturbed.startswith(vector(SEED30["output"][:2])[:-1] + ",")
    records = trace_records(ch30.render_trace())
    expected = [
        *({"head": f"{h}", "columns": f"[{2 * h},{2 * h + 1}]",
           **{name: vector(SEED30[f"{name}_heads"][h]) for name in (
               "projected_query", "projected_key", "projected_value", "rotated_query", "rotated_key")}}
          for h in range(2)),
        *({"head": f"{h}", "query": f"{q}", "values": vector(SEED30["attention_weights"][h][q]),
           "visible": "[" + ",".join(map(str, range(q + 1))) + "]",
           "masked": "[" + ",".join(map(str, range(q + 1, 3))) + "]", "row_sum": "1.000000"}
          for h in range(2) for q in range(3)),
        *({"head": f"{h}", "token": f"{t}", "values": vector(SEED30["head_outputs"][h][t])}
          for h in range(2) for t in range(3)),
        *({"token": f"{t}", "head_0": vector(SEED30["head_outputs"][0][t]),
           "head_1": vector(SEED30["head_outputs"][1][t]), "values": vector(SEED30["merged"][t])} for t in range(3)),
        *({"row": f"{r}", "values": vector(SEED30["output_weight"][r])} for r in range(4)),
        *({"token": f"{t}", "before": vector(SEED30["merged"][t]), "after": vector(SEED30["output"][t])}
          for t in range(3)),
    ]
    assert [fields for _, fields in records[9:33]] == expected


def test_the_chapter_31_trace_prints_the_seeds_numbers():
    records = trace_records(ch31.render_trace())
    stages = [name for name in SEED31 if name not in ("attention_weights", "probe_logits")]
    assert [fields for _, fields in records[10:17]] == [
        {"name": name.replace("_", "-"), "values": vector(SEED31[name])} for name in stages]
    assert [fields["values"] for _, fields in records[17:23]] == [
        vector(row) for head in SEED31["attention_weights"] for row in head]
    assert [fields["values"] for _, fields in records[25:28]] == [vector(row) for row in SEED31["probe_logits"]]
    order = dict(records)["ORDER_PROOF"]
    assert (order["post_norm_token_1"], order["pre_norm_token_1"]) == (
        vector(SEED31_POST_LN_TOKEN_1), vector(SEED31["after_attention"][1]))


def command(chapter, *flags, **streams):
    return subprocess.run([sys.executable, "-m", f"llm_from_scratch.ch{chapter}", *flags],
                          stderr=subprocess.PIPE, text=True, **streams)


@pytest.mark.parametrize(("chapter", "kind"), list(TEXTS))
def test_the_command_line_prints_the_chapters_text(chapter, kind):
    result = command(chapter, *(["--trace"] if kind == "trace" else []), stdout=subprocess.PIPE)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == TEXTS[chapter, kind]()


@pytest.mark.parametrize("chapter", ["30", "31"])
def test_a_closed_pipe_ends_the_command_with_one_line(chapter):
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first byte: every write fails with EPIPE
    result = command(chapter, "--trace", stdout=write)
    os.close(write)
    assert result.returncode == 1
    prog = f"python -m llm_from_scratch.ch{chapter}"
    assert result.stderr.splitlines() == [f"{prog}: output not written: the reader closed the pipe"]


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("chapter", ["30", "31"])
def test_a_full_disk_ends_the_command_with_one_line(chapter):
    with open("/dev/full", "w") as full:
        result = command(chapter, stdout=full)
    assert result.returncode == 1
    prog = f"python -m llm_from_scratch.ch{chapter}"
    assert result.stderr.splitlines() == [f"{prog}: output not written: No space left on device"]


# -- the checks are measured: other models give the opposite verdicts ----------------------------------------------

def test_the_mixing_stage_is_the_first_stage_where_another_heads_part_differs():
    reference = ch30.build_attention().forward(Tensor(ch30.example_input()))
    assert ch30.first_mixing_stage(reference) == "output"  # head 1's change reaches head 0 only at W_O
    weights = ch30.example_weights()
    weights["query"] = weights["query"] + 0.25  # every head's queries change: mixing "before" the heads
    other = ch30.build_attention(weights).forward(Tensor(ch30.example_input()))
    assert ch30.first_mixing_stage(other) == "projected_query_heads"
    assert not ch30.heads_isolated_before_output(other)
    assert ch30.mixing_label("output") == "after-concatenation"
    assert ch30.mixing_label("projected_query_heads") == "projected-query-heads"


def test_bias_free_is_measured_on_a_zero_input():
    zero, shifted = Tensor(np.zeros((1, 3, 4))), Tensor(np.full((1, 3, 4), 0.5))
    assert common.zero_stays_zero(SwiGluForward(zero, zero, zero, zero, zero))
    assert not common.zero_stays_zero(SwiGluForward(zero, zero, zero, zero, shifted))  # e.g. a bias in W_down
    assert ch31.bias_free(ch31.build_block())


def test_the_head_and_causal_checks_read_the_tables():
    weights = ch30.build_attention().forward(Tensor(ch30.example_input())).attention_weights.value   # [1, h, T, T]
    swapped = weights[:, ::-1]
    assert ch30.head_zero_uniform(weights) and not ch30.head_zero_uniform(swapped)
    assert ch30.heads_distinct(weights) and not ch30.heads_distinct(weights[:, [0, 0]])
    dense = np.full((1, 2, 3, 3), 1 / 3)                             # every key visible to every query
    assert common.future_probabilities_zero(weights) and not common.future_probabilities_zero(dense)


def test_the_prefix_check_flags_each_changed_row():
    output = np.arange(12.0).reshape(1, 3, 4)
    changed = output.copy()
    changed[0, 1, 3] = np.nextafter(changed[0, 1, 3], np.inf)  # one bit of one number
    assert common.rows_unchanged(output, output) == [True, True, True]
    assert common.rows_unchanged(output, changed) == [True, False, True]


def test_a_non_finite_gradient_fails_the_tape_check():
    layer, x, forward = ch30.example_pass()
    assert common.tape_finite(layer, x, forward)
    x.grad[0, 0, 0] = np.nan
    assert not common.tape_finite(layer, x, forward)


def test_the_order_checks_see_a_post_norm_stage():
    block = ch31.build_block()
    x = ch31.example_input()
    forward = block.forward(Tensor(x))
    post = ch31.post_norm_first_stage(block, x)                      # LayerNorm(x + MHA(x)): [1, T, d_model]
    other = block.forward(Tensor(ch31.perturbed_input()))
    assert ch31.pre_norm_order(block, x, forward) and not ch31.pre_norm_order(block, x, other)
    x_prime = forward.after_attention.value                          # [1, T, d_model]
    assert ch31.post_norm_differs(post, x_prime) and not ch31.post_norm_differs(x_prime, x_prime)
    assert ch31.original_post_norm(post) and not ch31.original_post_norm(x_prime)
    assert ch31.modern_pre_norm(x_prime) and not ch31.modern_pre_norm(x)   # every row of X has RMS 1
