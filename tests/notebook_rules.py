"""The notebook rules of README.md («Rules for the notebooks») as checks that list problems.

Every ``*_problems`` function returns a list of readable problems; an empty
list means the notebook keeps the rule. ``test_notebook_conventions.py`` and
``test_notebook_habits.py`` assert an empty list for every chapter in
``book/``; ``test_notebook_rules.py`` shows that each check passes a small
notebook that keeps the conventions (``tests/fixtures/ch30-good.ipynb``) and
catches each defect of one that breaks them (``ch30-bad.ipynb``).

Terms:

* a *section* starts at a markdown cell with a line ``## …`` and runs to the
  next one; the *setup cells* are all cells before the first section;
* a *kernel* is a fresh IPython kernel of this interpreter (nbval's
  current-environment kernel) with ``PYTHONHASHSEED=0``, as under nbval.
"""

from __future__ import annotations

import ast
import base64
import html
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from queue import Empty

import nbformat
from IPython.core.inputtransformer2 import TransformerManager
from nbval.kernel import CURRENT_ENV_KERNEL_NAME, start_new_kernel

from llm_from_scratch.book.display import source_markdown

REPO = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((REPO / "book").glob("ch[0-9]*.ipynb"))


def _main_pages() -> dict[str, Path]:
    """Each chapter's main page (its entry in ``_toc.yml``; the section pages hang below it)."""
    import yaml

    toc = yaml.safe_load((REPO / "_toc.yml").read_text(encoding="utf-8"))
    pages = {}
    for entry in toc.get("chapters", []):
        match = re.match(r"book/ch(\d+)-", entry.get("file", ""))
        if match:
            pages[match[1]] = REPO / (entry["file"] + ".ipynb")
    return pages


def _chapter_pages() -> dict[str, list[Path]]:
    """Each chapter's pages in ``_toc.yml`` order: the main page, then its sections."""
    import yaml

    toc = yaml.safe_load((REPO / "_toc.yml").read_text(encoding="utf-8"))
    pages = {}
    for entry in toc.get("chapters", []):
        match = re.match(r"book/ch(\d+)-", entry.get("file", ""))
        if match:
            files = [entry["file"], *(section["file"] for section in entry.get("sections", []))]
            pages[match[1]] = [REPO / (file + ".ipynb") for file in files]
    return pages


MAIN_PAGES = _main_pages()  # chapter number -> its main page
CHAPTER_PAGES = _chapter_pages()  # chapter number -> its main page and section pages
FIXTURES = Path(__file__).resolve().parent / "fixtures"
# At a 1280 px window a code block holds 77 characters and an output block 75
# (666 px wide, 2 x 16 px padding, 8.43 px a character): one character spare.
MAX_COLUMNS = 76
MAX_OUTPUT_COLUMNS = 75
RAISES = "raises-exception"
CELL_TIMEOUT = 300  # seconds for one cell

# What the first code cell prints when the package is missing (README.md).
INSTALL_MESSAGE = (
    "Пакет llm_from_scratch не установлен. В папке курса выполните\n"
    "  python3 -m venv .venv\n"
    "  .venv/bin/pip install --require-hashes -r requirements.txt\n"
    "и откройте тетрадку командой .venv/bin/jupyter lab (README.md).\n"
)
# Makes the package unimportable in a running kernel, as in an environment
# where it was never installed: drops every sys.path entry that holds it (the
# editable install is such an entry) and any editable-install finder.
HIDE_PACKAGE = """\
import importlib, importlib.util, os, sys
sys.path[:] = [p for p in sys.path
               if not os.path.isdir(os.path.join(p or ".", "llm_from_scratch"))]
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
for _name in [m for m in sys.modules if m.split(".")[0] == "llm_from_scratch"]:
    del sys.modules[_name]
importlib.invalidate_caches()
if importlib.util.find_spec("llm_from_scratch") is not None:
    raise RuntimeError("could not hide llm_from_scratch from this kernel")
"""
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
HEADING = re.compile(r"^## ", re.MULTILINE)
FENCE = re.compile(r"^(`{3,}|~{3,})(.*)$")


