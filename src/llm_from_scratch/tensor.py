"""A small reverse-mode autodiff tape over float64 NumPy arrays.

A ``Tensor`` holds a value and, when it needs a gradient, the operation that
made it: its parents and a VJP closure. Each operation below is a forward
function followed directly by its VJP, in the style of micrograd. ``backward``
walks the graph in reverse topological order and *accumulates* (``+=``) the
gradient of every leaf that requires one, so a tensor used twice receives the
sum of both contributions.

After use, ``release()`` drops the recorded graph behind a tensor to free its
saved arrays. Released tensors keep their values for inspection, but a layer or
``backward`` given one refuses it with a ``TensorError``.
"""

from __future__ import annotations

import functools
import numbers
from typing import Callable, Sequence

import numpy as np

from .errors import TensorError

# A VJP maps the upstream gradient of an output to one gradient per parent
# (``None`` where a parent needs none).
Vjp = Callable[[np.ndarray], Sequence["np.ndarray | None"]]


def as_float64_array(value: object, *, stage: str = "tensor") -> np.ndarray:
    """A finite float64 copy of ``value``, or a ``TensorError`` that says why not.

    Accepted: NumPy arrays and (nested) lists or tuples of real numbers, with a
    float or integer dtype. Rejected: bool, complex, object and string data,
    ragged lists, NaN and infinity.
    """
    if isinstance(value, Tensor):
        raise TensorError(f"{stage} expects an array, got a Tensor; use its .value", stage=stage)
    if isinstance(value, (str, bytes)) or value is None:
        raise TensorError(f"{stage} expects a numeric array, got {type(value).__name__}", stage=stage)
    try:
        array = np.asarray(value)
    except (ValueError, TypeError) as error:  # ragged nested lists
        raise TensorError(f"{stage} expects a rectangular numeric array: {error}", stage=stage) from error
    if array.dtype.kind not in "fiu":
        raise TensorError(
            f"{stage} expects real float or integer values, got dtype {array.dtype}", stage=stage
        )
    with np.errstate(over="ignore"):  # a float128 past float64's range becomes inf: refused just below
        array = np.array(array, dtype=np.float64)  # always a private copy
    if not np.all(np.isfinite(array)):
        bad = int(np.size(array) - np.count_nonzero(np.isfinite(array)))
        raise TensorError(
            f"{stage} values must be finite, got {bad} NaN or infinite of {array.size}", stage=stage
        )
    return array


