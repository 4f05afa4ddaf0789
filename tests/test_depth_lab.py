"""The depth lab's numbers against an independent float64 NumPy computation.

The reference (``numpy_stack``) re-implements the whole stack in plain NumPy from the
formulas, reading only the weights from the blocks. The gradients are central differences
of that reference loss, coordinate by coordinate, over every parameter of every block of
a small stack, and over the input for the stream gradient.
"""

from __future__ import annotations

import numpy as np
import pytest
from lab_errors import assert_depth_lab_error
from numpy_stack import central_difference, layer_norm, stack_loss, weights_of

from llm_from_scratch import Tensor
from llm_from_scratch.ch31 import depth_lab, gradient_gain
from llm_from_scratch.errors import DepthLabError

SMALL = {"heads": 2, "ffn_width": 12, "batch": 2, "tokens": 3, "vocabulary": 5, "seed": 5}
WIDTH, LAYERS = 8, 2


def setting(weight_scale=1.0):
    blocks = depth_lab.build_stack(layers=LAYERS, width=WIDTH, weight_scale=weight_scale, **SMALL)
    data = depth_lab.lab_data(width=WIDTH, **SMALL)
    return [weights_of(block) for block in blocks], data


# -- the tests ----------------------------------------------------------------------

CASES = [("pre", "rms", "swiglu", "both", 1.0), ("post", "rms", "swiglu", "both", 1.0),
         ("none", "rms", "swiglu", "both", 1.0), ("post", "layer", "swiglu", "both", 1.0),
         ("pre", "rms", "swiglu", "both", 3 ** 0.5), ("post", "rms", "swiglu", "both", 3 ** 0.5),
         ("post", "rms", "relu", "both", 3 ** 0.5), ("pre", "rms", "relu", "ffn", 1.0),
         ("post", "rms", "swiglu", "attention", 1.0), ("none", "rms", "relu", "ffn", 1.0)]


@pytest.mark.parametrize(("variant", "norm", "ffn", "branches", "scale"), CASES)
def test_run_matches_an_independent_numpy_stack(variant, norm, ffn, branches, scale):
    result = depth_lab.run(layers=LAYERS, width=WIDTH, variant=variant, norm=norm, ffn=ffn, branches=branches,
                           weight_scale=scale, **SMALL)
    weights, (x, head, targets) = setting(scale)
    options = {"norm": norm, "ffn": ffn, "branches": branches, "heads": SMALL["heads"]}

    def loss():
        return stack_loss(weights, x, head, targets, variant, **options)[0]

    value, rms = stack_loss(weights, x, head, targets, variant, **options)
    assert result.loss == pytest.approx(value, rel=1e-12)
    np.testing.assert_allclose(result.stream_rms, rms, rtol=1e-12)
    numeric = [np.sqrt(sum(np.sum(central_difference(loss, array) ** 2) for array in w.values()))
               for w in weights]
    np.testing.assert_allclose(result.gradient_norms, numeric, rtol=1e-6)
    # the stream gradient at the input: dLoss/dx_0
    assert result.stream_gradients[0] == pytest.approx(np.linalg.norm(central_difference(loss, x)), rel=1e-6)


def test_stream_gradients_chain_block_by_block():
    """||dL/dx_l|| for every layer: the top one is the final norm's VJP, each lower one
    a block's VJP of the one above, as one backward pass through the whole stack gives."""
    result = depth_lab.run(layers=3, width=WIDTH, variant="post", **SMALL)
    blocks = depth_lab.build_stack(layers=3, width=WIDTH, heads=2, ffn_width=12, tokens=3, seed=5)
    x, head, targets = depth_lab.lab_data(width=WIDTH, batch=2, tokens=3, vocabulary=5, seed=5)
    from llm_from_scratch import RmsNorm
    from llm_from_scratch.book.training import cross_entropy

    leaf = Tensor(x, requires_grad=True)
    stream, outputs = leaf, []
    for block in blocks:
        stream = depth_lab.post_norm(depth_lab.parts_of(block), stream)
        outputs.append(stream)
    top = RmsNorm.new("final", WIDTH).forward(stream)
    grad = cross_entropy(top.value @ head, targets)[1] @ head.T
    top.backward(grad)                       # one tape, one backward
    assert result.stream_gradients.shape == (4,)
    assert result.stream_gradients[0] == pytest.approx(np.linalg.norm(leaf.grad), rel=1e-12)
    assert result.layers == 3 and result.settings.ffn == "swiglu" and result.settings.branches == "both"