def chapter_number(path: Path) -> str:
    return re.match(r"ch(\d+)", path.name).group(1)


def load(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def tags(cell) -> set[str]:
    return set(cell.get("metadata", {}).get("tags", []))


def first_line(cell) -> str:
    lines = [line for line in cell.source.splitlines() if line.strip()]
    return (lines[0] if lines else "").strip()[:60]


def describe(index: int, cell) -> str:
    return f"cell {index} ({first_line(cell)!r})"


# ---------------------------------------------------------------------------
# Setup cells and sections
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Section:
    title: str
    cells: tuple[int, ...]  # indices into nb.cells, the heading cell first


def is_heading(cell) -> bool:
    return cell.cell_type == "markdown" and bool(HEADING.search(cell.source))


def setup_cells(nb) -> list[int]:
    indices = []
    for index, cell in enumerate(nb.cells):
        if is_heading(cell):
            break
        indices.append(index)
    return indices


def sections(nb) -> list[Section]:
    starts = [index for index, cell in enumerate(nb.cells) if is_heading(cell)]
    result = []
    for start, end in zip(starts, [*starts[1:], len(nb.cells)], strict=True):
        title = HEADING.split(nb.cells[start].source, maxsplit=1)[1].splitlines()[0].strip()
        result.append(Section(title, tuple(range(start, end))))
    return result


def code_indices(nb, indices: Iterable[int]) -> list[int]:
    return [index for index in indices if nb.cells[index].cell_type == "code"]


# ---------------------------------------------------------------------------
# A kernel that returns a cell's outputs
# ---------------------------------------------------------------------------


def kernel_environment() -> dict[str, str]:
    env = dict(os.environ, PYTHONHASHSEED="0")
    env.pop("MPLBACKEND", None)  # the notebooks' %matplotlib inline decides
    return env


class Kernel:
    """A fresh kernel; ``run(code)`` returns the outputs as nbformat dicts."""

    def __init__(self, cwd: Path, kernel_name: str = CURRENT_ENV_KERNEL_NAME) -> None:
        self.manager, self.client = start_new_kernel(
            kernel_name=kernel_name, cwd=str(cwd), env=kernel_environment()
        )

    def __enter__(self) -> Kernel:
        return self

    def __exit__(self, *exc) -> None:
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)

    def run(self, code: str, timeout: float = CELL_TIMEOUT) -> list[dict]:
        msg_id = self.client.execute(code, store_history=True, allow_stdin=False)
        outputs: list[dict] = []
        while True:
            try:
                msg = self.client.get_iopub_msg(timeout=timeout)
            except Empty:
                raise TimeoutError(f"no answer in {timeout} s to:\n{code[:200]}") from None
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "status" and content["execution_state"] == "idle":
                return coalesce(outputs)
            if kind == "stream":
                outputs.append({"output_type": "stream", "name": content["name"], "text": content["text"]})
            elif kind in ("execute_result", "display_data"):
                outputs.append({"output_type": kind, "data": content["data"],
                                "metadata": content.get("metadata", {})})
            elif kind == "error":
                outputs.append({"output_type": "error", "ename": content["ename"],
                                "evalue": content["evalue"], "traceback": content["traceback"]})
            elif kind == "clear_output":
                outputs.clear()


def coalesce(outputs: list[dict]) -> list[dict]:
    """Join consecutive stream outputs of one stream, as the notebook shows them."""
    joined: list[dict] = []
    for output in outputs:
        previous = joined[-1] if joined else None
        if (output["output_type"] == "stream" and previous and previous["output_type"] == "stream"
                and previous["name"] == output["name"]):
            joined[-1] = {**previous, "text": previous["text"] + output["text"]}
        else:
            joined.append(output)
    return joined


def errors(outputs: Sequence[dict]) -> list[str]:
    return [f"{o['ename']}: {o['evalue']}" for o in outputs if o["output_type"] == "error"]


