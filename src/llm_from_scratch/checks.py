"""Checks of configurations and inputs, made once at the boundary.

A public function or layer method is decorated with ``@checked(check)``:
``check`` takes the same arguments and raises the component's typed error,
which names what was wrong and the values received. Only the outermost
call checks: inside a decoder block, the attention does not check again
the tensor that the block has checked, so a forward pass reads like its
formula.
"""

from __future__ import annotations

import functools
import math
import numbers
from collections.abc import Callable
from contextvars import ContextVar
from typing import TypeVar

from .parameter import Parameter
from .tensor import Tensor, is_int

F = TypeVar("F", bound=Callable)
_inside_checked_call = ContextVar("inside_checked_call", default=False)


def checked(check: Callable[..., None]) -> Callable[[F], F]:
    """``check(*arguments)`` runs before the function; while the function
    runs, the checked functions it calls skip their own checks."""
    def decorate(function: F) -> F:
        @functools.wraps(function)
        def boundary(*args, **kwargs):
            if _inside_checked_call.get():  # the caller checked its input
                return function(*args, **kwargs)
            check(*args, **kwargs)
            token = _inside_checked_call.set(True)
            try:
                return function(*args, **kwargs)
            finally:
                _inside_checked_call.reset(token)

        return boundary  # type: ignore[return-value]

    return decorate


def positive_int(value: object, role: str, error: type) -> int:
    """``value`` as an ``int`` if it is a positive integer."""
    if not is_int(value) or value <= 0:
        raise error(f"{role} must be a positive integer, got {value!r}")
    return int(value)


def finite_number(value: object, role: str, error: type, *,
                  zero_allowed: bool = False) -> float:
    """``value`` as a ``float`` if it is finite and positive (or 0)."""
    if (isinstance(value, numbers.Real) and not isinstance(value, bool)
            and math.isfinite(value)
            and (value > 0 or (zero_allowed and value == 0))):
        return float(value)
    rule = "a finite number >= 0" if zero_allowed else (
        "a finite positive number")
    raise error(f"{role} must be {rule}, got {value!r}")


def check_name(name: object, role: str, error: type) -> str:
    """A non-empty name or prefix such as ``block.attention``."""
    if not isinstance(name, str) or not name.strip():
        raise error(f"{role} must be a non-empty string, got {name!r}")
    return name


def check_parameter(value: object, role: str, rank: int,
                    error: type) -> Parameter:
    """A ``Parameter`` of the given rank with no empty axis."""
    if not isinstance(value, Parameter):
        raise error(f"{role} must be a Parameter, "
                    f"got {type(value).__name__}")
    if value.ndim != rank or 0 in value.shape:
        raise error(f"{role} must have rank {rank} and no empty axis, "
                    f"got rank {value.ndim} with shape {list(value.shape)}")
    return value


def check_tensor(x: object, role: str, error: type) -> Tensor:
    """A ``Tensor`` whose tape was not released."""
    if not isinstance(x, Tensor):
        raise error(f"{role} must be a Tensor, got {type(x).__name__}; "
                    "wrap arrays as Tensor(array)")
    if x.released:
        raise error(f"{role} tensor of shape {list(x.shape)} belongs "
                    "to a released tape")
    return x


def check_features(x: object, width: int, role: str, error: type,
                   expected: str) -> None:
    """A live Tensor ``[..., width]``."""
    check_tensor(x, role, error)
    if x.ndim == 0 or x.shape[-1] != width:
        got = x.shape[-1] if x.ndim else "a scalar"
        raise error(f"{role} final width must equal {expected} {width}, "
                    f"got {got}")


def check_positions(offset: object, tokens: int, capacity: int,
                    stage: str, error: type) -> None:
    """``[offset, offset + tokens)`` lies inside ``[0, capacity)``."""
    if not is_int(offset):
        raise error(f"{stage} position offset must be an integer, "
                    f"got {offset!r}")
    if offset < 0:
        raise error(f"{stage} position offset must be non-negative, "
                    f"got {offset}")
    if offset + tokens > capacity:
        raise error(f"{stage} position interval [{offset}, "
                    f"{offset + tokens}) exceeds capacity {capacity}")


def check_sequence(layer: object, x: object, position_offset: object = 0,
                   *, stage: str, error: type) -> None:
    """A live ``[B, T, d_model]`` Tensor at positions offset .. offset+T-1.

    The order is the chapter's: rank, width, tokens, positions, and only
    then the tape, so a bad interval is reported even for a released input.
    """
    d_model = layer.model_width
    if not isinstance(x, Tensor):
        check_tensor(x, f"{stage} input", error)
    if x.ndim != 3:
        raise error(f"{stage} input must have rank three "
                    f"[batch, tokens, model_width], got rank {x.ndim}")
    if x.shape[2] != d_model:
        raise error(f"{stage} input final width must equal model width "
                    f"{d_model}, got {x.shape[2]}")
    if x.shape[1] == 0:
        raise error(f"{stage} input needs at least one token so every "
                    "causal row has a key")
    check_positions(position_offset, x.shape[1], layer.max_positions,
                    stage, error)
    check_tensor(x, f"{stage} input", error)