def test_per_tensor_norms_add_up_to_the_block_norm():
    result = depth_lab.run(layers=3, width=WIDTH, variant="pre", **SMALL)
    assert result.tensor_names == depth_lab.TENSORS
    np.testing.assert_allclose(np.sqrt((result.tensor_norms ** 2).sum(axis=1)), result.gradient_norms)
    assert result.tensor_gradient("ffn.down.weight").shape == (3,)


def test_pre_wiring_is_the_package_block_bit_for_bit():
    blocks = depth_lab.build_stack(layers=2, width=WIDTH, heads=2, tokens=3, seed=9)
    x = depth_lab.lab_data(width=WIDTH, tokens=3, seed=9)[0]
    for block in blocks:
        composed = depth_lab.pre_norm(depth_lab.parts_of(block), Tensor(x)).value
        assert np.array_equal(composed, block.forward(Tensor(x)).output.value)


def test_layer_norm_part_is_centred_rms_norm():
    block = depth_lab.build_stack(layers=1, width=WIDTH, heads=2, tokens=3, seed=9)[0]
    z = depth_lab.lab_data(width=WIDTH, heads=2, tokens=3, seed=4)[0] + 0.7
    got = depth_lab.parts_of(block, "layer").attention_norm(Tensor(z)).value
    np.testing.assert_allclose(got, layer_norm(z, 1.0, 1e-5), rtol=1e-13)
    assert np.abs(got.mean(axis=-1)).max() < 1e-12


def test_variants_share_weights_and_data_but_not_results():
    runs = depth_lab.compare(layers=4, width=WIDTH, **SMALL)
    assert len({run.stream_rms[0] for run in runs.values()}) == 1    # the same embeddings
    assert len({float(run.gradient_norms[0]) for run in runs.values()}) == 3
    np.testing.assert_allclose(runs["post"].stream_rms[1:], 1.0, atol=1e-5)  # RMSNorm ends each block


def test_equal_arguments_give_bitwise_equal_runs():
    settings = depth_lab.Settings(layers=3, width=WIDTH, variant="post", **SMALL)
    first, second = depth_lab.run(settings), depth_lab.run(settings)
    assert np.array_equal(first.gradient_norms, second.gradient_norms)
    assert np.array_equal(first.stream_rms, second.stream_rms) and first.loss == second.loss


def test_top_block_gradient_is_the_last_layer_of_each_run():
    """One forward pass serves every depth: the numbers are run(L)'s, bit for bit."""
    tops = depth_lab.top_block_gradient([3, 1, 2, 3], width=WIDTH, **SMALL)     # any order, repeats
    assert set(tops) == set(depth_lab.VARIANTS)
    for variant, values in tops.items():
        expected = [depth_lab.run(layers=depth, width=WIDTH, variant=variant, **SMALL).gradient_norms[-1]
                    for depth in (3, 1, 2, 3)]
        assert values.tolist() == expected
    settings = depth_lab.Settings(width=WIDTH, ffn="relu", branches="ffn", weight_scale=3 ** 0.5, norm="layer",
                                  **SMALL)
    down = depth_lab.top_block_gradient([2, 3], settings, tensor="ffn.down.weight", variants=("post",))
    assert set(down) == {"post"}
    runs = [depth_lab.run(settings, layers=depth, variant="post") for depth in (2, 3)]
    assert down["post"].tolist() == [run.tensor_gradient("ffn.down.weight")[-1] for run in runs]


def test_compare_runs_the_variants_asked_for():
    runs = depth_lab.compare(layers=2, width=WIDTH, variants=("pre", "post"), norm="layer", **SMALL)
    assert list(runs) == ["pre", "post"] and all(run.settings.norm == "layer" for run in runs.values())
    assert [run.settings.variant for run in runs.values()] == ["pre", "post"]


def test_tables_name_the_norm_each_run_used():
    rms, layer = (depth_lab.compare(layers=2, width=WIDTH, norm=norm, **SMALL) for norm in ("rms", "layer"))
    assert [row[0] for row in depth_lab.summary_table(layer, layers=(1, 2))[1][::2]] == [
        "Pre-LN", "Post-LN", "без остаточных путей, LN"]
    header, rows = depth_lab.gradient_table({"1": rms, "√3": layer}, layers=(1, 2))
    assert header == ["множитель инициализации", "схема", "блок 1", "блок 2"]
    assert [row[:2] for row in rows[::3]] == [["1", "Pre-RMSNorm"], ["√3", "Pre-LN"]]
    assert rows[4][3] == depth_lab.short(layer["post"].gradient_norms[1])


