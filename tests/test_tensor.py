"""The autodiff tape: every VJP against central differences, accumulation, release, input rules."""

import numpy as np
import pytest

from llm_from_scratch import Parameter, Tensor, TensorError
from llm_from_scratch import tensor as T

RNG = np.random.default_rng(0)


def numeric_vjp(function, values, upstream, index, delta=1e-6):
    """d sum(function(*values) * upstream) / d values[index], by central differences."""
    grad = np.zeros_like(values[index])
    for position in np.ndindex(grad.shape):
        plus = [v.copy() for v in values]
        minus = [v.copy() for v in values]
        plus[index][position] += delta
        minus[index][position] -= delta
        high = np.sum(function(*[Tensor(v) for v in plus]).value * upstream)
        low = np.sum(function(*[Tensor(v) for v in minus]).value * upstream)
        grad[position] = (high - low) / (2 * delta)
    return grad


CASES = {
    "add_broadcast": (lambda a, b: T.add(a, b), [(2, 3, 4), (4,)]),
    "mul_broadcast": (lambda a, b: T.mul(a, b), [(2, 3, 4), (3, 1)]),
    "scale": (lambda a: T.scale(a, -0.7), [(3, 2)]),
    "matmul_weight": (lambda a, b: T.matmul(a, b), [(2, 3, 4), (4, 5)]),
    "matmul_batched": (lambda a, b: T.matmul(a, b), [(2, 2, 3, 4), (2, 2, 4, 3)]),
    "reshape": (lambda a: T.reshape(a, (3, 8)), [(2, 3, 4)]),
    "transpose": (lambda a: T.transpose(a, (0, 2, 1, 3)), [(2, 3, 4, 2)]),
    "causal_softmax": (lambda a: T.causal_softmax(a), [(2, 2, 4, 4)]),
    "rotate_pairs": (lambda a: T.rotate_pairs(a, np.cos(np.arange(6.0).reshape(3, 2)),
                                              np.sin(np.arange(6.0).reshape(3, 2))), [(2, 3, 4)]),
    "rms_norm": (lambda a, g: T.rms_norm(a, g, 1e-3), [(2, 3, 4), (4,)]),
    "silu": (lambda a: T.silu(a), [(3, 5)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_vjp_matches_central_differences(name):
    function, shapes = CASES[name]
    values = [RNG.normal(size=shape) for shape in shapes]
    leaves = [Tensor(v, requires_grad=True) for v in values]
    out = function(*leaves)
    upstream = RNG.normal(size=out.shape)
    out.backward(upstream)
    for index, leaf in enumerate(leaves):
        expected = numeric_vjp(function, values, upstream, index)
        np.testing.assert_allclose(leaf.grad, expected, atol=1e-7, rtol=1e-6)


def test_a_tensor_used_twice_accumulates_both_paths():
    x = Tensor(np.array([1.0, -2.0, 3.0]), requires_grad=True)
    y = T.add(T.mul(x, x), T.scale(x, 3.0))  # x^2 + 3x, x used three times
    y.backward(np.ones(3))
    np.testing.assert_array_equal(x.grad, 2 * x.value + 3.0)


def test_backward_twice_accumulates_and_zero_grad_resets():
    x = Tensor(np.array([2.0]), requires_grad=True)
    T.scale(x, 5.0).backward()
    T.scale(x, 5.0).backward()
    assert x.grad.tolist() == [10.0]
    x.zero_grad()
    assert x.grad is None


def test_diamond_graph_is_walked_in_topological_order():
    x = Tensor(np.array([1.5]), requires_grad=True)
    a = T.scale(x, 2.0)
    b = T.mul(a, a)          # 4x^2
    c = T.add(b, a)          # 4x^2 + 2x
    c.backward()
    assert x.grad.tolist() == [8 * 1.5 + 2]


def test_release_frees_the_graph_and_refuses_reuse_but_keeps_parameters():
    w = Parameter("w", np.eye(2))
    x = Tensor(np.ones((1, 2)), requires_grad=True)
    y = T.matmul(x, w)
    y.release()
    assert y.released and x.released and not w.released
    with pytest.raises(TensorError, match="released tape"):
        y.backward()
    assert y.value.tolist() == [[1.0, 1.0]]  # values stay readable
    T.matmul(Tensor(np.ones((1, 2))), w).backward()  # the parameter still works
    assert w.grad is not None


def test_values_on_the_tape_are_read_only():
    x = Tensor(np.ones(3))
    y = T.scale(x, 2.0)
    with pytest.raises(ValueError):
        y.value[0] = 5.0
    with pytest.raises(ValueError):
        x.value[0] = 5.0


@pytest.mark.parametrize("value, accepted", [
    ([[1, 2], [3, 4]], True),                 # Python lists of numbers become float64
    (np.arange(3), True),                     # integer arrays too
    (np.float32([1.5]), True),
    (np.array([True]), False),
    (np.array([1 + 2j]), False),
    ("text", False),
    (None, False),
    ([[1, 2], [3]], False),                   # ragged
    (np.array([np.nan]), False),
    (np.array([np.inf]), False),
])
def test_tensor_input_rules(value, accepted):
    if accepted:
        t = Tensor(value)
        assert t.value.dtype == np.float64
    else:
        with pytest.raises(TensorError):
            Tensor(value)


def test_backward_upstream_must_match_output_shape():
    x = Tensor(np.ones((2, 3)), requires_grad=True)
    with pytest.raises(TensorError, match=r"upstream shape must equal output shape \[2, 3\], got \[3, 2\]"):
        T.scale(x, 1.0).backward(np.ones((3, 2)))
