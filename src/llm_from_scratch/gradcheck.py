"""Central-difference gradient check over every coordinate of the input and of every parameter.

For the scalar ``L = sum(f(x) * upstream)`` the analytic gradient comes from
``backward(upstream)``; the numeric one perturbs one coordinate at a time:
``(L(w + delta) - L(w - delta)) / (2 delta)``. The report gives, per tensor,
the number of coordinates and the worst absolute difference, and on a failure
the analytic and numeric values side by side.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from collections.abc import Iterable
from typing import Callable, Sequence

import numpy as np

from .errors import GradcheckError, LlmFromScratchError
from .parameter import Parameter
from .tensor import Tensor, as_float64_array


@dataclass(frozen=True)
class TensorCheck:
    name: str
    coordinates: int
    max_abs_error: float
    worst_index: tuple[int, ...]
    analytic: float  # at the worst coordinate
    numeric: float   # at the worst coordinate


@dataclass(frozen=True)
class GradcheckReport:
    checks: tuple[TensorCheck, ...]
    delta: float
    tolerance: float
    loss: float

    @property
    def total(self) -> int:
        return sum(check.coordinates for check in self.checks)

    @property
    def max_abs_error(self) -> float:
        return max(check.max_abs_error for check in self.checks)

    @property
    def passed(self) -> bool:
        return all(math.isfinite(c.max_abs_error) and c.max_abs_error <= self.tolerance for c in self.checks)

    def __str__(self) -> str:
        width = max(len(check.name) for check in self.checks)
        lines = [f"gradcheck: delta={self.delta:.0e} tolerance={self.tolerance:.0e} "
                 f"coordinates={self.total} passed={str(self.passed).lower()}"]
        for check in self.checks:
            line = f"  {check.name:<{width}}  n={check.coordinates:<4d} max|analytic-numeric|={check.max_abs_error:.3e}"
            if check.max_abs_error > self.tolerance:
                line += (f"  FAILED at {list(check.worst_index)}: analytic={check.analytic:.9f} "
                         f"numeric={check.numeric:.9f}")
            lines.append(line)
        return "\n".join(lines)

    __repr__ = __str__


def gradcheck(forward: Callable[[Tensor], Tensor], x: object, parameters: Sequence[Parameter],
              upstream: object, *, delta: float = 1e-6, tolerance: float = 1e-5,
              input_name: str = "input") -> GradcheckReport:
    """Compare ``backward`` with central differences for ``forward(Tensor(x))``.

    ``forward`` maps a Tensor to the output Tensor and reads ``parameters`` (which
    this function perturbs in place and restores). Parameter gradients are reset.
    """
    if not callable(forward):
        raise GradcheckError(f"gradcheck forward must be callable, got {type(forward).__name__}", stage="gradcheck")
    for name, number in (("delta", delta), ("tolerance", tolerance)):
        real = isinstance(number, (int, float, np.integer, np.floating)) and not isinstance(number, bool)
        if not real or not math.isfinite(number) or number <= 0:
            raise GradcheckError(f"gradcheck {name} must be a finite positive number, got {number!r}",
                                 stage="gradcheck")
    if isinstance(parameters, (Parameter, str, bytes)) or not isinstance(parameters, Iterable):
        raise GradcheckError(f"gradcheck parameters must be a list of Parameters, got {type(parameters).__name__}",
                             stage="gradcheck")
    parameters = list(parameters)
    for index, parameter in enumerate(parameters):
        if not isinstance(parameter, Parameter):
            raise GradcheckError(f"gradcheck parameter {index} must be a Parameter, got {type(parameter).__name__}",
                                 stage="gradcheck")
    try:
        x_value = as_float64_array(x.value if isinstance(x, Tensor) else x, stage="gradcheck input")
        seed = as_float64_array(upstream, stage="gradcheck upstream")
    except LlmFromScratchError as source:
        raise GradcheckError(str(source), stage="gradcheck") from source

    def loss() -> float:
        return float(np.sum(_run(forward, Tensor(x_value)).value * seed))

    for parameter in parameters:
        parameter.grad = None
    x_tensor = Tensor(x_value, requires_grad=True)
    output = _run(forward, x_tensor)
    if output.shape != seed.shape:
        raise GradcheckError(f"gradcheck upstream shape must equal output shape {list(output.shape)}, "
                             f"got {list(seed.shape)}", stage="gradcheck")
    try:
        output.backward(seed)
    except LlmFromScratchError as source:  # e.g. an output that depends on no input or parameter
        raise GradcheckError(f"gradcheck backward: {source}", stage="gradcheck") from source
    base_loss = float(np.sum(output.value * seed))
    output.release()

    checks = [_check(input_name, x_value, x_tensor.grad, lambda value: _assign(x_value, value), loss, delta)]
    for parameter in parameters:
        analytic = parameter.grad if parameter.grad is not None else np.zeros_like(parameter.value)
        checks.append(_check_parameter(parameter, analytic, loss, delta))
    return GradcheckReport(checks=tuple(checks), delta=float(delta), tolerance=float(tolerance), loss=base_loss)


def _run(forward: Callable[[Tensor], Tensor], x: Tensor) -> Tensor:
    """``forward(x)``; a package error or a non-Tensor result becomes a ``GradcheckError``."""
    try:
        output = forward(x)
    except LlmFromScratchError as source:
        raise GradcheckError(f"gradcheck forward: {source}", stage="gradcheck") from source
    if not isinstance(output, Tensor):
        raise GradcheckError(f"gradcheck forward must return a Tensor, got {type(output).__name__}",
                             stage="gradcheck")
    return output


def _assign(target: np.ndarray, value: np.ndarray) -> None:
    target[...] = value


def _check(name: str, values: np.ndarray, analytic: np.ndarray | None, assign, loss, delta: float) -> TensorCheck:
    """Perturb ``values`` (a writable array read by ``loss``) coordinate by coordinate."""
    analytic = np.zeros_like(values) if analytic is None else analytic
    original = values.copy()
    numeric = np.empty_like(values)
    for index in np.ndindex(values.shape):
        plus, minus = original.copy(), original.copy()
        plus[index] += delta
        minus[index] -= delta
        assign(plus)
        high = loss()
        assign(minus)
        low = loss()
        numeric[index] = (high - low) / (2.0 * delta)
    assign(original)
    return _summarise(name, analytic, numeric)


def _check_parameter(parameter: Parameter, analytic: np.ndarray, loss, delta: float) -> TensorCheck:
    original = parameter.value

    def assign(value: np.ndarray) -> None:
        parameter.value = value

    try:
        return _check(parameter.name, original.copy(), analytic, assign, loss, delta)
    finally:
        parameter.value = original


def _summarise(name: str, analytic: np.ndarray, numeric: np.ndarray) -> TensorCheck:
    errors = np.abs(analytic - numeric)
    if errors.size == 0:
        return TensorCheck(name, 0, 0.0, (), 0.0, 0.0)
    worst = np.unravel_index(int(np.argmax(np.where(np.isfinite(errors), errors, np.inf))), errors.shape)
    return TensorCheck(name=name, coordinates=int(errors.size), max_abs_error=float(errors[worst]),
                       worst_index=tuple(int(i) for i in worst), analytic=float(analytic[worst]),
                       numeric=float(numeric[worst]))