# -- bad settings: one row per case ------------------------------------------------

def run_small(**arguments):
    return depth_lab.run(**{"layers": 2, "width": WIDTH, **SMALL, **arguments})


BAD = [
    # (id, call, words the message must contain)
    ("variant", lambda: run_small(variant="middle"), ["variant", "'pre', 'post', 'none'", "'middle'"]),
    ("variant type", lambda: run_small(variant=["pre"]), ["variant", "['pre']"]),
    ("norm", lambda: run_small(norm="batch"), ["norm", "'rms', 'layer'", "'batch'"]),
    ("ffn", lambda: run_small(ffn="gelu"), ["ffn", "'swiglu', 'relu'", "'gelu'"]),
    ("branches", lambda: run_small(branches="mlp"), ["branches", "'both', 'attention', 'ffn'", "'mlp'"]),
    ("layers 0", lambda: run_small(layers=0), ["layers", "[1, 256]", "got 0"]),
    ("layers bool", lambda: run_small(layers=True), ["layers", "got True"]),
    ("layers float", lambda: run_small(layers=2.0), ["layers", "got 2.0"]),
    ("layers 10000", lambda: run_small(layers=10_000), ["layers", "[1, 256]", "got 10000"]),
    ("width 0", lambda: run_small(width=0), ["width", "[1, 512]", "got 0"]),
    ("heads", lambda: run_small(heads=3), ["heads", "width 8", "got 3"]),
    ("heads odd width", lambda: run_small(heads=8), ["heads", "even width", "got 8"]),
    ("ffn_width 0", lambda: run_small(ffn_width=0), ["ffn_width", "[1, 2048]", "got 0"]),
    ("batch 0", lambda: run_small(batch=0), ["batch", "[1, 256]", "got 0"]),
    ("tokens 0", lambda: run_small(tokens=0), ["tokens", "[1, 256]", "got 0"]),
    ("vocabulary 1", lambda: run_small(vocabulary=1), ["vocabulary", "[2, 4096]", "got 1"]),
    ("seed 2**64", lambda: run_small(seed=2 ** 64), ["seed", "18446744073709551615", "18446744073709551616"]),
    ("seed -1", lambda: run_small(seed=-1), ["seed", "got -1"]),
    ("weight_scale 1e200", lambda: run_small(weight_scale=1e200), ["weight_scale", "(0, 100]", "1e+200"]),
    ("weight_scale 0", lambda: run_small(weight_scale=0), ["weight_scale", "got 0"]),
    ("weight_scale nan", lambda: run_small(weight_scale=float("nan")), ["weight_scale", "nan"]),
    ("weight_scale 10**400", lambda: run_small(weight_scale=10 ** 400), ["weight_scale", "(0, 100]"]),
    ("weight_scale text", lambda: run_small(weight_scale="2"), ["weight_scale", "'2'"]),
    ("size of activations", lambda: run_small(layers=256, batch=256, tokens=256, width=8),
     ["float64 values", "limit 33554432"]),
    ("size of weights", lambda: run_small(layers=256, width=512, heads=4, ffn_width=2048),
     ["float64 values", "limit 33554432"]),
    ("settings by position", lambda: depth_lab.run(24), ["settings", "depth_lab.Settings", "got 24"]),
    ("compare variant", lambda: depth_lab.compare(variant="pre"), ["variant", "variants", "got variant='pre'"]),
    ("top layers", lambda: depth_lab.top_block_gradient([1, 2], layers=4), ["layers", "depths", "got layers=4"]),
    ("tensor", lambda: run_small().tensor_gradient("ffn.w2"), ["tensor", "'ffn.down.weight'", "'ffn.w2'"]),
    ("tensor type", lambda: depth_lab.top_block_gradient([1], width=WIDTH, tensor=3, **SMALL), ["tensor", "got 3"]),
    ("depths", lambda: depth_lab.top_block_gradient([0, 2], width=WIDTH, **SMALL), ["depth", "got 0"]),
    ("depths empty", lambda: depth_lab.top_block_gradient([], width=WIDTH, **SMALL), ["at least one depth"]),
    ("top option", lambda: depth_lab.top_block_gradient([1], width=WIDTH, depth=3),
     ["'depth'", "unknown", "weight_scale"]),
    ("top tensor", lambda: depth_lab.top_block_gradient([1], width=WIDTH, tensor="w_q", **SMALL), ["tensor", "'w_q'"]),
    ("variants", lambda: depth_lab.compare(layers=2, width=WIDTH, variants="pre", **SMALL), ["variants", "'pre'"]),
    ("table layer -1", lambda: depth_lab.summary_table({"pre": run_small()}, layers=(1, -1)),
     ["table layer", "[1, 2]", "got -1"]),
    ("table layer 3", lambda: depth_lab.gradient_table({"1": {"pre": run_small()}}, layers=(3,)),
     ["table layer", "[1, 2]", "got 3"]),
]


