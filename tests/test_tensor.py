"""The autodiff tape: every VJP against central differences, accumulation, release, input rules."""

import weakref

import numpy as np
import pytest

from llm_from_scratch import Parameter, ParameterList, Tensor, TensorError
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


def check_against_central_differences(function, shapes, needs_grad=None):
    """Run ``function`` on random leaves, backward a random upstream, compare every leaf that needs a gradient."""
    needs_grad = needs_grad or [True] * len(shapes)
    values = [RNG.normal(size=shape) for shape in shapes]
    leaves = [Tensor(v, requires_grad=flag) for v, flag in zip(values, needs_grad, strict=True)]
    out = function(*leaves)
    upstream = RNG.normal(size=out.shape)
    out.backward(upstream)
    for index, leaf in enumerate(leaves):
        if needs_grad[index]:
            np.testing.assert_allclose(leaf.grad, numeric_vjp(function, values, upstream, index),
                                       atol=1e-7, rtol=1e-6)
        else:
            assert leaf.grad is None
    return leaves


CASES = {
    "add": (T.add, [(2, 3, 4), (2, 3, 4)]),
    "mul": (T.mul, [(2, 3, 4), (2, 3, 4)]),
    "scale": (lambda a: T.scale(a, -0.7), [(3, 2)]),
    "matmul_weight": (T.matmul, [(2, 3, 4), (4, 5)]),
    "matmul_vector_weight": (T.matmul, [(4,), (4, 5)]),
    "matmul_batched": (T.matmul, [(2, 2, 3, 4), (2, 2, 4, 3)]),
    "reshape": (lambda a: T.reshape(a, (3, 8)), [(2, 3, 4)]),
    "transpose": (lambda a: T.transpose(a, (0, 2, 1, 3)), [(2, 3, 4, 2)]),
    "transpose_negative_axes": (lambda a: T.transpose(a, (0, -1, -2)), [(2, 3, 4)]),
    "causal_softmax": (T.causal_softmax, [(2, 2, 4, 4)]),
    "rotate_pairs": (lambda a: T.rotate_pairs(a, np.cos(np.arange(6.0).reshape(3, 2)),
                                              np.sin(np.arange(6.0).reshape(3, 2))), [(2, 3, 4)]),
    "rms_norm": (lambda a, g: T.rms_norm(a, g, 1e-3), [(2, 3, 4), (4,)]),
    "silu": (T.silu, [(3, 5)]),
    "relu": (T.relu, [(3, 5)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_vjp_matches_central_differences(name):
    function, shapes = CASES[name]
    check_against_central_differences(function, shapes)


# Broadcasting: the VJP sums the upstream over every axis an operand was stretched or extended along.
BROADCASTS = {
    "added-leading-axes": [(2, 3, 4), (4,)],
    "stretched-axis": [(2, 3, 4), (2, 1, 4)],
    "both-directions": [(3, 1), (1, 4)],            # a stretched along columns, b along rows
    "both-directions-and-added": [(2, 1, 4), (3, 1)],
}


@pytest.mark.parametrize("op", [T.add, T.mul], ids=["add", "mul"])
@pytest.mark.parametrize("shapes", BROADCASTS.values(), ids=BROADCASTS.keys())
def test_broadcasting_vjps_sum_back_to_each_operand_shape(op, shapes):
    a, b = check_against_central_differences(op, shapes)
    assert a.grad.shape == shapes[0] and b.grad.shape == shapes[1]


def test_unbroadcast_by_hand():
    g = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(T.unbroadcast(g, (3, 1)), [[6.0], [22.0], [38.0]])   # row sums
    np.testing.assert_array_equal(T.unbroadcast(g, (1, 4)), [[12.0, 15.0, 18.0, 21.0]])  # column sums
    np.testing.assert_array_equal(T.unbroadcast(g, (4,)), [12.0, 15.0, 18.0, 21.0])
    assert T.unbroadcast(g, (3, 4)) is g


# Only one input needs a gradient: the VJP skips the other, and the one it computes is still right.
ONE_SIDED = {
    "matmul-weight-only": (T.matmul, [(2, 3, 4), (4, 5)], [False, True]),
    "matmul-input-only": (T.matmul, [(2, 3, 4), (4, 5)], [True, False]),
    "matmul-batched-right-only": (T.matmul, [(2, 3, 4), (2, 4, 3)], [False, True]),
    "mul-left-only": (T.mul, [(3, 4), (4,)], [True, False]),
    "rms-norm-gain-only": (lambda a, g: T.rms_norm(a, g, 0.0), [(2, 3, 4), (4,)], [False, True]),
}


@pytest.mark.parametrize("case", ONE_SIDED.values(), ids=ONE_SIDED.keys())
def test_a_vjp_when_only_one_input_needs_a_gradient(case):
    function, shapes, needs_grad = case
    check_against_central_differences(function, shapes, needs_grad)


def test_a_vjp_skips_the_product_nobody_needs():
    x = Tensor(RNG.normal(size=(2, 3)))                  # a constant input
    w = Parameter("w", RNG.normal(size=(3, 4)))
    out = x @ w
    g_x, g_w = out.vjp(np.ones((2, 4)))
    assert g_x is None
    np.testing.assert_array_equal(g_w, x.value.T @ np.ones((2, 4)))


# A tensor used more than once receives the sum of every path's gradient.

def test_a_tensor_used_twice_in_one_operation():
    x = Tensor(np.array([1.0, -2.0, 3.0]), requires_grad=True)
    (x * x).backward(np.ones(3))                                  # d(x^2)/dx = 2x
    np.testing.assert_array_equal(x.grad, [2.0, -4.0, 6.0])


def test_a_matrix_used_twice_in_a_product():
    check_against_central_differences(lambda a: a @ a, [(3, 3)])  # d sum(U * A A) = U A^T + A^T U


def test_a_tensor_used_on_three_paths():
    x = Tensor(np.array([1.0, -2.0, 3.0]), requires_grad=True)
    (x * x + T.scale(x, 3.0)).backward(np.ones(3))                # x^2 + 3x
    np.testing.assert_array_equal(x.grad, 2 * x.value + 3.0)


def test_a_diamond_is_walked_in_topological_order():
    x = Tensor(np.array([1.5]), requires_grad=True)
    a = T.scale(x, 2.0)
    (a * a + a).backward()                                        # 4x^2 + 2x
    assert x.grad.tolist() == [8 * 1.5 + 2]


def test_backward_twice_accumulates():
    x = Tensor(np.array([2.0]), requires_grad=True)
    T.scale(x, 5.0).backward()
    T.scale(x, 5.0).backward()
    assert x.grad.tolist() == [10.0]


def test_two_leaves_never_share_a_gradient_array():
    a, b = Tensor(np.ones(2), requires_grad=True), Tensor(np.ones(2), requires_grad=True)
    (a + b).backward()          # the add VJP hands the same upstream to both
    a.grad += 1.0
    assert b.grad.tolist() == [1.0, 1.0]


def test_a_deep_graph_needs_no_recursion():
    x = Tensor(np.array([1.0]), requires_grad=True)
    y = x
    for _ in range(5000):
        y = T.scale(y, 1.0)
    y.backward()
    assert x.grad.tolist() == [1.0]


def test_operators_are_the_tape_operations():
    a, b = Tensor(RNG.normal(size=(2, 3))), Tensor(RNG.normal(size=(3, 2)))
    np.testing.assert_array_equal((a @ b).value, a.value @ b.value)
    np.testing.assert_array_equal((a + a).value, 2 * a.value)
    np.testing.assert_array_equal((a * a).value, a.value**2)


def test_release_frees_the_graph_and_refuses_reuse_but_keeps_parameters():
    w = Parameter("w", np.eye(2))
    x = Tensor(np.ones((1, 2)), requires_grad=True)
    y = x @ w
    y.release()
    assert y.released and x.released and not w.released
    assert y.parents == () and y.vjp is None
    with pytest.raises(TensorError, match="released tape"):
        y.backward()
    assert y.value.tolist() == [[1.0, 1.0]]  # values stay readable
    (Tensor(np.ones((1, 2))) @ w).backward()  # the parameter still works
    assert w.grad.tolist() == [[1.0, 1.0], [1.0, 1.0]]


def test_values_on_the_tape_are_read_only():
    x = Tensor(np.ones(3))
    y = T.scale(x, 2.0)
    with pytest.raises(ValueError):
        y.value[0] = 5.0
    with pytest.raises(ValueError):
        x.value[0] = 5.0


def test_a_tensor_copies_its_input():
    array = np.ones(2)
    x = Tensor(array)
    array[0] = 7.0
    assert x.value.tolist() == [1.0, 1.0]


def test_backward_upstream_must_match_output_shape():
    x = Tensor(np.ones((2, 3)), requires_grad=True)
    with pytest.raises(TensorError, match=r"upstream shape must equal output shape \[2, 3\], got \[3, 2\]"):
        T.scale(x, 1.0).backward(np.ones((3, 2)))


def test_zero_grad_forgets_a_gradient_and_the_next_backward_makes_a_new_array():
    w = Parameter("w", np.ones(3))
    (w * w).backward()                                            # d(w^2)/dw = 2w
    old = w.grad
    ParameterList([w]).zero_grad()
    assert w.grad is None
    (w * Tensor(np.full(3, 5.0))).backward()
    assert w.grad is not old
    np.testing.assert_array_equal(old, [2.0, 2.0, 2.0])          # the old array is left as it was
    np.testing.assert_array_equal(w.grad, [5.0, 5.0, 5.0])


def test_zero_grad_keeps_the_old_array_until_the_next_backward_has_made_a_new_one():
    w = Parameter("w", np.ones(3))
    (w * w).backward()
    old = weakref.ref(w.grad)
    ParameterList([w]).zero_grad()
    assert old() is not None                                      # not freed before the new one exists
    (w * w).backward()
    assert old() is None and w.grad is not None                   # freed once it is replaced


def test_relu_passes_the_gradient_where_the_input_is_positive():
    x = Tensor([[-2.0, 0.0, 3.0]], requires_grad=True)
    y = T.relu(x)
    y.backward(np.array([[5.0, 5.0, 5.0]]))
    np.testing.assert_array_equal(y.value, [[0.0, 0.0, 3.0]])
    np.testing.assert_array_equal(x.grad, [[0.0, 0.0, 5.0]])


@pytest.mark.parametrize(("call", "message"), [
    (lambda: T.scale(np.ones(2), 2.0), "scale needs Tensor operands, got ndarray"),
    (lambda: T.rms_norm(Tensor(np.ones(2)), np.ones(2), 0.0), "rms_norm needs Tensor operands, got ndarray"),
    (lambda: T.relu([1.0]), "relu needs Tensor operands, got list"),
])
def test_an_operation_checks_its_declared_operands(call, message):
    with pytest.raises(TensorError, match=message):
        call()


def test_arguments_after_the_operands_may_be_arrays():
    x = Tensor(np.ones((1, 2, 2)))
    angles = np.zeros((2, 1))
    assert T.rotate_pairs(x, np.cos(angles), np.sin(angles)).shape == (1, 2, 2)


def test_a_backward_that_overflows_moves_no_gradient():
    """The leaves' gradients move only once every VJP has run: an overflow on
    one path leaves the leaf on the other path as it was."""
    c, a, b = (Parameter(name, np.full(2, value)) for name, value in (("c", 1.0), ("a", 1e-300), ("b", 1e10)))
    with pytest.raises(TensorError, match="overflow"):
        (c + a * b).backward(np.full(2, 1e300))
    assert c.grad is None and a.grad is None and b.grad is None


def test_a_tensor_bounds_its_size_before_copying():
    with pytest.raises(TensorError, match="would hold 1000000000000 values, more than the limit"):
        Tensor(np.broadcast_to(0.0, (10**6, 10**6)))
