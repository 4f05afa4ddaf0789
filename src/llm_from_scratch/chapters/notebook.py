"""Notebook helpers: the real source of the core, tables as HTML (not images),
and the package's errors shown briefly.

Both display as Markdown, which myst-nb renders in the book and JupyterLab
renders in the notebook; their plain-text form is fixed, so nbval compares it
byte for byte while the Markdown is regenerated whenever the notebook runs.
"""

from __future__ import annotations

import inspect
import textwrap
from collections.abc import Sequence

from IPython import get_ipython
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


def short_errors(*kinds: type[BaseException], width: int = 75) -> None:
    """Show errors of ``kinds`` as ``Class: message`` wrapped at ``width`` columns.

    A typed error of the package says what was wrong in its message; the stack
    adds nothing for a learner, and one long line would scroll sideways in the
    book (an output block holds 75 characters at a 1280 px window). Other
    errors keep IPython's usual traceback. Outside IPython this does nothing.
    """
    shell = get_ipython()
    if shell is None:
        return

    def show(shell, kind, error, traceback, tb_offset=None):
        lines = textwrap.wrap(f"{kind.__name__}: {error}", width, subsequent_indent="  ")
        shell._showtraceback(kind, error, lines)   # the kernel sends it as an error output

    shell.set_custom_exc(tuple(kinds), show)