@pytest.mark.parametrize(("call", "words"), [pytest.param(c, w, id=i) for i, c, w in BAD])
def test_bad_settings_get_a_depth_lab_error_that_names_them(call, words, capfd):
    assert_depth_lab_error(call, words, capfd)


def test_numpy_integers_are_integers_and_the_last_seed_works(capfd):
    plain = depth_lab.run(layers=2, width=WIDTH, **SMALL)
    numpy = depth_lab.run(layers=np.int64(2), width=np.int32(WIDTH), **SMALL)
    assert np.array_equal(numpy.gradient_norms, plain.gradient_norms) and numpy.settings == plain.settings
    assert type(numpy.settings.layers) is int and type(numpy.settings.width) is int
    last = depth_lab.run(layers=2, width=WIDTH, **{**SMALL, "seed": 2 ** 64 - 1})    # data from seed 0
    assert np.isfinite(last.loss) and capfd.readouterr().err == ""


def test_a_run_that_overflows_says_so(monkeypatch, capfd):
    """Within the limits nothing overflows; if the float64 values do, the error names the
    run, not an internal layer, and NumPy prints no warning."""
    monkeypatch.setattr(depth_lab, "MAX_WEIGHT_SCALE", 1e300)
    with pytest.raises(DepthLabError, match=r"depth lab run \(weight_scale 1e\+200\)"):
        run_small(weight_scale=1e200)
    assert capfd.readouterr().err == ""
    monkeypatch.undo()
    largest = run_small(variant="pre", weight_scale=100.0)
    assert np.isfinite(largest.loss) and np.all(np.isfinite(largest.gradient_norms))


# -- the switches and the derivation ---------------------------------------------------

def test_relu_uses_gate_and_down_and_leaves_up_without_gradient():
    result = depth_lab.run(layers=2, width=WIDTH, variant="post", ffn="relu", **SMALL)
    assert np.all(result.tensor_gradient("ffn.up.weight") == 0.0)
    assert np.all(result.tensor_gradient("ffn.gate.weight") > 0.0)


def test_one_branch_stacks_give_no_gradient_to_the_other_branch():
    attention = depth_lab.run(layers=2, width=WIDTH, variant="pre", branches="attention", **SMALL)
    ffn = depth_lab.run(layers=2, width=WIDTH, variant="post", branches="ffn", **SMALL)
    for name in ("ffn_norm.gain", "ffn.gate.weight", "ffn.up.weight", "ffn.down.weight"):
        assert np.all(attention.tensor_gradient(name) == 0.0)
    for name in ("attention_norm.gain", "attention.query.weight", "attention.output.weight"):
        assert np.all(ffn.tensor_gradient(name) == 0.0)


def sampled_ffn_gains(ffn, k, width=64, hidden=256, samples=400, seed=0):
    """kappa_f and kappa_J by Monte Carlo over random networks with the lab's uniform weights,
    the Jacobian written out by hand: an independent check of the moment formulas."""
    rng = np.random.default_rng(seed)
    forward = backward = 0.0
    for _ in range(samples):
        def uniform(n_in, n_out):
            return rng.uniform(-k / np.sqrt(n_in), k / np.sqrt(n_in), (n_in, n_out))

        gate, up, down = uniform(width, hidden), uniform(width, hidden), uniform(hidden, width)
        x = rng.standard_normal(width)
        x /= np.sqrt(np.mean(x ** 2))                       # RMS 1, as after a norm
        v = rng.standard_normal(width)
        a, b = x @ gate, x @ up
        sigmoid = 1.0 / (1.0 + np.exp(-a))
        h = down @ v
        if ffn == "relu":
            f = np.maximum(a, 0.0) @ down
            jt_v = gate @ ((a > 0) * h)                     # J^T v
        else:
            f = (a * sigmoid * b) @ down
            slope = sigmoid * (1.0 + a * (1.0 - sigmoid))
            jt_v = gate @ (h * b * slope) + up @ (h * a * sigmoid)
        forward += np.mean(f ** 2)
        backward += np.sum(jt_v ** 2) / np.sum(v ** 2)
    return forward / samples, backward / samples


