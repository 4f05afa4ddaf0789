"""A small reverse-mode autodiff tape over float64 NumPy arrays.

A ``Tensor`` made by an operation keeps its parents and a VJP (the map
from the output's gradient to one gradient per parent), written right under
the forward computation as in micrograd. ``backward`` visits every tensor
after those made from it and adds up contributions, so a tensor used twice
gets both. A step that would overflow raises ``TensorError`` naming it.
"""

from __future__ import annotations

import functools

import numpy as np

from .errors import TensorError, shown

STRICT = dict(over="raise", invalid="raise", divide="raise",  # errstate
              under="ignore")  # a tiny exp() is 0, as it should be
MAX_SIZE = 2**24  # values in one array: 128 MiB of float64
NOT_NUMBERS = (str, bytes, bytearray, memoryview, np.ma.MaskedArray)


def as_float64_array(value: object, role: str) -> np.ndarray:
    """A finite float64 copy of an array or a (nested) list of numbers;
    anything else gets a ``TensorError`` that starts with ``role``."""
    if value is None or isinstance(value, (Tensor, *NOT_NUMBERS)):
        raise TensorError(f"{role} expects a plain numeric array, "
                          f"got {type(value).__name__}")
    try:
        array = np.asarray(value)
    except Exception as error:  # ragged lists, a failing __array__
        raise TensorError(f"{role} expects a rectangular numeric array: "
                          f"{type(error).__name__}: {error}") from error
    if array.dtype.kind not in "fiu":
        raise TensorError(f"{role} expects real float or integer values, "
                          f"got dtype {array.dtype}")
    if array.size > MAX_SIZE:  # checked before the copy is allocated
        raise TensorError(f"{role} would hold {array.size} values, more "
                          f"than the limit {MAX_SIZE}")
    with np.errstate(over="ignore"):  # a huge float128 becomes inf
        array = np.array(array, dtype=np.float64)  # a private copy
    bad = array.size - np.count_nonzero(np.isfinite(array))
    if bad:
        raise TensorError(f"{role} values must be finite, "
                          f"got {bad} NaN or infinite of {array.size}")
    return array


def operation(operands):
    """A tape step whose first ``operands`` arguments are Tensors: another
    operand, shapes that do not fit or a value that overflows get a
    ``TensorError`` naming the step."""
    def decorate(forward):
        name = forward.__name__

        @functools.wraps(forward)
        def checked(*args):
            for a in args[:operands]:
                if not isinstance(a, Tensor):
                    raise TensorError(f"{name} needs Tensor operands, "
                                      f"got {type(a).__name__}")
            try:
                with np.errstate(**STRICT):
                    return forward(*args)
            except (ValueError, FloatingPointError) as error:
                shapes = "".join(f" {list(a.shape)}"
                                 for a in args[:operands])
                raise TensorError(f"{name}{shapes}: {error}") from error

        return checked

    return decorate