def visible_text(outputs: Sequence[dict]) -> str:
    """What a reader sees as text: streams and the text of rich outputs."""
    parts = []
    for output in outputs:
        if output["output_type"] == "stream":
            parts.append(output["text"])
        elif output["output_type"] == "error":
            parts.append(f"{output['ename']}: {output['evalue']}\n")
        else:
            data = output["data"]
            if "text/html" in data:
                parts.append(html.unescape(re.sub(r"<[^>]+>", "", data["text/html"])))
            elif "text/markdown" in data:
                parts.append(data["text/markdown"])
            elif "text/plain" in data:
                parts.append(data["text/plain"])
    return "".join(parts)


def comparable(outputs: Sequence[dict]) -> list[tuple]:
    """Every output type except execution counts; a PNG compares as its bytes.

    Both runs happen in one kernel with one matplotlib, whose Agg renderer is
    deterministic, so equal figures give equal bytes and a difference means
    the figure changed (e.g. a line drawn again onto shared axes).
    """
    result = []
    for output in outputs:
        if output["output_type"] == "stream":
            result.append(("stream", output["name"], output["text"]))
        elif output["output_type"] == "error":
            result.append(("error", output["ename"], output["evalue"]))
        else:
            data = {mime: base64.b64decode(value) if mime == "image/png" else value
                    for mime, value in output["data"].items()}
            result.append((output["output_type"], data, output.get("metadata", {})))
    return result


def first_difference(first: list[tuple], second: list[tuple]) -> str:
    for n, (a, b) in enumerate(zip(first, second, strict=False)):
        if a != b:
            return f"output {n}: {short(a)} then {short(b)}"
    return f"{len(first)} outputs, then {len(second)}"


def short(output: tuple) -> str:
    if output[0] == "stream" or output[0] == "error":
        return repr(output[2][-120:])
    data = output[1]
    if "image/png" in data and data.get("text/plain") is not None:
        return f"a PNG of {len(data['image/png'])} bytes ({data['text/plain']!r})"
    return repr(str(data.get("text/plain", sorted(data)))[-120:])


# ---------------------------------------------------------------------------
# Static rules
# ---------------------------------------------------------------------------


def fenced_code_lines(markdown: str) -> list[str]:
    """Lines of the code blocks in a markdown cell (not of directive fences)."""
    lines, fence = [], None
    for line in markdown.splitlines():
        match = FENCE.match(line.strip())
        if fence is None:
            if match and not match.group(2).strip().startswith("{"):
                fence = match.group(1)
        elif line.strip() == fence:
            fence = None
        else:
            lines.append(line)
    return lines


def output_lines(output: dict) -> list[str]:
    if output["output_type"] == "stream":
        return output["text"].splitlines()
    if output["output_type"] == "error":
        return [ANSI.sub("", line) for entry in output["traceback"] for line in entry.splitlines()]
    return output.get("data", {}).get("text/plain", "").splitlines()


def width_problems(nb, limit: int = MAX_COLUMNS, output_limit: int = MAX_OUTPUT_COLUMNS) -> list[str]:
    """Lines of code and of code blocks in markdown wider than ``limit``; of stored text outputs,
    wider than ``output_limit``."""
    problems = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            places = [("code", cell.source.splitlines(), limit)]
            places += [("output", output_lines(o), output_limit) for o in cell.get("outputs", [])]
            # a listing from show_source is Markdown: its code block holds what a code cell holds
            places += [("listing", fenced_code_lines(o.get("data", {}).get("text/markdown", "")), limit)
                       for o in cell.get("outputs", [])]
        elif cell.cell_type == "markdown":
            places = [("code block", fenced_code_lines(cell.source), limit)]
        else:
            continue
        for what, lines, most in places:
            for line in lines:
                if len(line) > most:
                    problems.append(f"{describe(index, cell)}: {what} line of {len(line)} characters: {line[:80]!r}")
    return problems