@pytest.mark.parametrize(("ffn", "k"), [("swiglu", 1.0), ("swiglu", 3 ** 0.5), ("relu", 3 ** 0.5)])
def test_the_moment_formulas_match_random_networks(ffn, k):
    gains = gradient_gain.ffn_gains(ffn, k)
    forward, backward = sampled_ffn_gains(ffn, k)
    assert gains.forward == pytest.approx(forward, rel=0.06)
    assert gains.backward == pytest.approx(backward, rel=0.06)


def test_the_derivation_predicts_the_lab_gain_of_a_post_sublayer():
    """The chapter's table: formula against the lab, ffn-only Post stacks of 24 blocks."""
    expected = {("swiglu", 1.0): (1.006, 1.005), ("relu", 1.0): (1.000, 1.002),
                ("swiglu", 3 ** 0.5): (1.131, 1.146), ("relu", 3 ** 0.5): (1.000, 1.020)}
    for (ffn, k), (predicted, measured) in expected.items():
        gains = gradient_gain.ffn_gains(ffn, k)
        lab = depth_lab.run(layers=24, width=32, variant="post", ffn=ffn, branches="ffn", weight_scale=k)
        assert round(gains.post, 3) == predicted
        assert round(gradient_gain.measured_gain(lab), 3) == measured
        assert abs(gains.post - gradient_gain.measured_gain(lab)) < 0.025    # «остаток в 1–2 %»
    swiglu = gradient_gain.ffn_gains("swiglu", 3 ** 0.5)
    assert (round(swiglu.forward, 3), round(swiglu.backward, 3)) == (0.356, 0.735)
    relu = gradient_gain.ffn_gains("relu", 3 ** 0.5)
    assert relu.forward == relu.backward == pytest.approx(0.5, abs=1e-15)


def test_attention_and_whole_blocks_as_the_chapter_reads_them():
    root3 = 3 ** 0.5
    attention = depth_lab.run(layers=24, width=32, variant="post", branches="attention", weight_scale=root3)
    swiglu = depth_lab.run(layers=24, width=32, variant="post", weight_scale=root3)
    relu = depth_lab.run(layers=24, width=32, variant="post", ffn="relu", weight_scale=root3)
    assert round(gradient_gain.measured_gain(attention), 3) == 0.979
    assert [depth_lab.short(g) for g in attention.gradient_norms[[0, -1]]] == ["0.349", "0.560"]  # к выходу
    ffn = depth_lab.run(layers=24, width=32, variant="post", branches="ffn", weight_scale=root3)
    assert round(gradient_gain.measured_gain(ffn), 3) == 1.146
    assert round(gradient_gain.measured_gain(swiglu), 3) == 1.091
    assert round(gradient_gain.measured_gain(relu), 3) == 1.024
    assert round(swiglu.gradient_norms[0] / swiglu.gradient_norms[-1]) == 7          # «в 7 раз»
    assert [depth_lab.short(g) for g in relu.gradient_norms[[0, -1]]] == ["1.70", "0.779"]
    assert round(relu.gradient_norms[0] / relu.gradient_norms[-1]) == 2                # «вдвое», «втрое слабее»
    pre = {ffn: depth_lab.run(layers=24, width=32, variant="pre", ffn=ffn, branches="ffn", weight_scale=root3)
           for ffn in ("swiglu", "relu")}
    ratios = {ffn: run.stream_gradients[0] / run.stream_gradients[-1] for ffn, run in pre.items()}
    predicted = {ffn: gradient_gain.predicted_pre_ratio(pre[ffn], gradient_gain.ffn_gains(ffn, root3))
                 for ffn in pre}
    assert [round(ratios[f], 1) for f in ("swiglu", "relu")] == [12.2, 4.3]
    assert [round(predicted[f], 1) for f in ("swiglu", "relu")] == [8.5, 3.9]
    assert (ratios["swiglu"] / predicted["swiglu"]) ** (1 / 24) == pytest.approx(1.015, abs=0.003)  # «1.5 %»


