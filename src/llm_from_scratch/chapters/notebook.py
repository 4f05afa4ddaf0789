"""Notebook helpers: the real source of the core, and tables as HTML (not images).

Both display as Markdown, which myst-nb renders in the book and JupyterLab
renders in the notebook; their plain-text form is fixed, so nbval compares it
byte for byte while the Markdown is regenerated whenever the notebook runs.
"""

from __future__ import annotations

import inspect
import textwrap
from collections.abc import Sequence

from IPython.display import Markdown


def source_markdown(*objects: object) -> str:
    """The source of functions, classes or methods as one fenced Python block."""
    parts = [textwrap.dedent(inspect.getsource(obj)).rstrip() for obj in objects]
    return "```python\n" + "\n\n\n".join(parts) + "\n```"


def show_source(*objects: object) -> Markdown:
    """Display the source of ``objects`` from ``src/``, highlighted."""
    return Markdown(source_markdown(*objects))


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> Markdown:
    """A pipe table: an HTML table in the book and in JupyterLab, text to nbval."""
    def line(cells: Sequence[object]) -> str:
        return "| " + " | ".join(str(cell).replace("|", "\\|") for cell in cells) + " |"

    lines = [line(header), "|" + "---|" * len(header), *(line(row) for row in rows)]
    return Markdown("\n".join(lines))
