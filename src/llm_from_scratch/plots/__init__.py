"""Greyscale figures for chapters 30-31, built from the chapter evidence (no pyplot).

``plots.ch30`` and ``plots.ch31`` hold one function per figure, each returning a
``matplotlib.figure.Figure``, and a sibling ``<name>_alt`` with the Russian alt
text. ``plots.common`` holds the shared drawing machinery and ``PlotError``.
"""

from . import ch30, ch31
from .common import PlotError

__all__ = ["PlotError", "ch30", "ch31"]
