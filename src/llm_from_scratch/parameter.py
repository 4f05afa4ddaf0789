"""Named trainable tensors, and tuples of them with distinct names."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from .errors import ParameterError
from .tensor import Tensor


class Parameter(Tensor):
    """A trainable leaf tensor named like ``block.attention.query.weight``;
    it outlives every tape: ``release()`` never retires it."""

    outlives_release = True

    def __init__(self, name: str, value: object) -> None:
        if not isinstance(name, str) or not name.strip():
            raise ParameterError(
                f"parameter name must be a non-empty string, got {name!r}")
        super().__init__(value, requires_grad=True)
        self.name = name

    def __repr__(self) -> str:
        return f"Parameter(name={self.name!r}, shape={list(self.shape)})"


class ParameterList:
    """Parameters in a stable order, each name (so each tensor) once."""

    def __init__(self, parameters: Iterable[Parameter]) -> None:
        if not isinstance(parameters, Iterable) or isinstance(
                parameters, (str, bytes)):
            raise ParameterError(
                "parameter list expects an iterable of Parameters, "
                f"got {type(parameters).__name__}")
        self._parameters = tuple(parameters)
        first: dict[str, int] = {}
        for index, parameter in enumerate(self._parameters):
            if not isinstance(parameter, Parameter):
                raise ParameterError(
                    f"parameter list entry {index} must be a Parameter, "
                    f"got {type(parameter).__name__}")
            if parameter.name in first:
                raise ParameterError(
                    f"parameter name {parameter.name!r} appears twice "
                    f"(entries {first[parameter.name]} and {index})")
            first[parameter.name] = index

    def __iter__(self) -> Iterator[Parameter]:
        return iter(self._parameters)

    def __len__(self) -> int:
        return len(self._parameters)

    def __getitem__(self, index: int) -> Parameter:
        return self._parameters[index]

    @property
    def names(self) -> list[str]:
        return [p.name for p in self._parameters]

    def count(self) -> int:
        """The number of trainable scalars."""
        return sum(p.value.size for p in self._parameters)

    def zero_grad(self) -> None:
        for parameter in self._parameters:
            parameter.grad = None
