"""Checks at every public entry point, and the typed errors they raise.

``@checked(check, error, stage)`` runs ``check`` on the arguments of every
call, nested ones too, so no check is lost when layers nest; a typed error
from inside comes out as the layer's own, naming the part that failed.
"""

import contextlib
import decimal
import functools
import math
import numbers

from .errors import (  # noqa: F401 (book.exercises imports Shown here)
    LlmFromScratchError, Shown, TensorError, shown)
from .parameter import Parameter
from .tensor import MAX_SIZE, Tensor, as_float64_array



def checked(check, error, stage):
    """Run ``check(*arguments)`` first; an error from inside becomes
    ``error("role: ...")``, the role of the part that raised it (in the
    layer's ``PARTS``) or else ``stage``, with the inner error as cause."""
    def decorate(function):
        @functools.wraps(function)
        def boundary(*args, **kwargs):
            layer = args[0] if args else None
            try:
                check(*args, **kwargs)
                try:
                    return function(*args, **kwargs)
                except LlmFromScratchError as inner:
                    part = getattr(inner, "layer", None)
                    role = next((role for name, (role, _) in getattr(
                        layer, "PARTS", {}).items()
                        if getattr(layer, name) is part), stage)
                    raise error(f"{role}: {inner}") from inner
            except LlmFromScratchError as raised:
                raised.layer = layer  # so that an outer layer can name it
                raise

        return boundary

    return decorate


def is_int(value):
    """A Python or NumPy integer of any width, but not a bool."""
    return isinstance(value, numbers.Integral) and type(value) is not bool


def positive_int(value, role, error):
    if not is_int(value) or int(value) <= 0:
        raise error(f"{role} must be a positive integer, "
                    f"got {shown(value)}")
    return int(value)


def check_size(count, what, error):
    """At most ``MAX_SIZE`` values, checked before anything is allocated."""
    if count > MAX_SIZE:
        raise error(f"{what} would hold {shown(count)} values, more than "
                    f"the limit {MAX_SIZE}")


def finite_number(value, role, error, *, zero_allowed=False):
    number = math.nan
    if isinstance(value, (numbers.Real, decimal.Decimal)) and (
            type(value) is not bool):
        with contextlib.suppress(OverflowError, ValueError):  # 10**400
            number = float(value)  # and Decimal("sNaN") stay NaN
    if math.isfinite(number) and (number > 0 or (zero_allowed
                                                 and number == 0)):
        return number
    rule = "number >= 0" if zero_allowed else "positive number"
    raise error(f"{role} must be a finite {rule}, got {shown(value)}")


def check_name(name, role, error):
    if not isinstance(name, str) or not name.strip():
        raise error(f"{role} must be a non-empty string, got {shown(name)}")


def check_parameter(value, role, rank, error):
    if not isinstance(value, Parameter):
        raise error(f"{role} must be a Parameter, "
                    f"got {type(value).__name__}")
    if value.ndim != rank or 0 in value.shape:
        raise error(f"{role} must have rank {rank} and no empty axis, "
                    f"got rank {value.ndim} with shape {list(value.shape)}")


LAYOUTS = {3: "three [batch, tokens, model_width]",
           4: "four [batch, heads, tokens, head_width]"}


def check_tensor(x, role, error, width=None, expected="", rank=None,
                 live=True):
    """A ``Tensor`` of ``rank`` (``LAYOUTS``) or ``[..., width]`` if given,
    whose tape was not released (unless ``live`` is False)."""
    if not isinstance(x, Tensor):
        raise error(f"{role} must be a Tensor, got {type(x).__name__}; "
                    "wrap arrays as Tensor(array)")
    if rank is not None and x.ndim != rank:
        raise error(f"{role} must have rank {LAYOUTS[rank]}, "
                    f"got rank {x.ndim}")
    if width is not None and (x.ndim == 0 or x.shape[-1] != width):
        raise error(f"{role}'s last dimension must equal {expected} "
                    f"{width}, got {x.shape[-1] if x.ndim else 'a scalar'}")
    if live and x.released:
        raise error(f"{role} tensor of shape {list(x.shape)} belongs "
                    "to a released tape")


def check_positions(offset, tokens, capacity, stage, error):
    """``[offset, offset + tokens)`` lies inside ``[0, capacity)``."""
    if not is_int(offset) or int(offset) < 0:
        rule = "non-negative" if is_int(offset) else "an integer"
        raise error(f"{stage} position offset must be {rule}, "
                    f"got {shown(offset)}")
    if int(offset) + tokens > capacity:
        raise error(f"{stage} position interval [{int(offset)}, "
                    f"{int(offset) + tokens}) exceeds capacity {capacity}")


def check_sequence(layer, x, position_offset=0, *, stage, error):
    """A live ``[B, T, d_model]`` Tensor at positions offset .. offset+T-1,
    checked in the chapter's order: rank, width, tokens, positions, and
    then the tape, so a bad interval is reported for a released input."""
    role = f"{stage} input"
    check_tensor(x, role, error, layer.model_width, "model width", rank=3,
                 live=False)
    if x.shape[1] == 0:
        raise error(f"{role} needs at least one token so every causal row "
                    "has a key")
    check_positions(position_offset, x.shape[1], layer.max_positions,
                    stage, error)
    check_tensor(x, role, error)


def instance(value, kind, role, error):
    """``value`` itself when it is a ``kind`` (a class or a tuple)."""
    if not isinstance(value, kind):
        names = " or ".join(k.__name__ for k in (
            kind if isinstance(kind, tuple) else (kind,)))
        raise error(f"{role} must be a {names}, "
                    f"got {type(value).__name__}")
    return value


def values(value, role, error, rank=None, shape=None):
    """A finite float64 copy of ``value`` (at most ``MAX_SIZE`` numbers,
    no empty axis) of ``rank`` (an int, or ``(lowest, highest)``) or of
    ``shape`` (``None`` for any size along an axis)."""
    try:
        array = as_float64_array(value, role)
    except TensorError as cause:
        raise error(str(cause)) from cause
    low, high = (rank, rank) if is_int(rank) else rank or (0, 32)
    if shape is not None:
        low = high = len(shape)
    fits = shape is None or all(want in (None, got) for want, got
                                in zip(shape, array.shape, strict=False))
    if not low <= array.ndim <= high or 0 in array.shape or not fits:
        rule = ("shape [" + ", ".join("*" if s is None else str(s)
                                      for s in shape) + "]"
                if shape is not None else f"rank {low}" if low == high
                else f"rank {low} to {high}")
        raise error(f"{role} must be numbers of {rule} with no empty "
                    f"axis, got shape {list(array.shape)}")
    return array
