"""Every word a reader sees, one module per chapter and edition: ``text/ru/`` is the first edition.

The edition is chosen once per process by ``LLM_FROM_SCRATCH_EDITION`` (default ``ru``); the code that
computes, draws or checks reads its words through ``texts(...)`` and holds none of its own.
"""

from __future__ import annotations

import importlib
import os

EDITIONS = ("ru",)
EDITION = os.environ.get("LLM_FROM_SCRATCH_EDITION", "ru")


def texts(module: str = "") -> dict:
    """The ``TEXT`` table of ``text/<edition>/<module>.py`` (``""``: the texts every chapter shares)."""
    name = f"{__name__}.{EDITION}" + (f".{module}" if module else "")
    return importlib.import_module(name).TEXT
