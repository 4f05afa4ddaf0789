"""Notebook helpers: show the real source of the core, so the book cannot drift from ``src/``."""

from __future__ import annotations

import inspect
import textwrap


def source_markdown(*objects: object) -> str:
    """The source of functions, classes or methods as one fenced Python block."""
    parts = [textwrap.dedent(inspect.getsource(obj)).rstrip() for obj in objects]
    return "```python\n" + "\n\n\n".join(parts) + "\n```"


def show_source(*objects: object):
    """Display the source as Markdown (highlighted in Jupyter and in the HTML book).

    The object's plain-text form is fixed, so nbval compares it byte for byte;
    the Markdown itself is regenerated from ``src/`` whenever the notebook runs.
    """
    from IPython.display import Markdown

    return Markdown(source_markdown(*objects))