def test_the_numbers_the_chapter_quotes():
    """The prose of the depth lab (and its «Итак») quotes these values of the default runs."""
    runs = depth_lab.compare(layers=24, width=32)
    assert runs["pre"].stream_rms[[0, -1]] == pytest.approx([0.98, 1.59], abs=0.005)
    assert runs["pre"].gradient_norms[[0, -1]] == pytest.approx([0.472, 0.272], abs=0.0005)
    assert runs["none"].stream_rms[1] == pytest.approx(0.109, abs=0.0005)
    none = runs["none"].gradient_norms
    assert none[[0, -1]] == pytest.approx([2363, 2.99], rel=0.002)
    assert 100 < none[0] / none[-1] < 1000                            # «почти на три порядка»
    assert (none[0] / none[-1]) ** (1 / 23) == pytest.approx(1.3, abs=0.05)
    post = runs["post"].gradient_norms                                 # «по всем 24 слоям»
    assert round(post.min(), 2) == 0.40 and round(post.max(), 2) == 0.52
    assert [depth_lab.short(g) for g in (runs["pre"].gradient_norms.min(), runs["pre"].gradient_norms.max())] == [
        "0.266", "0.472"]
    flat = runs["none"]                                                # «RMS около 0.1 — от 0.09 до 0.12»
    assert f"{flat.stream_rms[1:].min():.2f}–{flat.stream_rms[1:].max():.2f}" == "0.09–0.12"
    assert round(gradient_gain.measured_gain(flat), 2) == 1.34
    np.testing.assert_allclose(runs["post"].stream_rms[1:], 1.0, atol=1e-5)
    for run in (runs["pre"], runs["post"]):                            # «меньше чем вдвое»
        assert run.gradient_norms.max() / run.gradient_norms.min() < 2

    scaled = depth_lab.compare(layers=24, width=32, weight_scale=3 ** 0.5)
    rms = scaled["pre"].stream_rms
    assert rms[-1] == pytest.approx(4.98, abs=0.005)
    assert (rms[-1] ** 2 - rms[0] ** 2) / 48 == pytest.approx(0.497, abs=5e-4)
    assert scaled["post"].gradient_norms[[0, -1]] == pytest.approx([6.35, 0.900], abs=0.005)
    assert scaled["pre"].gradient_norms[[0, -1]] == pytest.approx([2.37, 0.226], abs=0.005)
    assert round(scaled["pre"].gradient_norms[0] / scaled["pre"].gradient_norms[-1]) == 10
    assert round(scaled["post"].gradient_norms[0] / scaled["post"].gradient_norms[-1]) == 7

    layer = depth_lab.compare(layers=24, width=32, norm="layer", weight_scale=3 ** 0.5, variants=("pre", "post"))
    assert layer["post"].gradient_norms[[0, -1]] == pytest.approx([6.62, 0.801], abs=0.005)

    down = "ffn.down.weight"
    top = depth_lab.top_block_gradient(range(1, 25), tensor=down, variants=("pre", "post"), weight_scale=3 ** 0.5)
    assert top["pre"][[0, -1]] == pytest.approx([0.509, 0.141], abs=0.0005)
    assert top["pre"][0] / top["pre"][-1] == pytest.approx(3.6, abs=0.05)
    products = []
    for depth, rms_top in ((1, 1.38), (4, 2.04), (16, 4.14), (24, 4.98)):
        lab = depth_lab.run(layers=depth, width=32, variant="pre", weight_scale=3 ** 0.5)
        assert lab.stream_rms[-1] == pytest.approx(rms_top, abs=0.005)
        products.append(lab.tensor_gradient(down)[-1] * lab.stream_rms[-1])
    assert [round(p, 3) for p in products] == [0.703, 0.673, 0.733, 0.704]
    # one run of 24 blocks gives the stream after the top block of every depth
    lab = depth_lab.run(layers=24, width=32, variant="pre", weight_scale=3 ** 0.5)
    every = top["pre"] * lab.stream_rms[1:]
    assert every[[0, 3, 15, 23]].tolist() == pytest.approx(products, rel=1e-12)
    assert f"{every.min():.2f} {every.max():.2f}" == "0.59 0.77"           # «между 0.59 и 0.77»
    assert round(lab.stream_rms[-1] / lab.stream_rms[1], 1) == 3.6       # «RMS растёт в 3.6 раза»
    assert round(top["post"].min(), 2) == 0.47 and round(top["post"].max(), 2) == 0.62
    plain_top = depth_lab.top_block_gradient([1, 24], tensor=down, variants=("pre",))
    assert plain_top["pre"] == pytest.approx([0.21, 0.14], abs=0.005)


