"""The depth lab's numbers against an independent float64 NumPy computation.

The reference below re-implements the whole stack in plain NumPy from the
formulas (RMSNorm, RoPE, causal softmax, SwiGLU, the three wirings, the final
RMSNorm and the cross-entropy), reading only the weights from the blocks. The
gradients are central differences of that reference loss, coordinate by
coordinate, over every parameter of every block of a small stack.
"""

from __future__ import annotations

import numpy as np
import pytest

from llm_from_scratch import Tensor
from llm_from_scratch.chapters import depth_lab

SMALL = {"heads": 2, "ffn_width": 12, "batch": 2, "tokens": 3, "vocabulary": 5, "seed": 5}
WIDTH, LAYERS = 8, 2


# -- the reference ------------------------------------------------------------------

def rms_norm(z, gain, eps):
    return z / np.sqrt(np.mean(z * z, axis=-1, keepdims=True) + eps) * gain


def layer_norm(z, gain, eps):
    centred = z - z.mean(axis=-1, keepdims=True)
    return centred / np.sqrt(np.mean(centred ** 2, axis=-1, keepdims=True) + eps) * gain


def rope(x, base):
    """x: [B, h, T, d_h]; pair i of position p turns by p * base**(-2i/d_h)."""
    tokens, width = x.shape[-2:]
    angles = np.arange(tokens)[:, None] * base ** (-2.0 * np.arange(width // 2) / width)
    cos, sin = np.cos(angles), np.sin(angles)
    even, odd = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = even * cos - odd * sin
    out[..., 1::2] = even * sin + odd * cos
    return out


def attention(z, w, heads, base):
    batch, tokens, width = z.shape
    d_h = width // heads

    def split(m):
        return m.reshape(batch, tokens, heads, d_h).transpose(0, 2, 1, 3)

    q, k, v = split(z @ w["query"]), split(z @ w["key"]), split(z @ w["value"])
    q, k = rope(q, base), rope(k, base)
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d_h)
    scores = np.where(np.tri(tokens, dtype=bool), scores, -np.inf)
    p = np.exp(scores - scores.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    merged = (p @ v).transpose(0, 2, 1, 3).reshape(batch, tokens, width)
    return merged @ w["output"]


def swiglu(z, w):
    gate = z @ w["gate"]
    return (gate / (1.0 + np.exp(-gate)) * (z @ w["up"])) @ w["down"]


def weights_of(block):
    values = {p.name.split(".", 1)[1]: p.value.copy() for p in block.parameters()}
    return {"g_a": values["attention_norm.gain"], "g_f": values["ffn_norm.gain"],
            **{role: values[f"attention.{role}.weight"] for role in ("query", "key", "value", "output")},
            **{role: values[f"ffn.{role}.weight"] for role in ("gate", "up", "down")}}


def reference(weights, x, head, targets, variant, norm, heads, base, eps=1e-5):
    """(loss, [RMS of the stream after every block])."""
    normalise = rms_norm if norm == "rms" else layer_norm
    rms = [np.sqrt(np.mean(x ** 2))]
    for w in weights:
        def n_a(z, w=w):
            return normalise(z, w["g_a"], eps)

        def n_f(z, w=w):
            return normalise(z, w["g_f"], eps)

        def mha(z, w=w):
            return attention(z, w, heads, base)

        def ffn(z, w=w):
            return swiglu(z, w)

        if variant == "pre":
            h = x + mha(n_a(x))
            x = h + ffn(n_f(h))
        elif variant == "post":
            h = n_a(x + mha(x))
            x = n_f(h + ffn(h))
        else:
            x = ffn(n_f(mha(n_a(x))))
        rms.append(np.sqrt(np.mean(x ** 2)))
    logits = rms_norm(x, 1.0, 1e-5) @ head
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    loss = -np.take_along_axis(log_p, targets[..., None], axis=-1).mean()
    return float(loss), np.array(rms)


def numeric_block_gradient_norms(weights, data, variant, norm, heads, base, delta=1e-6):
    x, head, targets = data
    norms = []
    for w in weights:
        total = 0.0
        for array in w.values():
            for index in np.ndindex(array.shape):
                original = array[index]
                array[index] = original + delta
                high = reference(weights, x, head, targets, variant, norm, heads, base)[0]
                array[index] = original - delta
                low = reference(weights, x, head, targets, variant, norm, heads, base)[0]
                array[index] = original
                total += ((high - low) / (2 * delta)) ** 2
        norms.append(np.sqrt(total))
    return np.array(norms)


def setting(weight_scale=1.0):
    blocks = depth_lab.build_stack(LAYERS, WIDTH, heads=SMALL["heads"], ffn_width=SMALL["ffn_width"],
                                   tokens=SMALL["tokens"], weight_scale=weight_scale, seed=SMALL["seed"])
    data = depth_lab.lab_data(WIDTH, batch=SMALL["batch"], tokens=SMALL["tokens"],
                              vocabulary=SMALL["vocabulary"], seed=SMALL["seed"])
    return [weights_of(block) for block in blocks], data


# -- the tests ----------------------------------------------------------------------

@pytest.mark.parametrize(("variant", "norm", "scale"), [
    ("pre", "rms", 1.0), ("post", "rms", 1.0), ("none", "rms", 1.0),
    ("post", "layer", 1.0), ("pre", "rms", 3 ** 0.5), ("post", "rms", 3 ** 0.5)])
def test_run_matches_an_independent_numpy_stack(variant, norm, scale):
    result = depth_lab.run(LAYERS, WIDTH, variant, norm=norm, weight_scale=scale, **SMALL)
    weights, data = setting(scale)
    loss, rms = reference(weights, *data, variant, norm, SMALL["heads"], base=10000.0)
    assert result.loss == pytest.approx(loss, rel=1e-12)
    np.testing.assert_allclose(result.stream_rms, rms, rtol=1e-12)
    numeric = numeric_block_gradient_norms(weights, data, variant, norm, SMALL["heads"], 10000.0)
    np.testing.assert_allclose(result.gradient_norms, numeric, rtol=1e-6)


def test_per_tensor_norms_add_up_to_the_block_norm():
    result = depth_lab.run(3, WIDTH, "pre", **SMALL)
    assert result.tensor_names[0] == "attention_norm.gain" and len(result.tensor_names) == 9
    np.testing.assert_allclose(np.sqrt((result.tensor_norms ** 2).sum(axis=1)), result.gradient_norms)
    assert result.tensor_gradient("ffn.down.weight").shape == (3,)


def test_pre_wiring_is_the_package_block_bit_for_bit():
    blocks = depth_lab.build_stack(2, WIDTH, heads=2, tokens=3, seed=9)
    x = depth_lab.lab_data(WIDTH, tokens=3, seed=9)[0]
    for block in blocks:
        composed = depth_lab.pre_norm(depth_lab.parts_of(block), Tensor(x)).value
        assert np.array_equal(composed, block.forward(Tensor(x)).output.value)


def test_layer_norm_part_is_centred_rms_norm():
    block = depth_lab.build_stack(1, WIDTH, heads=2, tokens=3, seed=9)[0]
    z = depth_lab.lab_data(WIDTH, tokens=3, seed=4)[0] + 0.7
    got = depth_lab.parts_of(block, "layer").attention_norm(Tensor(z)).value
    np.testing.assert_allclose(got, layer_norm(z, 1.0, 1e-5), rtol=1e-13)
    assert np.abs(got.mean(axis=-1)).max() < 1e-12


def test_variants_share_weights_and_data_but_not_results():
    runs = depth_lab.compare(4, WIDTH, **SMALL)
    assert len({run.stream_rms[0] for run in runs.values()}) == 1    # the same embeddings
    assert len({float(run.gradient_norms[0]) for run in runs.values()}) == 3
    np.testing.assert_allclose(runs["post"].stream_rms[1:], 1.0, atol=1e-5)  # RMSNorm ends each block


def test_equal_arguments_give_bitwise_equal_runs():
    first, second = depth_lab.run(3, WIDTH, "post", **SMALL), depth_lab.run(3, WIDTH, "post", **SMALL)
    assert np.array_equal(first.gradient_norms, second.gradient_norms)
    assert np.array_equal(first.stream_rms, second.stream_rms) and first.loss == second.loss


def test_top_block_gradient_is_the_last_layer_of_each_run():
    tops = depth_lab.top_block_gradient(range(1, 4), WIDTH, **SMALL)
    assert set(tops) == set(depth_lab.VARIANTS)
    for variant, values in tops.items():
        assert values[2] == depth_lab.run(3, WIDTH, variant, **SMALL).gradient_norms[-1]
    down = depth_lab.top_block_gradient([2, 3], WIDTH, tensor="ffn.down.weight", variants=("post",), **SMALL)
    assert set(down) == {"post"}
    assert down["post"][1] == depth_lab.run(3, WIDTH, "post", **SMALL).tensor_gradient("ffn.down.weight")[-1]


def test_compare_runs_the_variants_asked_for():
    runs = depth_lab.compare(2, WIDTH, variants=("pre", "post"), norm="layer", **SMALL)
    assert list(runs) == ["pre", "post"] and all(run.norm == "layer" for run in runs.values())


def test_tables_name_the_norm_each_run_used():
    rms, layer = depth_lab.compare(2, WIDTH, **SMALL), depth_lab.compare(2, WIDTH, norm="layer", **SMALL)
    assert [row[0] for row in depth_lab.summary_table(layer, layers=(1, 2))[1][::2]] == [
        "Pre-LN", "Post-LN", "без остаточных путей, LN"]
    header, rows = depth_lab.gradient_table({"1": rms, "√3": layer}, layers=(1, 2))
    assert header == ["масштаб весов", "схема", "слой 1", "слой 2"]
    assert [row[:2] for row in rows[::3]] == [["1", "Pre-RMSNorm"], ["√3", "Pre-LN"]]
    assert rows[4][3] == f"{layer['post'].gradient_norms[1]:#.3g}"


@pytest.mark.parametrize(("arguments", "message"), [
    ({"variant": "middle"}, "variant must be one of"), ({"layers": 0}, "layers must be"),
    ({"layers": True}, "layers must be"), ({"norm": "batch"}, "norm must be one of")])
def test_bad_arguments_say_what_is_allowed(arguments, message):
    options = {"layers": 2, "width": WIDTH, **SMALL, **arguments}
    with pytest.raises(ValueError, match=message):
        depth_lab.run(**options)


def test_the_numbers_the_chapter_quotes():
    """The prose of the depth lab (and its «Итак») quotes these values of the default runs."""
    runs = depth_lab.compare(24, 32)
    assert runs["pre"].stream_rms[[0, -1]] == pytest.approx([0.98, 1.59], abs=0.005)
    assert runs["pre"].gradient_norms[[0, -1]] == pytest.approx([0.47, 0.27], abs=0.005)
    assert runs["none"].stream_rms[1] == pytest.approx(0.11, abs=0.005)
    none = runs["none"].gradient_norms
    assert none[[0, -1]] == pytest.approx([2363, 3.0], rel=0.01)
    assert 100 < none[0] / none[-1] < 1000                            # «почти на три порядка»
    assert (none[0] / none[-1]) ** (1 / 23) == pytest.approx(1.3, abs=0.05)
    post = runs["post"].gradient_norms
    assert round(post.min(), 2) == 0.40 and round(post.max(), 2) == 0.52
    np.testing.assert_allclose(runs["post"].stream_rms[1:], 1.0, atol=1e-5)

    scaled = depth_lab.compare(24, 32, weight_scale=3 ** 0.5)
    assert scaled["pre"].stream_rms[-1] == pytest.approx(4.98, abs=0.005)
    assert (scaled["pre"].stream_rms[-1] ** 2 - scaled["pre"].stream_rms[0] ** 2) / 48 == pytest.approx(0.5, abs=0.01)
    assert scaled["post"].gradient_norms[[0, -1]] == pytest.approx([6.35, 0.90], abs=0.005)
    assert scaled["pre"].gradient_norms[[0, -1]] == pytest.approx([2.37, 0.23], abs=0.005)

    layer = depth_lab.compare(24, 32, norm="layer", weight_scale=3 ** 0.5, variants=("pre", "post"))
    assert layer["post"].gradient_norms[[0, -1]] == pytest.approx([6.62, 0.80], abs=0.005)
    plain = depth_lab.compare(24, 32, norm="layer", variants=("pre", "post"))
    assert plain["pre"].gradient_norms[[0, -1]] == pytest.approx([0.48, 0.27], abs=0.005)
    assert round(plain["post"].gradient_norms.min(), 2) == 0.42
    assert round(plain["post"].gradient_norms.max(), 2) == 0.53

    down = "ffn.down.weight"
    top = depth_lab.top_block_gradient(range(1, 25), tensor=down, variants=("pre", "post"), weight_scale=3 ** 0.5)
    assert top["pre"][[0, -1]] == pytest.approx([0.51, 0.14], abs=0.005)
    assert top["pre"][0] / top["pre"][-1] == pytest.approx(3.6, abs=0.05)
    rms = [depth_lab.run(depth, 32, "pre", weight_scale=3 ** 0.5).stream_rms[-1] for depth in (1, 24)]
    assert rms == pytest.approx([1.38, 4.98], abs=0.005)
    assert top["pre"][0] / top["pre"][-1] == pytest.approx(rms[1] / rms[0], rel=0.01)   # «ровно во столько раз»
    assert round(top["post"].min(), 2) == 0.47 and round(top["post"].max(), 2) == 0.62
    plain_top = depth_lab.top_block_gradient([1, 24], tensor=down, variants=("pre",))
    assert plain_top["pre"] == pytest.approx([0.21, 0.14], abs=0.005)


def test_the_depth_lab_exercise_quotes_the_lab():
    """Exercise 31.10: the 1/sqrt(L) law says 0.5, the lab about sqrt(5/17)."""
    from llm_from_scratch.exercises import ch31 as ex31

    g = depth_lab.top_block_gradient([4, 16], tensor="ffn.down.weight", variants=("pre",),
                                     weight_scale=3 ** 0.5)["pre"]
    assert g[1] / g[0] == pytest.approx((5 / 17) ** 0.5, abs=0.01)
    assert ex31.EXERCISES[10].solution()["measured"] == g[1] / g[0]


def test_summary_table_reads_the_runs():
    runs = depth_lab.compare(3, WIDTH, **SMALL)
    header, rows = depth_lab.summary_table(runs, layers=(1, 3))
    assert header == ["схема", "величина", "слой 1", "слой 3"]
    assert len(rows) == 6 and rows[0][0] == depth_lab.LABELS["pre"]
    assert rows[0][2:] == [f"{runs['pre'].stream_rms[1]:.3f}", f"{runs['pre'].stream_rms[3]:.3f}"]
    assert rows[1][3] == f"{runs['pre'].gradient_norms[2]:#.3g}"
