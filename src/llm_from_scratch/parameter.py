"""Named trainable tensors, tuples of them with distinct names, and the
layers that hold them."""

from collections.abc import Iterable

from .errors import ParameterError, shown
from .tensor import Tensor


class Parameter(Tensor):
    """A trainable leaf tensor named like ``block.ffn.gate.weight``."""

    def __init__(self, name: str, value: object) -> None:
        if not isinstance(name, str) or not name.strip():
            raise ParameterError("parameter name must be a non-empty "
                                 f"string, got {shown(name)}")
        super().__init__(value, requires_grad=True)
        self.name = name

    def __repr__(self) -> str:
        return f"Parameter(name={self.name!r}, shape={list(self.shape)})"

    # The old gradient array is freed only once the next backward has made
    # a new one: freed first, it lets glibc trim the heap, and every step
    # faults all its pages in again.
    def zero_grad(self) -> None:
        self.spent_grad, self.grad = self.grad, None

    def _set_grad(self, total) -> None:
        self.grad, self.spent_grad = total, None


class ParameterList(tuple):
    """Parameters in a stable order, each name (so each tensor) once."""

    def __new__(cls, parameters: Iterable[Parameter] = ()):
        if not isinstance(parameters, Iterable) or isinstance(
                parameters, (str, bytes)):
            raise ParameterError(
                "parameter list expects an iterable of Parameters, "
                f"got {type(parameters).__name__}")
        parameters, first = tuple(parameters), {}
        for index, parameter in enumerate(parameters):
            if not isinstance(parameter, Parameter):
                raise ParameterError(
                    f"parameter list entry {index} must be a Parameter, "
                    f"got {type(parameter).__name__}")
            if parameter.name in first:
                raise ParameterError(
                    f"parameter name {shown(parameter.name)} appears twice "
                    f"(entries {first[parameter.name]} and {index})")
            first[parameter.name] = index
        return super().__new__(cls, parameters)

    @property
    def names(self) -> list[str]:
        return [p.name for p in self]

    def count(self) -> int:
        """The number of trainable scalars."""
        return sum(p.value.size for p in self)

    def zero_grad(self) -> None:
        """Every ``grad`` to None."""
        for parameter in self:
            parameter.zero_grad()


class Layer:
    """Its parameters are found as ``torch.nn.Module`` finds them: each
    ``Parameter`` attribute and each part's parameters, in the order set."""

    def parameters(self) -> ParameterList:
        found = []
        for value in vars(self).values():
            if isinstance(value, Layer):
                found.extend(value.parameters())
            elif isinstance(value, Parameter):
                found.append(value)
        return ParameterList(found)