def test_the_depth_lab_exercise_quotes_the_lab():
    """Exercise 31.11 and its solution: the law says 0.5, the lab 0.54 = 0.49 (the streams)
    times 0.73 / 0.67 (the two top blocks); over ten seeds 0.52 ± 0.04."""
    from llm_from_scratch.ch31 import exercises as ex31

    options = {"tensor": "ffn.down.weight", "variants": ("pre",), "weight_scale": 3 ** 0.5}
    g = depth_lab.top_block_gradient([4, 16], **options)["pre"]
    assert round(g[1] / g[0], 2) == 0.54
    assert ex31.EXERCISES[11].solution()["measured"] == g[1] / g[0]
    rms = [depth_lab.run(layers=depth, variant="pre", weight_scale=3 ** 0.5).stream_rms[-1] for depth in (4, 16)]
    assert [round(r, 2) for r in rms] == [2.04, 4.14] and round(rms[0] / rms[1], 2) == 0.49
    own = [g[0] * rms[0], g[1] * rms[1]]
    assert [round(x, 2) for x in own] == [0.67, 0.73]
    assert [f"{r:.3f}" for r in rms] == ["2.044", "4.140"] and f"{rms[0] / rms[1]:.3f}" == "0.494"
    assert [f"{x:.3f}" for x in own] == ["0.673", "0.733"] and f"{g[1] / g[0]:.3f}" == "0.538"
    assert f"{0.494 * 0.733 / 0.673:.3f}" == "0.538"                     # the solution's arithmetic
    assert rms[0] / rms[1] * own[1] / own[0] == pytest.approx(g[1] / g[0], rel=1e-12)
    ratios = [r[1] / r[0] for r in (depth_lab.top_block_gradient([4, 16], seed=seed, **options)["pre"]
                                    for seed in range(10))]
    assert f"{np.mean(ratios):.2f} ± {np.std(ratios):.2f}" == "0.52 ± 0.04"


def test_summary_table_reads_the_runs():
    runs = depth_lab.compare(layers=3, width=WIDTH, **SMALL)
    header, rows = depth_lab.summary_table(runs, layers=(1, 3))
    assert header == ["схема", "величина", "блок 1", "блок 3"]
    assert len(rows) == 6 and rows[0][0] == depth_lab.LABELS["pre"]
    assert rows[0][2:] == [f"{runs['pre'].stream_rms[1]:.3f}", f"{runs['pre'].stream_rms[3]:.3f}"]
    assert rows[1][3] == f"{runs['pre'].gradient_norms[2]:#.3g}"


# -- closer to Xiong et al.: Xavier, no final norm, the gain under a random upstream ----

def test_xavier_stretches_the_same_draws_to_xavier_bounds():
    plain = depth_lab.build_stack(layers=1, width=WIDTH, **SMALL)[0].parameters()
    xavier = depth_lab.build_stack(layers=1, width=WIDTH, init="xavier", weight_scale=2.0, **SMALL)[0].parameters()
    for p, q in zip(plain, xavier, strict=True):
        if p.ndim == 2:
            n_in, n_out = p.shape
            bound = np.sqrt(6.0 / (n_in + n_out))
            np.testing.assert_allclose(q.value, 2.0 * bound * np.sqrt(n_in) * p.value, rtol=1e-12)
            assert np.abs(q.value).max() <= 2.0 * bound
        else:
            assert np.array_equal(p.value, q.value)


def test_without_the_final_norm_the_head_reads_the_last_block():
    options = {"layers": LAYERS, "width": WIDTH, "variant": "post", **SMALL}
    weights, (x, head, targets) = setting()
    from numpy_stack import block, cross_entropy
    stream = x
    for w in weights:
        stream = block(stream, w, "post", heads=SMALL["heads"])
    result = depth_lab.run(final_norm=False, **options)
    assert result.loss == pytest.approx(cross_entropy(stream @ head, targets), rel=1e-12)
    assert result.loss != depth_lab.run(**options).loss


def test_random_upstream_gain_matches_the_formula_where_the_real_gradient_does_not():
    """The page's table: ReLU 1.000 / 1.000 / 1.020, SwiGLU 1.131 / 1.123 / 1.146."""
    quoted = {"relu": ("1.000", "1.000", "1.020"), "swiglu": ("1.131", "1.123", "1.146")}
    for ffn, numbers in quoted.items():
        only = depth_lab.Settings(layers=24, width=32, variant="post", ffn=ffn, branches="ffn",
                                  weight_scale=3 ** 0.5)
        noise = gradient_gain.random_upstream_gain(only)
        assert noise == gradient_gain.random_upstream_gain(only)            # deterministic
        real = gradient_gain.measured_gain(depth_lab.run(only))
        got = (f"{gradient_gain.ffn_gains(ffn, 3 ** 0.5).post:.3f}", f"{noise:.3f}", f"{real:.3f}")
        assert got == numbers
        assert real > noise                                                 # «лишние 1–2 %»
    # a stack whose every block is the identity (Pre, both sublayers' branches zero) passes noise
    # unchanged: the gain is exactly 1, so the ratio is read from the right gradient
    frozen = gradient_gain.random_upstream_gain(layers=3, width=WIDTH, variant="pre", branches="attention",
                                                weight_scale=1e-300 ** 0.25, **SMALL)
    assert frozen == pytest.approx(1.0, abs=1e-12)


