"""Notebook helpers: show the real source of the core, so the book cannot drift from ``src/``."""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import re
import sys
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


# -- figure alt texts ---------------------------------------------------------------
# A figure cell ends with ``display(plotsNN.<name>(<arguments>))`` and carries its caption
# and alt text in the cell metadata (``mystnb.figure.caption`` / ``mystnb.image.alt``),
# which myst-nb puts into the HTML. Metadata is static, so the alt text is generated from
# the plot module's ``<name>_alt`` companion and kept in sync by ``sync_figure_alt``.

FIGURE_CALL = r"display\((plots\d+)\.(\w+)\((.*)\)\)\s*$"


def _figure_namespace(cells: list[dict]) -> dict:
    """Names the figure calls use: the plot and chapter modules, ``evidence``, and the notebook's
    own assignments that build figure data (e.g. ``random_weights = plots30.random_layer_weights(...)``)."""
    namespace: dict = {}
    for cell in cells:
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        for match in re.finditer(r"from llm_from_scratch\.(plots|chapters) import (ch\d+)(?: as (\w+))?", source):
            module = importlib.import_module(f"llm_from_scratch.{match.group(1)}.{match.group(2)}")
            namespace[match.group(3) or match.group(2)] = module
        if "%" in source.split("\n", 1)[0]:  # a line magic: not Python
            source = "\n".join(line for line in source.splitlines() if not line.startswith("%"))
        for node in ast.parse(source).body:
            if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id in ("evidence", "random_weights") for t in node.targets):
                exec(compile(ast.Module([node], []), "<notebook>", "exec"), namespace)  # noqa: S102
    return namespace


def figure_alt_texts(notebook: dict) -> list[tuple[int, str, str]]:
    """``(cell index, figure name, expected alt text)`` for every figure cell of a notebook."""
    namespace = _figure_namespace(notebook["cells"])
    found = []
    for index, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] != "code":
            continue
        match = re.search(FIGURE_CALL, "".join(cell["source"]), flags=re.M)
        if match:
            module, function, arguments = match.groups()
            expected = eval(f"{module}.{function}_alt({arguments})", namespace)  # noqa: S307
            name = cell.get("metadata", {}).get("mystnb", {}).get("figure", {}).get("name", "")
            found.append((index, name, expected))
    return found


def sync_figure_alt(path: str) -> int:
    """Write the expected alt texts into a notebook's figure cells; return how many changed."""
    with open(path, encoding="utf-8") as handle:
        notebook = json.load(handle)
    changed = 0
    for index, _, expected in figure_alt_texts(notebook):
        image = notebook["cells"][index].setdefault("metadata", {}).setdefault("mystnb", {}).setdefault("image", {})
        if image.get("alt") != expected:
            image["alt"] = expected
            changed += 1
    if changed:
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(notebook, handle, ensure_ascii=False, indent=1)
            handle.write("\n")
    return changed


if __name__ == "__main__":  # python -m llm_from_scratch.notebook book/*.ipynb
    for notebook_path in sys.argv[1:]:
        print(f"{notebook_path}: {sync_figure_alt(notebook_path)} alt texts updated")