class Tensor:
    """A float64 ``value`` and, after ``backward``, its ``grad``."""

    __array_ufunc__ = None  # ``array + tensor`` comes to ``__radd__``

    def __init__(self, value: object, requires_grad: bool = False) -> None:
        if not isinstance(requires_grad, (bool, np.bool_)):
            raise TensorError("tensor requires_grad must be True or False, "
                              f"got {shown(requires_grad)}")
        self.value = as_float64_array(value, "tensor")
        self.value.flags.writeable = False
        self.requires_grad, self.grad = bool(requires_grad), None
        self.parents, self.vjp, self.released = (), None, False

    @staticmethod
    def result(value, parents: tuple[Tensor, ...], vjp) -> Tensor:
        """An operation's output; it keeps the graph if a gradient flows."""
        out, value = Tensor.__new__(Tensor), np.asarray(value)
        value.flags.writeable = False  # the VJPs read it later
        out.value, out.grad, out.released = value, None, False
        out.requires_grad = any(p.requires_grad for p in parents)
        out.parents = parents if out.requires_grad else ()
        out.vjp = vjp if out.requires_grad else None
        return out

    shape = property(lambda self: self.value.shape)
    ndim = property(lambda self: self.value.ndim)

    def __repr__(self) -> str:
        flags = ", requires_grad=True" * self.requires_grad
        return f"Tensor(shape={list(self.shape)}{flags})"

    def _refused(self, other=None):
        raise TensorError("the tape's operators are +, * and @ with a "
                          "Tensor on each side, the left one first")

    __radd__ = __rmul__ = __rmatmul__ = __sub__ = __rsub__ = _refused
    __truediv__ = __rtruediv__ = __pow__ = __neg__ = _refused

    def topological_order(self) -> list[Tensor]:
        """This tensor and all it depends on, each after its parents."""
        order, seen, stack = [], set(), [(self, False)]
        while stack:  # depth first, without recursion
            node, parents_done = stack.pop()
            if parents_done:
                order.append(node)
            elif node not in seen:
                seen.add(node)
                stack.append((node, True))
                stack.extend((parent, False) for parent in node.parents)
        return order

    @operation(operands=0)  # an overflow in a VJP names backward
    def backward(self, upstream: object = None) -> None:
        """Add ``d sum(self * upstream) / d leaf`` to each ``leaf.grad``;
        ``upstream`` has this tensor's shape and defaults to ones."""
        order = self.topological_order()
        if any(node.released for node in order):
            raise TensorError("backward: a tensor of this graph belongs to "
                              "a released tape")
        if not self.requires_grad:
            raise TensorError("backward needs a tensor that depends on a "
                              "leaf with requires_grad=True")
        seed = np.ones(self.shape) if upstream is None else (
            as_float64_array(upstream, "backward upstream"))
        if seed.shape != self.shape:
            raise TensorError("backward upstream shape must equal output "
                              f"shape {list(self.shape)}, "
                              f"got {list(seed.shape)}")
        grads, leaves = {self: seed}, []
        for node in reversed(order):  # each tensor before its parents
            g = grads.pop(node, None)
            if g is None:
                continue
            if node.vjp is None:  # a leaf: its grad moves once all are in
                leaves.append((node, g))
                continue
            for parent, g_parent in zip(node.parents, node.vjp(g),
                                        strict=True):
                if g_parent is not None and parent.requires_grad:
                    earlier = grads.get(parent)  # from another path
                    grads[parent] = (g_parent if earlier is None
                                     else earlier + g_parent)
        totals = [(leaf, leaf._added(g)) for leaf, g in leaves]
        for leaf, total in totals:  # none moves if an overflow came first
            leaf._set_grad(total)

    def accumulate(self, g: np.ndarray) -> None:
        """A leaf's ``grad`` adds up every backward until it is reset."""
        self._set_grad(self._added(g))

    def _added(self, g: np.ndarray) -> np.ndarray:
        return g.copy() if self.grad is None else self.grad + g

    def _set_grad(self, total: np.ndarray) -> None:
        self.grad = total

    def release(self) -> None:
        """Drop the graph behind this tensor: its tensors keep their
        values but refuse further use; a ``Parameter`` is not retired."""
        for node in self.topological_order():
            node.parents, node.vjp = (), None
            node.released = type(node) is Tensor


