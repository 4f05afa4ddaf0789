"""A small reverse-mode autodiff tape over float64 NumPy arrays.

A ``Tensor`` made by an operation keeps its parents and a VJP: the map
from the gradient of the output to one gradient per parent, written right
under the forward computation (as in micrograd). ``backward`` visits every
tensor after the tensors made from it and adds up the contributions, so a
tensor used twice receives the sum of both. ``release()`` drops the graph;
its tensors keep their values but refuse further use (``TensorError``).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence

import numpy as np

from .errors import RmsNormError, TensorError

# the gradient of an output -> one gradient per parent (None: not needed)
Vjp = Callable[[np.ndarray], Sequence["np.ndarray | None"]]


def is_int(value: object) -> bool:
    """A Python or NumPy integer, but not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(
        value, (bool, np.bool_))


def as_float64_array(value: object, role: str) -> np.ndarray:
    """A finite float64 copy of an array or a (nested) list of numbers.

    Bool, complex, object and string data, ragged lists, NaN and infinity
    get a ``TensorError`` that starts with ``role``.
    """
    if isinstance(value, Tensor):
        raise TensorError(f"{role} expects an array, got a Tensor; "
                          "use its .value")
    if isinstance(value, (str, bytes)) or value is None:
        raise TensorError(f"{role} expects a numeric array, "
                          f"got {type(value).__name__}")
    try:
        array = np.asarray(value)
    except (ValueError, TypeError) as error:  # ragged nested lists
        raise TensorError(f"{role} expects a rectangular numeric array: "
                          f"{error}") from error
    if array.dtype.kind not in "fiu":
        raise TensorError(f"{role} expects real float or integer values, "
                          f"got dtype {array.dtype}")
    with np.errstate(over="ignore"):  # a huge float128 becomes inf
        array = np.array(array, dtype=np.float64)  # a private copy
    bad = array.size - np.count_nonzero(np.isfinite(array))
    if bad:
        raise TensorError(f"{role} values must be finite, "
                          f"got {bad} NaN or infinite of {array.size}")
    return array


class Tensor:
    """A float64 ``value`` and, after ``backward``, its ``grad``."""

    outlives_release = False  # True for a Parameter: weights outlive tapes

    def __init__(self, value: object, requires_grad: bool = False) -> None:
        if not isinstance(requires_grad, bool):
            raise TensorError("tensor requires_grad must be True or False, "
                              f"got {requires_grad!r}")
        self.value = as_float64_array(value, "tensor")
        self.value.flags.writeable = False
        self.requires_grad = requires_grad
        self.grad: np.ndarray | None = None
        self.parents: tuple[Tensor, ...] = ()
        self.vjp: Vjp | None = None
        self.released = False

    @staticmethod
    def result(value: np.ndarray, parents: tuple[Tensor, ...],
               vjp: Vjp) -> Tensor:
        """An operation's output; it keeps the graph if a gradient flows."""
        out = Tensor.__new__(Tensor)
        value.flags.writeable = False  # the VJPs read it later
        out.value, out.grad, out.released = value, None, False
        out.requires_grad = any(p.requires_grad for p in parents)
        out.parents = parents if out.requires_grad else ()
        out.vjp = vjp if out.requires_grad else None
        return out

    @property
    def shape(self) -> tuple[int, ...]:
        return self.value.shape

    @property
    def ndim(self) -> int:
        return self.value.ndim

    def __repr__(self) -> str:
        flags = ", requires_grad=True" * self.requires_grad
        return f"Tensor(shape={list(self.shape)}{flags})"

    def __add__(self, other: Tensor) -> Tensor:
        return _operator(add, self, other, "+")

    def __mul__(self, other: Tensor) -> Tensor:
        return _operator(mul, self, other, "*")

    def __matmul__(self, other: Tensor) -> Tensor:
        return _operator(matmul, self, other, "@")

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

    def backward(self, upstream: object = None) -> None:
        """Add ``d sum(self * upstream) / d leaf`` to each ``leaf.grad``.

        ``upstream`` has this tensor's shape; it defaults to ones.
        """
        order = self.topological_order()
        seed = self._seed(upstream, order)
        grads = {self: seed}
        for node in reversed(order):  # each tensor before its parents
            g = grads.pop(node, None)
            if g is None:
                continue
            if node.vjp is None:  # a leaf: accumulate
                node.grad = g.copy() if node.grad is None else node.grad + g
                continue
            for parent, g_parent in zip(node.parents, node.vjp(g),
                                        strict=True):
                if g_parent is not None and parent.requires_grad:
                    earlier = grads.get(parent)  # from another path
                    grads[parent] = (g_parent if earlier is None
                                     else earlier + g_parent)

    def _seed(self, upstream: object, order: list[Tensor]) -> np.ndarray:
        """The upstream gradient, after checking the tape can carry it."""
        for node in order:
            if node.released:
                raise TensorError(f"backward: a tensor of shape "
                                  f"{list(node.shape)} belongs to a "
                                  "released tape")
        if not self.requires_grad:
            raise TensorError("backward needs a tensor that depends on a "
                              "leaf with requires_grad=True")
        if upstream is None:
            return np.ones(self.shape)
        seed = as_float64_array(upstream, "backward upstream")
        if seed.shape != self.shape:
            raise TensorError("backward upstream shape must equal output "
                              f"shape {list(self.shape)}, "
                              f"got {list(seed.shape)}")
        return seed

    def zero_grad(self) -> None:
        self.grad = None

    def release(self) -> None:
        """Drop the graph behind this tensor and retire its tensors."""
        for node in self.topological_order():
            node.parents, node.vjp = (), None
            node.released = not node.outlives_release


