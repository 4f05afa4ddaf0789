"""A lab's settings: one frozen dataclass, checked where it is made and passed whole
(as llama's ``ModelArgs`` and nanoGPT's ``GPTConfig``).

A settings class names its lab and its error in ``LAB`` and ``ERROR`` and checks its
fields in ``__post_init__`` with ``Check``, one line a field; every message names the
lab, the setting, the allowed range and the value. ``changed`` makes the settings a
lab function is called with: ``run(layers=4)`` is ``run(Settings(layers=4))``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import fields, replace

import numpy as np

from ..checks import is_int, shown


def integer(value: object, name: str, low: int, high: int, error: type) -> int:
    """``value`` as an ``int`` in ``[low, high]`` (any integer type but bool)."""
    if not is_int(value) or not low <= value <= high:
        raise error(f"{name} must be an integer in [{low}, {high}], got {shown(value)}")
    return int(value)


def choice(value: object, name: str, options: Sequence[str], error: type) -> str:
    if not isinstance(value, str) or value not in options:
        allowed = ", ".join(repr(option) for option in options)
        raise error(f"{name} must be one of {allowed}, got {shown(value)}")
    return value


def number(value: object, name: str, low: float, high: float, error: type) -> float:
    """A finite real number in ``(low, high]``."""
    ok = isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))
    try:
        ok = ok and math.isfinite(value) and low < value <= high
    except OverflowError:     # an integer too large for a float
        ok = False
    if not ok:
        raise error(f"{name} must be a finite number in ({low:g}, {high:g}], got {shown(value)}")
    return float(value)


def flag(value: object, name: str, error: type) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise error(f"{name} must be True or False, got {shown(value)}")
    return bool(value)


class Check:
    """The checks of one settings object's fields; a checked value is stored back in
    its plain type (``np.int64(2)`` becomes ``2``)."""

    def __init__(self, settings: object) -> None:
        self.settings, self.lab, self.error = settings, settings.LAB, settings.ERROR

    def _store(self, name: str, value: object) -> None:
        object.__setattr__(self.settings, name, value)   # the dataclass is frozen

    def integer(self, name: str, low: int, high: int) -> None:
        value = getattr(self.settings, name)
        self._store(name, integer(value, f"{self.lab} {name}", low, high, self.error))

    def choice(self, name: str, options: Sequence[str]) -> None:
        choice(getattr(self.settings, name), f"{self.lab} {name}", options, self.error)

    def number(self, name: str, low: float, high: float) -> None:
        value = getattr(self.settings, name)
        self._store(name, number(value, f"{self.lab} {name}", low, high, self.error))

    def size(self, values: int, limit: int, what: str) -> None:
        """At most ``limit`` float64 values held at once, checked before anything is made."""
        if values > limit:
            raise self.error(f"{self.lab} would hold about {values} float64 values ({what}), "
                             f"more than the limit {limit}")


def changed(kind: type, settings: object, changes: dict[str, object]) -> object:
    """``settings`` (``kind()`` when None) with ``changes`` made, checked again."""
    if settings is None:
        settings = kind()
    if not isinstance(settings, kind):
        where = kind.__module__.rsplit(".", 1)[-1]
        raise kind.ERROR(f"{kind.LAB} settings must be a {where}.{kind.__qualname__}, got {shown(settings)}; "
                         "name the settings to change, e.g. layers=4")
    names = [field.name for field in fields(kind)]
    unknown = sorted(set(changes) - set(names))
    if unknown:
        raise kind.ERROR(f"{kind.LAB} setting {shown(unknown[0])} is unknown; known: {', '.join(names)}")
    return replace(settings, **changes) if changes else settings