def listing_problems(nb, limit: int = MAX_COLUMNS) -> list[str]:
    """Lines wider than ``limit`` in what each ``show_source(...)`` of the notebook displays when it runs
    now: its arguments are looked up through the notebook's own imports, so a listing is checked as the
    code is, not as it was when the outputs were stored."""
    namespace: dict = {}
    calls = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        for node in ast.walk(ast.parse(TransformerManager().transform_cell(cell.source))):   # %magic as Python
            if isinstance(node, ast.Import | ast.ImportFrom):
                exec(compile(ast.Module([node], type_ignores=[]), "<notebook imports>", "exec"), namespace)
            elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "show_source":
                calls.append((index, cell, node.args))
    problems = []
    for index, cell, arguments in calls:
        objects = [eval(compile(ast.Expression(argument), "<listing>", "eval"), namespace) for argument in arguments]
        for line in fenced_code_lines(source_markdown(*objects)):
            if len(line) > limit:
                problems.append(f"{describe(index, cell)}: listing line of {len(line)} characters: {line[:80]!r}")
    return problems


def exercise_alias(chapter: str, contract: Path = REPO / "tests" / "test_exercises.py") -> str:
    """The alias the exercise contract test uses for a chapter (its ``CHAPTERS``)."""
    for node in ast.parse(contract.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "CHAPTERS" for t in node.targets):
            return ast.literal_eval(node.value).get(chapter, f"ex{chapter}")
    return f"ex{chapter}"


def imports(source: str) -> list[tuple[str, str, str]]:
    """(module, name, bound name) of every ``from module import name [as alias]``."""
    try:
        tree = ast.parse(re.sub(r"^\s*[%!].*$", "", source, flags=re.MULTILINE))
    except SyntaxError:
        return []
    return [(node.module or "", alias.name, alias.asname or alias.name)
            for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names]


def alias_problems(nb, chapter: str, exercise_alias: str) -> list[str]:
    """The setup cells import the chapter's modules under the fixed names, and no cell renames them."""
    wanted = {
        (f"llm_from_scratch.ch{chapter}", "example"): f"ch{chapter}",
        (f"llm_from_scratch.ch{chapter}", "exercises"): exercise_alias,
        (f"llm_from_scratch.ch{chapter}", "figures"): f"plots{chapter}",
    }
    setup = set(code_indices(nb, setup_cells(nb)))
    found: dict[tuple[str, str], set[str]] = {}
    problems = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        for module, name, bound in imports(cell.source):
            key = (module, name)
            if key in wanted and bound != wanted[key]:
                problems.append(f"{describe(index, cell)}: `from {module} import {name}` binds "
                                f"{bound!r}; the notebook's name for it is {wanted[key]!r}")
            if key in wanted and index in setup:
                found.setdefault(key, set()).add(bound)
    for (module, name), bound in wanted.items():
        if bound not in found.get((module, name), set()):
            as_part = "" if bound == name else f" as {bound}"
            problems.append(f"the setup cells do not run `from {module} import {name}{as_part}`")
    return problems


# ---------------------------------------------------------------------------
# Rules that run the notebook
# ---------------------------------------------------------------------------


def first_code_cell(nb):
    return next(cell for cell in nb.cells if cell.cell_type == "code")


def install_message_problems(nb, cwd: Path) -> list[str]:
    """The first code cell prints INSTALL_MESSAGE without the package and nothing with it."""
    source = first_code_cell(nb).source
    problems = []
    with Kernel(cwd) as kernel:
        hidden = kernel.run(HIDE_PACKAGE)
        if errors(hidden):
            return [f"could not hide the package from a kernel: {errors(hidden)}"]
        outputs = kernel.run(source)
        expected = [{"output_type": "stream", "name": "stdout", "text": INSTALL_MESSAGE}]
        if outputs != expected:
            problems.append("without the package the first code cell shows "
                            f"{visible_text(outputs)!r}, not the install message {INSTALL_MESSAGE!r}")
    with Kernel(cwd) as kernel:
        outputs = kernel.run(source)
        if outputs:
            problems.append(f"with the package installed the first code cell shows {visible_text(outputs)!r}")
    return problems