def test_the_paper_like_stack_leans_either_way_by_seed():
    """«у трёх зёрен из пяти профиль растёт к выходу»; the multiplier 0.99 … 1.05."""
    paper = depth_lab.Settings(layers=24, width=32, variant="post", norm="layer", ffn="relu", init="xavier",
                               final_norm=False)
    labs = [depth_lab.run(paper, seed=seed) for seed in range(31, 36)]
    to_output = [lab.gradient_norms[0] < lab.gradient_norms[-1] for lab in labs]
    assert to_output == [True, False, True, True, False]
    gains = [gradient_gain.measured_gain(lab) for lab in labs]
    assert f"{min(gains):.2f} {max(gains):.2f}" == "0.99 1.05"


def test_the_xiong_table_numbers():
    root3 = depth_lab.compare(layers=24, width=32, weight_scale=3 ** 0.5, variants=("pre", "post"))
    pre, post = (root3[v].gradient_norms for v in ("pre", "post"))
    assert f"{pre[0] / pre[-1]:.1f} {post[0] / post[-1]:.1f}" == "10.5 7.1"
    rms = root3["pre"].stream_rms
    assert round(rms[-1] / rms[1], 1) == 3.6
    assert rms[1] ** 2 == pytest.approx(2.0, abs=0.1) and rms[-1] ** 2 == pytest.approx(25.0, abs=0.3)  # 1 + L
    relu = depth_lab.run(layers=24, width=32, variant="post", ffn="relu", weight_scale=3 ** 0.5)
    down = relu.tensor_gradient("ffn.down.weight")
    assert f"{down[0]:.3f} {down[-1]:.3f}" == "1.147 0.522"
    assert round(relu.gradient_norms[0] / relu.gradient_norms[-1], 1) == 2.2        # «в 2.2 раза»
    assert round(down[0] / down[-1]) == 2                                            # «примерно вдвое»
    top = depth_lab.top_block_gradient(range(1, 25), tensor="ffn.down.weight", variants=("pre",),
                                       weight_scale=3 ** 0.5)["pre"]
    product = top * rms[1:]                                                         # «±13 %»
    assert round((product.max() - product.min()) / (product.max() + product.min()), 2) == 0.13


def test_gradient_spread_over_ten_seeds():
    """The main page's «Стек из многих блоков», on ten seeds (31-40) rather than the figure's one:
    with residual paths the 24 blocks' gradient norms differ 1.2-2.2 times (Pre 1.5-2.2, Post
    1.2-1.6), without them 700-16 000 times; seed 31, the figure's, gives 791."""
    spread = {}
    for seed in range(31, 41):
        for variant, run in depth_lab.compare(layers=24, width=32, seed=seed).items():
            norms = np.asarray(run.gradient_norms)
            spread[seed, variant] = norms.max() / norms.min()
    def over(variant):
        return [spread[seed, variant] for seed in range(31, 41)]
    assert round(spread[31, "none"]) == 791
    assert min(over("pre")) >= 1.45 and max(over("pre")) < 2.25
    assert min(over("post")) >= 1.2 and max(over("post")) < 1.65
    assert min(over("none")) >= 700 and max(over("none")) < 16_500


def test_input_norm_gain_splits_the_measured_gain_of_the_stack_without_residuals():
    # The main page's fold: the input RMSNorm's Jacobian (about ×10 over a
    # stream of RMS 0.1) times the rest of the block is the measured gain.
    lab = depth_lab.run(layers=24, width=32, variant="none")
    norm, rest = gradient_gain.input_norm_gain(lab)
    assert round(norm, 3) == 9.873 and round(rest, 4) == 0.1355
    assert norm * rest == pytest.approx(gradient_gain.measured_gain(lab), rel=1e-12)
    # a stack with residual paths has no norm on the stream's way down
    with pytest.raises(DepthLabError, match=r"variant 'none'\), got variant 'pre'"):
        gradient_gain.input_norm_gain(depth_lab.run(layers=4, variant="pre"))
    with pytest.raises(DepthLabError, match="measured gain needs a DepthRun, got str"):
        gradient_gain.input_norm_gain("run")
