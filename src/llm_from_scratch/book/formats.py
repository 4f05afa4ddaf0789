"""Fixed text formats for reports, traces, notebook output and feedback (nbval compares every byte)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import numpy as np

from ..errors import FormatError

WIDTH = 75  # an output block of the book holds 75 characters at a 1280 px window


def format_number(value: float, decimals: int = 6) -> str:
    """``1.000000``; a value that rounds to zero prints as ``0.000000``, never ``-0.000000``."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, (bool, np.bool_, str, bytes)) or not isinstance(value, (int, float, np.number)) \
            or isinstance(value, np.complexfloating):
        raise FormatError(f"format_number value must be a real number, got {type(value).__name__}")
    if type(decimals) is not int or not 0 <= decimals <= 20:
        raise FormatError(f"format_number decimals must be an integer in [0, 20], got {decimals!r:.40}")
    try:
        number = float(value)
    except OverflowError:                 # an int beyond float's range
        raise FormatError(f"format_number value must fit a float, got an integer of "
                          f"{int(value).bit_length()} bits") from None
    text = f"{number:.{decimals}f}"
    return text[1:] if text.startswith("-") and float(text) == 0.0 else text


def format_vector(values: object, decimals: int = 6) -> str:
    """All values of an array, flattened row-major: ``[1.000000,0.000000]``."""
    return format_list(format_number(v, decimals) for v in np.asarray(values, dtype=np.float64).ravel())


def format_list(items: Iterable[object]) -> str:
    """The report's compact lists: ``[1,3,4]``, ``[query.weight,key.weight]``."""
    return "[" + ",".join(str(item) for item in items) + "]"


def format_shape(shape: Sequence[int]) -> str:
    """A shape as the prose and the errors write it: ``[1, 3, 4]``."""
    return str([int(n) for n in shape])


def format_bool(value: bool) -> str:
    """``true`` / ``false``, as in the course's reports."""
    return "true" if value else "false"


def wrap(text: str, width: int = WIDTH) -> str:
    """Every line at most ``width`` characters, for an output block of the book.

    A long line breaks after a space, a comma or a ``|``, so a number is never cut in two (only a run
    with none of them is cut at the width); its continuation lines start with the line's own indent
    plus four spaces. Removing each ``"\\n"`` and the indent after it gives the text back.
    """
    if not isinstance(text, str):
        raise FormatError(f"wrap text must be a str, got {type(text).__name__}")
    if type(width) is not int or not 8 <= width <= 10_000:
        raise FormatError(f"wrap width must be an integer in [8, 10000], got {width!r:.40}")
    out = []
    for line in text.splitlines():
        indent = " " * min(len(line) - len(line.lstrip(" ")) + 4, width // 2)
        head = ""
        while len(head) + len(line) > width:
            room = width - len(head)
            cut = max((match.end() for match in re.finditer(r"[ ,|]", line[:room])), default=room)
            out.append(head + line[:cut])
            line, head = line[cut:], indent
        out.append(head + line)
    return "\n".join(out)