def run_cells(kernel: Kernel, nb, indices: Iterable[int]) -> list[str]:
    """Run cells in order; the errors of cells not tagged raises-exception."""
    problems = []
    for index in indices:
        cell = nb.cells[index]
        raised = errors(kernel.run(cell.source))
        if raised and RAISES not in tags(cell):
            problems.append(f"{describe(index, cell)} raised {raised[0]}")
    return problems


RESET = "%reset -f"  # a learner's fresh kernel, without the cost of starting one


@dataclass(frozen=True)
class Habits:
    """What one pass over a notebook found (``habit_problems``)."""

    sections: list[str]   # a section that does not run after the setup cells alone
    run_twice: list[str]  # a cell whose second run shows other outputs


def run_cell_twice(kernel: Kernel, nb, index: int, habits: Habits) -> list[str]:
    """Run a cell twice in a row; its first run's unexpected error, if any."""
    cell = nb.cells[index]
    first_outputs = kernel.run(cell.source)
    first, second = comparable(first_outputs), comparable(kernel.run(cell.source))
    if first != second:
        habits.run_twice.append(f"{describe(index, cell)} shows other outputs when run again: "
                                f"{first_difference(first, second)}")
    raised = errors(first_outputs)
    return [f"{describe(index, cell)} raised {raised[0]}"] if raised and RAISES not in tags(cell) else []


def habit_problems(nb, cwd: Path) -> Habits:
    """One kernel for the whole notebook: every code cell runs twice in a row, and
    every ``##`` section runs after ``%reset -f`` and the setup cells alone.

    ``%reset -f`` empties the namespace as a restart does, so a section that uses
    a name of another section fails here as it would in a fresh kernel.
    """
    habits = Habits([], [])
    setup = code_indices(nb, setup_cells(nb))
    with Kernel(cwd) as kernel:
        problems = [p for index in setup for p in run_cell_twice(kernel, nb, index, habits)]
        if problems:
            habits.sections.extend(f"setup: {problem}" for problem in problems)
            return habits
        for number, section in enumerate(sections(nb)):
            if number:  # the first section follows the setup cells it just ran
                kernel.run(RESET)
                problems = run_cells(kernel, nb, setup)
                if problems:
                    habits.sections.extend(f"setup before «{section.title}»: {p}" for p in problems)
                    return habits
            habits.sections.extend(
                f"section «{section.title}»: {problem}"
                for index in code_indices(nb, section.cells)
                for problem in run_cell_twice(kernel, nb, index, habits))
    return habits


def called_checks(nb, alias: str) -> list[str]:
    """Names of the checks the notebook calls as ``alias.check…(``."""
    pattern = re.compile(rf"\b{re.escape(alias)}\.(check\w*)\s*\(")
    return sorted({name for cell in nb.cells if cell.cell_type == "code"
                   for name in pattern.findall(cell.source)})


def feedback_problems(import_code: str, alias: str, checks: Sequence[str], header: str,
                      cwd: Path) -> list[str]:
    """Each ``alias.check(...)`` shows its feedback once, also after ``;`` or as an assignment.

    ``header`` starts every feedback (``Упражнение 30.``); the answer is the
    placeholder ``...``, which every check answers with feedback.
    """
    problems = []
    with Kernel(cwd) as kernel:
        imported = errors(kernel.run(import_code))
        if imported:
            return [f"`{import_code}` raised {imported[0]}"]
        for check in checks:
            forms = [f"{alias}.{check}(...)", f"{alias}.{check}(...);", f"_ = {alias}.{check}(...)",
                     f"answer = ...\nresult = {alias}.{check}(answer)"]
            texts = set()
            for form in forms:
                outputs = kernel.run(form)
                text = visible_text(outputs)
                texts.add(text)
                if errors(outputs):
                    problems.append(f"`{form}` raised {errors(outputs)[0]}")
                elif text.count(header) != 1:
                    problems.append(f"`{form}` shows the feedback {text.count(header)} times "
                                    f"(not once): {text[:100]!r}")
            if len(texts) > 1 and not any(f"{alias}.{check}(" in p for p in problems):
                problems.append(f"{alias}.{check}: the forms {forms} show different texts")
    return problems