def unbroadcast(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum ``grad`` over the axes that broadcasting added or stretched."""
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    stretched = tuple(axis for axis, n in enumerate(shape)
                      if n == 1 and grad.shape[axis] != 1)
    return grad.sum(axis=stretched, keepdims=True) if stretched else grad


# -- operations: the forward computation, then its VJP -------------------

@operation(operands=2)
def add(a: Tensor, b: Tensor) -> Tensor:
    return Tensor.result(a.value + b.value, (a, b), lambda g: (
        unbroadcast(g, a.shape), unbroadcast(g, b.shape)))


@operation(operands=2)
def mul(a: Tensor, b: Tensor) -> Tensor:
    return Tensor.result(a.value * b.value, (a, b), lambda g: (
        unbroadcast(g * b.value, a.shape),    # d(ab) = da b + a db
        unbroadcast(g * a.value, b.shape)))


@operation(operands=1)
def scale(a: Tensor, factor: float) -> Tensor:
    return Tensor.result(a.value * factor, (a,), lambda g: (g * factor,))


@operation(operands=2)
def matmul(a: Tensor, b: Tensor) -> Tensor:
    """``[..., n, k] @ [k, m]`` (a weight), or batched ``[..., k, m]``."""
    if b.ndim < 2:
        raise ValueError("the right operand needs two axes or more")

    def vjp(g):  # dA = G B^T, dB = A^T G
        g_a = g_b = None
        if a.requires_grad:
            g_a = unbroadcast(g @ np.swapaxes(b.value, -1, -2), a.shape)
        if b.requires_grad and b.ndim == 2:  # one weight for every row
            rows = a.value.reshape(-1, a.shape[-1])          # [N, k]
            g_b = rows.T @ g.reshape(-1, g.shape[-1])        # [k, m]
        elif b.requires_grad:
            g_b = unbroadcast(np.swapaxes(a.value, -1, -2) @ g, b.shape)
        return g_a, g_b

    return Tensor.result(a.value @ b.value, (a, b), vjp)


@operation(operands=1)
def reshape(a: Tensor, shape: tuple[int, ...]) -> Tensor:
    return Tensor.result(a.value.reshape(tuple(shape)), (a,),
                         lambda g: (g.reshape(a.shape),))


@operation(operands=1)
def transpose(a: Tensor, axes: tuple[int, ...]) -> Tensor:
    """Permute the axes; the VJP applies the inverse permutation."""
    inverse = np.argsort([axis % a.ndim for axis in axes])
    return Tensor.result(a.value.transpose(axes), (a,),
                         lambda g: (g.transpose(inverse),))


def square_tables(shape: tuple[int, ...], role: str) -> None:
    """``[..., T, T]`` of at most ``MAX_SIZE`` values, ``T * T`` too."""
    t = shape[-1] if len(shape) >= 2 else 0
    if len(shape) < 2 or shape[-2] != t or t * t > MAX_SIZE:
        raise TensorError(f"{role} must be tables [..., T, T] with T * T "
                          f"at most {MAX_SIZE}, got {list(shape)}")


@operation(operands=1)
def causal_softmax(scores: Tensor) -> Tensor:
    """Softmax of each row of ``[..., T, T]`` over the visible keys.

    Future keys get ``-inf`` before the exponential, so their probability
    is exactly 0; the diagonal is visible, so the row maximum is finite.
    """
    square_tables(scores.shape, "causal_softmax scores")  # T*T bounded
    visible = np.tri(scores.shape[-1], dtype=bool)       # [T, T]: j <= i
    p = np.where(visible, scores.value, -np.inf)         # [..., T, T]
    p -= p.max(axis=-1, keepdims=True)                   # each row <= 0
    np.exp(p, out=p)                      # in place: one [..., T, T] array
    p /= p.sum(axis=-1, keepdims=True)                   # rows sum to 1

    def vjp(g):  # dS = P * (G - sum_j G P)
        return (p * (g - (g * p).sum(axis=-1, keepdims=True)),)

    return Tensor.result(p, (scores,), vjp)


@operation(operands=1)
def rotate_pairs(x: Tensor, cos: np.ndarray, sin: np.ndarray) -> Tensor:
    """Rotate each pair ``(2i, 2i+1)`` of ``x: [..., T, d]`` by its angle.

    ``cos, sin: [T, d/2]``; ``[a, b] -> [a cos - b sin, a sin + b cos]``.
    """
    def rotate(v, sin):
        a, b = v[..., 0::2], v[..., 1::2]                # [..., T, d/2]
        out = np.empty(v.shape)
        out[..., 0::2] = a * cos - b * sin
        out[..., 1::2] = a * sin + b * cos
        return out

    def vjp(g):  # a rotation's transpose rotates back by the same angle
        return (rotate(g, -sin),)

    return Tensor.result(rotate(x.value, sin), (x,), vjp)


@operation(operands=2)
def rms_norm(x: Tensor, gain: Tensor, epsilon: float) -> Tensor:
    """``x / sqrt(mean(x^2) + eps) * gain`` over the last axis of ``x``."""
    mean_square = np.mean(x.value**2, axis=-1, keepdims=True)  # [..., 1]
    inverse_rms = 1.0 / np.sqrt(mean_square + epsilon)         # [..., 1]
    n = x.value * inverse_rms                                  # [..., d]

    def vjp(g):  # with g_n = g gain: dx = (g_n - n mean(g_n n)) / rms
        g_n = g * gain.value
        mean = np.mean(g_n * n, axis=-1, keepdims=True)        # [..., 1]
        g_x = (g_n - n * mean) * inverse_rms
        return g_x, unbroadcast(g * n, gain.shape)

    return Tensor.result(n * gain.value, (x, gain), vjp)


@operation(operands=1)
def silu(x: Tensor) -> Tensor:
    """``x * sigmoid(x)``, with ``sigmoid = (1 + tanh(x/2)) / 2``."""
    sigmoid = 0.5 * (1.0 + np.tanh(0.5 * x.value))  # never overflows
    return Tensor.result(x.value * sigmoid, (x,), lambda g: (
        g * sigmoid * (1.0 + x.value * (1.0 - sigmoid)),))  # s(1+x(1-s))


@operation(operands=1)
def relu(x: Tensor) -> Tensor:
    """``max(x, 0)``; the gradient passes where ``x > 0``."""
    open_ = x.value > 0
    return Tensor.result(x.value * open_, (x,), lambda g: (g * open_,))


Tensor.__add__, Tensor.__mul__, Tensor.__matmul__ = add, mul, matmul
