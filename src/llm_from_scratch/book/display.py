"""Notebook helpers: the real source of the core, tables as HTML (not images),
and the package's errors shown briefly.

Sources and tables display as Markdown (tables also as HTML), which the book
and JupyterLab render; their plain-text form is fixed, so nbval compares it
byte for byte while the Markdown is regenerated whenever the notebook runs.
"""

from __future__ import annotations

import html
import inspect
import textwrap
from collections.abc import Sequence

from IPython import get_ipython
from IPython.display import Markdown

from .formats import wrap


def source_markdown(*objects: object) -> str:
    """The source of functions, classes or methods as one fenced Python block."""
    parts = [textwrap.dedent(inspect.getsource(obj)).rstrip() for obj in objects]
    return "```python\n" + "\n\n\n".join(parts) + "\n```"


def show_source(*objects: object) -> Markdown:
    """Display the source of ``objects`` from ``src/``, highlighted."""
    return Markdown(source_markdown(*objects))


class Table(Markdown):
    """A pipe table that also carries its HTML form.

    myst-nb renders ``text/markdown`` as CommonMark unless configured
    otherwise, and CommonMark has no tables; ``text/html`` comes first in the
    book's render priority and in JupyterLab, so the table shows as a table
    whatever the configuration. nbval compares both forms byte for byte.
    """

    def __init__(self, header: Sequence[object], rows: Sequence[Sequence[object]]) -> None:
        self.header = [str(cell) for cell in header]
        self.rows = [[str(cell) for cell in row] for row in rows]

        def line(cells: Sequence[str]) -> str:
            return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"

        lines = [line(self.header), "|" + "---|" * len(self.header), *(line(row) for row in self.rows)]
        super().__init__("\n".join(lines))

    def _repr_html_(self) -> str:
        def cells(tag: str, row: Sequence[str]) -> str:
            return "".join(f"<{tag}>{html.escape(cell)}</{tag}>" for cell in row)

        body = "".join(f"<tr>{cells('td', row)}</tr>" for row in self.rows)
        return (f'<table class="table"><thead><tr>{cells("th", self.header)}</tr></thead>'
                f"<tbody>{body}</tbody></table>")


def markdown_table(header: Sequence[object], rows: Sequence[Sequence[object]]) -> Table:
    """A table as HTML in the book and in JupyterLab (and as a pipe table in text)."""
    return Table(header, rows)


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
        lines = wrap(f"{kind.__name__}: {error}", width).splitlines()
        shell._showtraceback(kind, error, lines)   # the kernel sends it as an error output

    shell.set_custom_exc(tuple(kinds), show)
