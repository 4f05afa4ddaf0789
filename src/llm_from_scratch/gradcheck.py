"""Central differences against ``backward``, for the input and each weight.

For ``L = sum(f(x) * upstream)`` the analytic gradient comes from
``backward(upstream)``; the numeric one moves one coordinate at a time:
``(L(w + delta) - L(w - delta)) / (2 delta)``. The report gives, per
tensor, the number of coordinates and the largest difference, and for a
failure both values at the worst coordinate.
"""

from dataclasses import dataclass

import numpy as np

from .checks import finite_number
from .errors import GradcheckError, chained
from .parameter import ParameterList
from .tensor import STRICT, Tensor, as_float64_array


@dataclass(frozen=True)
class TensorCheck:
    name: str
    coordinates: int
    max_abs_error: float  # a NaN difference counts as infinite
    worst: str            # the worst coordinate and both values there


@dataclass(frozen=True)
class GradcheckReport:
    checks: tuple[TensorCheck, ...]
    delta: float
    tolerance: float

    @property
    def total(self) -> int:
        return sum(check.coordinates for check in self.checks)

    @property
    def passed(self) -> bool:
        return all(c.max_abs_error <= self.tolerance for c in self.checks)

    def __str__(self) -> str:
        width = max(len(check.name) for check in self.checks)
        lines = [f"gradcheck: delta={self.delta:.0e} "
                 f"tolerance={self.tolerance:.0e} coordinates={self.total} "
                 f"passed={str(self.passed).lower()}"]
        for c in self.checks:
            failed = not c.max_abs_error <= self.tolerance
            lines.append(f"  {c.name:<{width}}  n={c.coordinates:<4d} "
                         f"max|analytic-numeric|={c.max_abs_error:.3e}"
                         + f"  FAILED at {c.worst}" * failed)
        return "\n".join(lines)

    __repr__ = __str__


MAX_COORDINATES = 20_000  # input and parameters: 40 000 forward passes


def gradcheck(forward, x, parameters, upstream, *, delta=1e-6,
              tolerance=1e-5) -> GradcheckReport:
    """Compare ``backward`` with central differences for ``forward``.

    ``forward`` maps a Tensor to a Tensor and reads ``parameters``: each
    of their coordinates is moved and put back, and their ``grad`` is
    replaced by the analytic gradient of this loss. Bad arguments, a
    failing forward or backward leave every ``grad`` as it was.
    """
    if not callable(forward):
        raise GradcheckError("gradcheck forward must be callable, "
                             f"got {type(forward).__name__}")
    delta = finite_number(delta, "gradcheck delta", GradcheckError)
    finite_number(tolerance, "gradcheck tolerance", GradcheckError)
    with chained(GradcheckError, "gradcheck"):
        parameters = ParameterList(parameters)
        x = as_float64_array(x.value if isinstance(x, Tensor) else x,
                             "input")
        seed = as_float64_array(upstream, "upstream")
    coordinates = x.size + sum(p.value.size for p in parameters)
    if coordinates > MAX_COORDINATES:  # two forward passes per coordinate
        raise GradcheckError(f"gradcheck would move {coordinates} "
                             "coordinates, more than the limit "
                             f"{MAX_COORDINATES}")

    def run(x_tensor):
        with chained(GradcheckError, "gradcheck forward"):
            output = forward(x_tensor)
        if not isinstance(output, Tensor):
            raise GradcheckError("gradcheck forward must return a Tensor, "
                                 f"got {type(output).__name__}")
        return output

    def loss():
        return float(np.sum(run(Tensor(x)).value * seed))

    x_tensor = Tensor(x, requires_grad=True)
    output = run(x_tensor)  # a failing forward leaves every grad as it was
    saved = [p.grad for p in parameters]
    try:
        parameters.zero_grad()
        with chained(GradcheckError, "gradcheck backward"):  # its shape
            output.backward(seed)
    except BaseException:
        for p, grad in zip(parameters, saved, strict=True):
            p._set_grad(grad)
        raise
    try:
        with np.errstate(**STRICT):
            checks = [_compare("input", x_tensor.grad, x, loss, delta)]
            for p in parameters:  # moved in a writable copy, put back
                original, p.value = p.value, p.value.copy()
                try:
                    checks.append(_compare(p.name, p.grad, p.value, loss,
                                           delta))
                finally:
                    p.value = original
    except FloatingPointError as error:
        raise GradcheckError(f"gradcheck central differences: {error}; "
                             f"delta {delta:g}") from error
    return GradcheckReport(tuple(checks), delta, float(tolerance))


def _compare(name, analytic, values, loss, delta) -> TensorCheck:
    """Move each coordinate of ``values`` (read by ``loss``) by delta."""
    analytic = np.zeros_like(values) if analytic is None else analytic
    numeric = np.empty_like(values)
    for index in np.ndindex(values.shape):
        original = values[index]
        values[index] = original + delta
        high = loss()
        values[index] = original - delta
        numeric[index] = (high - loss()) / (2.0 * delta)
        values[index] = original
    errors = np.nan_to_num(np.abs(analytic - numeric), nan=np.inf)
    if errors.size == 0:
        return TensorCheck(name, 0, 0.0, "")
    i = np.unravel_index(np.argmax(errors), errors.shape)
    return TensorCheck(name, errors.size, float(errors[i]),
                       f"{[int(k) for k in i]}: analytic={analytic[i]:.9f}"
                       f" numeric={numeric[i]:.9f}")
