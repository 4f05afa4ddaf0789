"""Named trainable tensors and ordered parameter lists."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Iterator

from .errors import ParameterError
from .tensor import Tensor


class Parameter(Tensor):
    """A trainable leaf ``Tensor`` with a name such as ``block.attention.query.weight``.

    Parameters outlive every tape: ``release()`` never marks them released.
    """

    __slots__ = ("name",)

    def __init__(self, name: str, value: object) -> None:
        if not isinstance(name, str) or not name.strip():
            raise ParameterError(f"parameter name must be a non-empty string, got {name!r}",
                                 stage="parameter")
        super().__init__(value, requires_grad=True)
        self.name = name

    def __repr__(self) -> str:
        return f"Parameter(name={self.name!r}, shape={list(self.shape)})"


class ParameterList:
    """Parameters in a stable order, with distinct names and distinct tensors."""

    def __init__(self, parameters: Iterable[Parameter]) -> None:
        if isinstance(parameters, (Parameter, str, bytes)) or not isinstance(parameters, Iterable):
            raise ParameterError(
                f"parameter list expects an iterable of Parameters, got {type(parameters).__name__}",
                stage="parameter list",
            )
        listed = list(parameters)
        names: dict[str, int] = {}
        nodes: dict[int, str] = {}
        for index, parameter in enumerate(listed):
            if not isinstance(parameter, Parameter):
                raise ParameterError(
                    f"parameter list entry {index} must be a Parameter, got {type(parameter).__name__}",
                    stage="parameter list",
                )
            if parameter.name in names:
                raise ParameterError(
                    f"parameter name {parameter.name!r} appears twice (entries {names[parameter.name]} and {index})",
                    stage="parameter list",
                )
            if id(parameter) in nodes:
                raise ParameterError(
                    f"parameters {nodes[id(parameter)]!r} and {parameter.name!r} share one tensor",
                    stage="parameter list",
                )
            names[parameter.name] = index
            nodes[id(parameter)] = parameter.name
        self._parameters = tuple(listed)

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
        """Number of trainable scalars."""
        return sum(int(p.value.size) for p in self._parameters)

    def zero_grad(self) -> None:
        for parameter in self._parameters:
            parameter.grad = None
