"""Every word a reader sees, one module per page's code and edition: ``text/ru/`` is the first edition.

An edition is a folder here whose modules define the same ``TEXT`` keys as ``text/ru/``; ``EDITIONS``
lists the folders, so adding ``text/en/`` adds the edition. It is chosen once per process by
``LLM_FROM_SCRATCH_EDITION`` (default ``ru``); the code that computes, draws or checks reads its words
through ``texts(...)`` and holds none of its own. Text modules are named after the code that reads
them: ``ch30.py`` the exercises of chapter 30, ``ch30_figures.py`` its figures, ``figure_style.py``
the words every figure shares, ``__init__.py`` the feedback every exercise shares.
"""

from __future__ import annotations

import importlib
import os
import pkgutil

from ..errors import EditionError

EDITIONS = tuple(sorted(found.name for found in pkgutil.iter_modules(__path__) if found.ispkg))
EDITION = os.environ.get("LLM_FROM_SCRATCH_EDITION", "ru")


def edition() -> str:
    """The edition this process reads, ``EDITION``, once it is known to be one of ``EDITIONS``."""
    if EDITION not in EDITIONS:
        raise EditionError(f"LLM_FROM_SCRATCH_EDITION must name an edition of the book "
                           f"({', '.join(EDITIONS)}), got {EDITION!r}")
    return EDITION


def texts(module: str = "") -> dict:
    """The ``TEXT`` table of ``text/<edition>/<module>.py`` (``""``: the texts every chapter shares)."""
    name = f"{__name__}.{edition()}" + (f".{module}" if module else "")
    return importlib.import_module(name).TEXT