def _operator(op: Callable[[Tensor, Tensor], Tensor], a: Tensor,
              b: object, symbol: str) -> Tensor:
    """``a + b``, ``a * b``, ``a @ b``, or a ``TensorError``."""
    if not isinstance(b, Tensor):
        raise TensorError(f"tensor {symbol} needs a Tensor on both sides, "
                          f"got {type(b).__name__}")
    try:
        return op(a, b)
    except ValueError as error:  # from NumPy: shapes that do not fit
        raise TensorError(f"tensor {list(a.shape)} {symbol} "
                          f"{list(b.shape)}: {error}") from error


def unbroadcast(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum ``grad`` over the axes that broadcasting added or stretched."""
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    stretched = tuple(axis for axis, n in enumerate(shape)
                      if n == 1 and grad.shape[axis] != 1)
    return grad.sum(axis=stretched, keepdims=True) if stretched else grad


# -- operations: the forward computation, then its VJP -------------------

def add(a: Tensor, b: Tensor) -> Tensor:
    """``a + b`` with NumPy broadcasting."""
    def vjp(g):
        return unbroadcast(g, a.shape), unbroadcast(g, b.shape)

    return Tensor.result(a.value + b.value, (a, b), vjp)


def mul(a: Tensor, b: Tensor) -> Tensor:
    """``a * b`` elementwise, with NumPy broadcasting."""
    def vjp(g):  # d(ab) = da b + a db
        return (unbroadcast(g * b.value, a.shape),
                unbroadcast(g * a.value, b.shape))

    return Tensor.result(a.value * b.value, (a, b), vjp)


def scale(a: Tensor, factor: float) -> Tensor:
    """``a * factor`` for a constant number."""
    return Tensor.result(a.value * factor, (a,), lambda g: (g * factor,))


def matmul(a: Tensor, b: Tensor) -> Tensor:
    """``[..., n, k] @ [k, m]`` (a weight), or batched ``[..., k, m]``."""
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


def reshape(a: Tensor, shape: Sequence[int]) -> Tensor:
    """The same values in a new shape (row-major order)."""
    return Tensor.result(a.value.reshape(tuple(shape)), (a,),
                         lambda g: (g.reshape(a.shape),))


def transpose(a: Tensor, axes: Sequence[int]) -> Tensor:
    """Permute the axes; the VJP applies the inverse permutation."""
    inverse = np.argsort([axis % a.ndim for axis in axes])
    return Tensor.result(a.value.transpose(axes), (a,),
                         lambda g: (g.transpose(inverse),))


def causal_softmax(scores: Tensor) -> Tensor:
    """Softmax of each row of ``[..., T, T]`` over the visible keys.

    Future keys get ``-inf`` before the exponent, so their probability is
    exactly 0; the diagonal is visible, so the row maximum is finite.
    """
    visible = np.tri(scores.shape[-1], dtype=bool)       # [T, T]: j <= i
    masked = np.where(visible, scores.value, -np.inf)    # [..., T, T]
    e = np.exp(masked - masked.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)                # [..., T, T]

    def vjp(g):  # dS = P * (G - sum_j G P)
        return (p * (g - (g * p).sum(axis=-1, keepdims=True)),)

    return Tensor.result(p, (scores,), vjp)


def rotate_pairs(x: Tensor, cos: np.ndarray, sin: np.ndarray) -> Tensor:
    """Turn each pair ``(2i, 2i+1)`` of ``x: [..., T, d]`` by its angle.

    ``cos, sin: [T, d/2]``; ``[a, b] -> [a cos - b sin, a sin + b cos]``.
    """
    def turn(v, sin):
        a, b = v[..., 0::2], v[..., 1::2]                # [..., T, d/2]
        out = np.empty(v.shape)
        out[..., 0::2] = a * cos - b * sin
        out[..., 1::2] = a * sin + b * cos
        return out

    def vjp(g):  # a rotation's transpose turns back by the same angle
        return (turn(g, -sin),)

    return Tensor.result(turn(x.value, sin), (x,), vjp)


def rms_norm(x: Tensor, gain: Tensor, epsilon: float) -> Tensor:
    """``x / sqrt(mean(x^2) + eps) * gain`` over the last axis of ``x``."""
    mean_square = np.mean(x.value**2, axis=-1, keepdims=True)  # [..., 1]
    if not np.all(mean_square + epsilon > 0):  # eps = 0: a row of zeros
        raise RmsNormError("RMSNorm with epsilon 0 cannot scale a row whose"
                           " mean square is 0, got "
                           f"{np.sum(mean_square == 0)} such rows")
    inverse_rms = 1.0 / np.sqrt(mean_square + epsilon)         # [..., 1]
    n = x.value * inverse_rms                                  # [..., d]

    def vjp(g):  # with g_n = g gain: dx = (g_n - n mean(g_n n)) / rms
        g_n = g * gain.value
        mean = np.mean(g_n * n, axis=-1, keepdims=True)        # [..., 1]
        g_x = (g_n - n * mean) * inverse_rms
        return g_x, unbroadcast(g * n, gain.shape)

    return Tensor.result(n * gain.value, (x, gain), vjp)


def silu(x: Tensor) -> Tensor:
    """``x * sigmoid(x)``, with ``sigmoid = (1 + tanh(x/2)) / 2``."""
    sigmoid = 0.5 * (1.0 + np.tanh(0.5 * x.value))  # never overflows

    def vjp(g):  # d(x s)/dx = s (1 + x (1 - s))
        return (g * sigmoid * (1.0 + x.value * (1.0 - sigmoid)),)

    return Tensor.result(x.value * sigmoid, (x,), vjp)