class Tensor:
    """A float64 array on the tape. ``value``: the array; ``grad``: its accumulated gradient."""

    __slots__ = ("value", "grad", "requires_grad", "op", "_parents", "_vjp", "_released", "__weakref__")

    def __init__(self, value: object, requires_grad: bool = False) -> None:
        if not isinstance(requires_grad, bool):
            raise TensorError(
                f"tensor requires_grad must be True or False, got {requires_grad!r}", stage="tensor"
            )
        self.value = as_float64_array(value, stage="tensor")
        self.value.flags.writeable = False
        self.grad: np.ndarray | None = None
        self.requires_grad = requires_grad
        self.op = "leaf"
        self._parents: tuple[Tensor, ...] = ()
        self._vjp: Vjp | None = None
        self._released = False

    @classmethod
    def _result(cls, value: np.ndarray, parents: tuple[Tensor, ...], vjp: Vjp, op: str) -> Tensor:
        """The output of an operation; records parents and VJP only if a gradient can flow."""
        out = cls.__new__(cls)
        value.flags.writeable = False  # saved for the VJPs: nobody may edit it in place
        out.value = value
        out.grad = None
        out.requires_grad = any(p.requires_grad for p in parents)
        out.op = op
        out._parents = parents if out.requires_grad else ()
        out._vjp = vjp if out.requires_grad else None
        out._released = False
        return out

    # -- inspection -------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self.value.shape

    @property
    def ndim(self) -> int:
        return self.value.ndim

    @property
    def released(self) -> bool:
        return self._released

    def __repr__(self) -> str:
        flag = ", requires_grad=True" if self.requires_grad else ""
        state = ", released" if self._released else ""
        return f"Tensor(shape={list(self.shape)}, op={self.op}{flag}{state})"

    # -- graph ------------------------------------------------------------------
    def _topological_order(self) -> list[Tensor]:
        """Every node reachable from ``self``, parents before children (iterative DFS)."""
        order: list[Tensor] = []
        seen: set[int] = set()
        stack: list[tuple[Tensor, bool]] = [(self, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                order.append(node)
                continue
            if id(node) in seen:
                continue
            seen.add(id(node))
            stack.append((node, True))
            stack.extend((parent, False) for parent in node._parents if id(parent) not in seen)
        return order

    def backward(self, upstream: object = None) -> None:
        """Accumulate d(sum(self * upstream))/d(leaf) into ``leaf.grad`` for every leaf that requires it.

        ``upstream`` must have this tensor's shape; it defaults to ones.
        """
        ensure_live(self, "backward")
        if not self.requires_grad:
            raise TensorError("backward needs a tensor that depends on a leaf with requires_grad=True",
                              stage="backward")
        if upstream is None:
            seed = np.ones_like(self.value)
        else:
            seed = as_float64_array(upstream, stage="backward upstream")
            if seed.shape != self.shape:
                raise TensorError(
                    f"backward upstream shape must equal output shape {list(self.shape)}, got {list(seed.shape)}",
                    stage="backward",
                )
        order = self._topological_order()
        for node in order:
            if node._released:
                ensure_live(node, "backward")
        grads: dict[int, np.ndarray] = {id(self): seed}
        handed: set[int] = set()  # arrays adopted as a leaf's .grad (VJPs never edit their g in place)
        for node in reversed(order):
            g = grads.pop(id(node), None)
            if g is None or not node.requires_grad:
                continue
            if not node._parents:  # a leaf: accumulate
                if node.grad is not None:
                    node.grad = node.grad + g
                elif g.base is None and g.flags.writeable and id(g) not in handed:
                    node.grad = g  # a fresh array made by a VJP: adopt it, no copy
                    handed.add(id(g))
                else:  # a view, a saved value, or an array another leaf already holds
                    node.grad = g.copy()
                continue
            for parent, pg in zip(node._parents, node._vjp(g)):
                if pg is None or not parent.requires_grad:
                    continue
                key = id(parent)
                grads[key] = pg if key not in grads else grads[key] + pg

    def zero_grad(self) -> None:
        self.grad = None

    def release(self) -> None:
        """Drop the graph behind this tensor; non-parameter tensors in it become unusable."""
        from .parameter import Parameter  # parameters outlive every tape

        for node in self._topological_order():
            node._parents = ()
            node._vjp = None
            if not isinstance(node, Parameter):
                node._released = True


def ensure_live(tensor: object, stage: str) -> Tensor:
    """``tensor`` itself if it is a usable Tensor; otherwise a ``TensorError`` naming ``stage``."""
    if not isinstance(tensor, Tensor):
        raise TensorError(
            f"{stage} expects a Tensor, got {type(tensor).__name__}; wrap arrays as Tensor(array)",
            stage=stage,
        )
    if tensor._released:
        raise TensorError(
            f"{stage} input tensor of shape {list(tensor.shape)} belongs to a released tape", stage=stage
        )
    return tensor


def unbroadcast(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum ``grad`` over the axes that broadcasting added or stretched, back to ``shape``."""
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    return grad.sum(axis=axes, keepdims=True) if axes else grad


def is_int(value: object) -> bool:
    """A Python or NumPy integer, but not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


# ---------------------------------------------------------------------------
# Operations: forward, then its VJP right below.
# ---------------------------------------------------------------------------

def add(a: Tensor, b: Tensor) -> Tensor:
    """Elementwise ``a + b`` with NumPy broadcasting."""
    out = a.value + b.value

    def vjp(g):
        return unbroadcast(g, a.shape), unbroadcast(g, b.shape)

    return Tensor._result(out, (a, b), vjp, "add")


def mul(a: Tensor, b: Tensor) -> Tensor:
    """Elementwise ``a * b`` with NumPy broadcasting."""
    out = a.value * b.value

    def vjp(g):
        return unbroadcast(g * b.value, a.shape), unbroadcast(g * a.value, b.shape)

    return Tensor._result(out, (a, b), vjp, "mul")


def scale(a: Tensor, factor: float) -> Tensor:
    """``a * factor`` for a constant Python float."""
    out = a.value * factor

    def vjp(g):
        return (g * factor,)

    return Tensor._result(out, (a,), vjp, "scale")


def matmul(a: Tensor, b: Tensor) -> Tensor:
    """``a @ b``: either ``[..., n, k] @ [k, m]`` (a weight) or batched ``[..., n, k] @ [..., k, m]``."""
    out = a.value @ b.value

    def vjp(g):
        ga = unbroadcast(g @ np.swapaxes(b.value, -1, -2), a.shape) if a.requires_grad else None
        if not b.requires_grad:
            gb = None
        elif b.ndim == 2:  # a shared weight: one [k, n*] @ [n*, m] product over all rows
            gb = a.value.reshape(-1, a.shape[-1]).T @ g.reshape(-1, g.shape[-1])
        else:
            gb = unbroadcast(np.swapaxes(a.value, -1, -2) @ g, b.shape)
        return ga, gb

    return Tensor._result(out, (a, b), vjp, "matmul")


def reshape(a: Tensor, shape: Sequence[int]) -> Tensor:
    """Same values in a new shape (row-major)."""
    out = a.value.reshape(tuple(shape))

    def vjp(g):
        return (g.reshape(a.shape),)

    return Tensor._result(out, (a,), vjp, "reshape")


def transpose(a: Tensor, axes: Sequence[int]) -> Tensor:
    """Permute axes; the VJP applies the inverse permutation."""
    axes = tuple(axes)
    out = a.value.transpose(axes)
    inverse = tuple(np.argsort(axes))

    def vjp(g):
        return (g.transpose(inverse),)

    return Tensor._result(out, (a,), vjp, "transpose")


@functools.lru_cache(maxsize=16)
def causal_mask(tokens: int) -> np.ndarray:
    """``[T, T]`` booleans, built once per ``T``: key ``j`` is visible from query ``i`` iff ``j <= i``."""
    visible = np.tri(tokens, dtype=bool)
    visible.flags.writeable = False  # shared by every call with this T
    return visible


def causal_softmax(scores: Tensor) -> Tensor:
    """Row softmax of ``[..., T, T]`` scores with keys right of the query removed.

    Masked scores become ``-inf`` before the max-subtracted exponent, so future
    probabilities are exactly zero, not merely small.
    """
    probabilities = np.where(causal_mask(scores.shape[-1]), scores.value, -np.inf)  # a fresh [..., T, T]
    # The remaining steps work in place on that one array: no [..., T, T] temporaries.
    probabilities -= probabilities.max(axis=-1, keepdims=True)  # the diagonal is visible: max is finite
    np.exp(probabilities, out=probabilities)                     # exp(-inf) = 0 exactly
    probabilities /= probabilities.sum(axis=-1, keepdims=True)

    def vjp(g):
        grad = g * probabilities
        inner = grad.sum(axis=-1, keepdims=True)  # [..., T, 1]: sum_j g_j p_j
        np.subtract(g, inner, out=grad)
        grad *= probabilities                     # p * (g - inner)
        return (grad,)

    return Tensor._result(probabilities, (scores,), vjp, "causal_softmax")


def rotate_pairs(x: Tensor, cos: np.ndarray, sin: np.ndarray) -> Tensor:
    """Rotate adjacent pairs ``(2i, 2i+1)`` of ``x[..., T, d]`` by angles given as ``cos``/``sin`` ``[T, d/2]``.

    ``[a, b] -> [a cos - b sin, a sin + b cos]``; the VJP rotates back by the negative angle.
    Each half is written straight into its strided slot of the output: one temporary.
    """
    even, odd = x.value[..., 0::2], x.value[..., 1::2]  # [..., T, d/2] views
    out = np.empty_like(x.value)  # x's memory order: a head view of [B, T, h, d_h] is read in order
    out_even, out_odd = out[..., 0::2], out[..., 1::2]
    cross = odd * sin
    np.multiply(even, cos, out=out_even)
    out_even -= cross                   # a cos - b sin
    np.multiply(odd, cos, out=cross)
    np.multiply(even, sin, out=out_odd)
    out_odd += cross                    # a sin + b cos

    def vjp(g):
        g_even, g_odd = g[..., 0::2], g[..., 1::2]
        grad = np.empty(g.shape)  # row-major even when g is a transposed view (the key's gradient)
        grad_even, grad_odd = grad[..., 0::2], grad[..., 1::2]
        cross = g_odd * sin
        np.multiply(g_even, cos, out=grad_even)
        grad_even += cross              # g_a cos + g_b sin
        np.multiply(g_even, sin, out=cross)
        np.multiply(g_odd, cos, out=grad_odd)
        grad_odd -= cross               # -g_a sin + g_b cos
        return (grad,)

    return Tensor._result(out, (x,), vjp, "rotate_pairs")


def rms_norm(x: Tensor, gain: Tensor, epsilon: float) -> Tensor:
    """``x / sqrt(mean(x^2) + eps) * gain`` over the last axis; ``x: [..., d]``, ``gain: [d]``."""
    normalized = x.value * x.value
    inverse_rms = 1.0 / np.sqrt(np.mean(normalized, axis=-1, keepdims=True) + epsilon)  # [..., 1]
    np.multiply(x.value, inverse_rms, out=normalized)  # reuse the x^2 buffer: x / rms
    out = normalized * gain.value

    def vjp(g):
        work = g * normalized
        g_gain = work.reshape(-1, gain.shape[0]).sum(axis=0)
        if not x.requires_grad:
            return None, g_gain
        g_norm = g * gain.value
        np.multiply(g_norm, normalized, out=work)
        projection = np.mean(work, axis=-1, keepdims=True)  # [..., 1]
        np.multiply(normalized, projection, out=work)
        np.subtract(g_norm, work, out=work)
        work *= inverse_rms                      # (g_norm - normalized * mean(g_norm * normalized)) / rms
        return work, g_gain

    return Tensor._result(out, (x, gain), vjp, "rms_norm")


def silu(x: Tensor) -> Tensor:
    """``x * sigmoid(x)``, with the sigmoid written as ``(1 + tanh(x/2)) / 2`` to stay finite."""
    sigmoid = np.multiply(x.value, 0.5)
    np.tanh(sigmoid, out=sigmoid)
    sigmoid += 1.0
    sigmoid *= 0.5  # 0.5 * (1 + tanh(x/2)), built in one array
    out = x.value * sigmoid

    def vjp(g):
        slope = 1.0 - sigmoid
        slope *= x.value
        slope += 1.0                        # 1 + x (1 - sigmoid)
        grad = g * sigmoid
        grad *= slope
        return (grad,)

    return Tensor._result(out, (x,), vjp, "silu")
