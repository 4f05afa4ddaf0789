"""Fixed number formatting for reports, traces and notebook output (nbval compares every byte)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np


def format_number(value: float, decimals: int = 6) -> str:
    """``1.000000``; a value that rounds to zero prints as ``0.000000``, never ``-0.000000``."""
    text = f"{float(value):.{decimals}f}"
    return text[1:] if text.startswith("-") and float(text) == 0.0 else text


def format_vector(values: object, decimals: int = 6) -> str:
    """All values of an array, flattened row-major: ``[1.000000,0.000000]``."""
    flat = np.asarray(values, dtype=np.float64).ravel()
    return "[" + ",".join(format_number(v, decimals) for v in flat) + "]"


def format_rows(values: object, decimals: int = 6) -> str:
    """A matrix (or a stack of them) as nested rows: ``[[1.000000,0.000000],[...]]``."""
    array = np.asarray(values, dtype=np.float64)
    if array.ndim <= 1:
        return format_vector(array, decimals)
    return "[" + ",".join(format_rows(row, decimals) for row in array) + "]"


def format_shape(shape: Sequence[int]) -> str:
    """``[1,3,4]``."""
    return "[" + ",".join(str(int(n)) for n in shape) + "]"


def format_shapes(shapes: Iterable[Sequence[int]]) -> str:
    return "[" + ",".join(format_shape(s) for s in shapes) + "]"


def format_names(names: Iterable[str]) -> str:
    return "[" + ",".join(names) + "]"


def format_bool(value: bool) -> str:
    """``true`` / ``false``, as in the course's reports."""
    return "true" if value else "false"
