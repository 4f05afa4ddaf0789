"""The chapters in real JupyterLab, as a learner runs them with `make lab`.

A fixture starts `make lab` (so `--allow-root` comes from the Makefile when
running as root) on a copy of book/ in a temporary folder (autosave never
touches the repository), on a port the OS picks (``--port=0``) with a token,
and with a learner's settings: JupyterLab's defaults under the settings the
course ships (``tools/lab/llm-from-scratch.json5``, which `make lab` installs
as the course's wheel does), and no user settings. Each chapter page of both
editions (``book/`` and ``book/en/``) opens in headless Chromium, with the
edition's locale, with the network cut off; Run All Cells (the Run menu's
command); when the kernel is idle the test checks what the learner sees:

* the notebook's kernel is the venv's: no cell prints the install check's
  message;
* every markdown cell is rendered by jupyterlab-myst (not left as a
  placeholder, not showing its source in an editor), and no raw MyST markup is
  visible (fences, directive options, roles, targets, ``$…$`` math): right
  after Run All, and again with each cell scrolled into view, from the first
  to the last, as a reader scrolls through the notebook;
* no solution and no folded answer is open, and a solution's code shows only
  after a click on its title;
* every code cell ran in this kernel (its source reached the kernel), and shows
  output exactly when its stored output in the notebook is not empty (cells
  that print nothing, such as imports or the install check with the package
  installed, show nothing in the stored notebook either; nbval checks that
  those stored outputs are a fresh run's);
* the only error outputs are in cells tagged ``raises-exception``;
* no first-start news prompt appears, and no request leaves the machine;
* the file browser lists the chapters but not the book's build tooling;
* the server gives every value of the shipped settings as the default, and no
  user settings.

A solution showing as raw MyST, its answer code in plain view, was
intermittent for a learner (3 of 10 runs, on a freshly started server on a
loaded machine), so the first chapter runs again on a second freshly started
server: three runs a test session, on two cold starts.

Screenshots land in ``_build/lab-screenshots/``. Each server is stopped in
the fixture's teardown, also when a test fails.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import json5
import pytest
from book_site import CHAPTER_PAGES, EVERY_CHAPTER_PAGE, EVERY_MAIN_PAGE, REPO, VIEWPORT, edition_of
from lab_server import lab_url

from tests.ipc_kernels import socket_folder

SCREENSHOTS = REPO / "_build" / "lab-screenshots"
SHIPPED_SETTINGS = REPO / "tools" / "lab" / "llm-from-scratch.json5"
START_TIMEOUT_S = 120
RUN_TIMEOUT_S = 600
RAISES = "raises-exception"
INSTALL_HINT = "Пакет llm_from_scratch не установлен"  # the first cell's message
RAW_MYST = {
    "a directive fence": re.compile(r"(```|:::)\s*\{\w"),
    "a directive option": re.compile(r"^\s*:(label|class|nonumber|name|alt|open):", re.MULTILINE),
    "a role": re.compile(r"\{(numref|cite(:\w+)?|ref|eq|doc|download|term)\}"),
    "a target": re.compile(r"^\s*\([\w.-]+\)=\s*$", re.MULTILINE),
    "raw math": re.compile(r"\$[^$\s][^$\n]*\$"),
}
# How a markdown cell shows: `placeholder` (JupyterLab has not built it yet),
# `editor` (its source shows in an editor: the rendered flag alone says
# nothing, jupyterlab-myst sets it before it renders), `myst` (the input area
# holds jupyterlab-myst's rendering) and the text the page shows.
MARKDOWN_STATE_JS = """cell => {
    const editor = cell.node.querySelector('.jp-InputArea-editor');
    return {
        placeholder: cell.isPlaceholder(),
        editor: !!editor && !editor.classList.contains('lm-mod-hidden'),
        myst: !!cell.node.querySelector('.jp-InputArea > .myst'),
        text: cell.node.innerText,
    };
}"""
# One entry per cell: what the model holds and what the page shows.
CELLS_JS = f"""() => {{
  const markdownState = {MARKDOWN_STATE_JS};
  const notebook = window.jupyterapp.shell.currentWidget.content;
  return notebook.widgets.map((cell, index) => {{
    cell.node.dataset.cellIndex = index;  // for locators: [data-cell-index="i"]
    const model = cell.model;
    const outputs = model.type === 'code' ? model.outputs.toJSON() : [];
    const area = cell.node.querySelector('.jp-OutputArea');
    return {{
      type: model.type,
      source: model.sharedModel.getSource(),
      tags: model.getMetadata('tags') || [],
      errors: outputs.filter(o => o.output_type === 'error').map(o => o.ename + ': ' + o.evalue),
      shown: cell.node.querySelectorAll('.jp-OutputArea-output').length,
      text: model.type === 'markdown' ? null : (area ? area.innerText : ''),
      markdown: model.type === 'markdown' ? markdownState(cell) : null,
    }};
  }});
}}"""
# Each markdown cell scrolled into view in turn, first to last, and read as
# soon as it is in view (two frames later), as a reader scrolling sees it.
SCROLL_THROUGH_JS = f"""async () => {{
  const markdownState = {MARKDOWN_STATE_JS};
  const frame = () => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
  const notebook = window.jupyterapp.shell.currentWidget.content;
  const seen = [];
  for (let index = 0; index < notebook.widgets.length; index++) {{
    if (notebook.widgets[index].model.type !== 'markdown') continue;
    await notebook.scrollToItem(index, 'start');
    await frame();
    seen.push([index, markdownState(notebook.widgets[index])]);
  }}
  return seen;
}}"""
BUSY_JS = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  const running = [...panel.content.node.querySelectorAll('.jp-InputPrompt')]
    .some(p => p.textContent.includes('*'));
  return !kernel || kernel.status !== 'idle' || running;
}"""
# Run → Run All Cells, recording the code that reaches the kernel: the stored
# notebook already has an execution count in every cell, so a count says nothing.
RUN_ALL_JS = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  window.codeSent = [];
  panel.sessionContext.session.kernel.iopubMessage.connect((_, message) => {
    if (message.header.msg_type === 'execute_input') window.codeSent.push(message.content.code);
  });
  return window.jupyterapp.commands.execute('notebook:run-all-cells');
}"""


@dataclass
class Lab:
    url: str
    token: str
    root: Path
    log: Path
    kernels: Path  # the kernels' connection files and ipc sockets
    start: int  # which cold start (1, 2, ...)


def stop(process: subprocess.Popen) -> None:
    """Stop the process group that `make lab` started (make and JupyterLab)."""
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)


@contextlib.contextmanager
def started_lab(base: Path, start: int):
    """`make lab` on a copy of book/ in ``base``, with a learner's settings; stopped on exit."""
    root = base / "book"
    shutil.copytree(REPO / "book", root, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    # A learner's settings: none of their own yet (nor this machine's user's).
    (base / "settings").mkdir()
    token = secrets.token_hex(16)
    # Kernels talk over Unix sockets (tests/ipc_kernels.py says why), kept in a short
    # runtime folder of the server's own: a socket path may have at most 107 bytes.
    kernels = Path(tempfile.mkdtemp(prefix="lab-runtime-", dir=socket_folder()))
    lab_args = (f"--no-browser --port=0 --ServerApp.port_retries=0 --IdentityProvider.token={token} "
                f"--LabApp.user_settings_dir={base / 'settings'} --LabApp.workspaces_dir={base / 'workspaces'} "
                "--LabApp.expose_app_in_browser=True --KernelManager.transport=ipc")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}
    env["JUPYTER_RUNTIME_DIR"] = str(kernels)
    log = base / "lab.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            ["make", "--no-print-directory", "lab", f"LAB_DIR={root}", f"LAB_ARGS={lab_args}"],
            cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )
    try:
        url = lab_url(process, log, token, START_TIMEOUT_S)
        yield Lab(url, token, root, log, kernels, start)
    finally:
        stop(process)
        shutil.rmtree(kernels, ignore_errors=True)


@pytest.fixture(scope="module")
def lab(chromium, tmp_path_factory) -> Lab:
    with started_lab(tmp_path_factory.mktemp("lab"), start=1) as started:
        yield started


def test_make_lab_prints_the_url(lab):
    text = lab.log.read_text()
    assert "JupyterLab starts on" in text, f"`make lab` did not say what it starts:\n{text[-2000:]}"
    assert f"{lab.url}/lab?token=" in text, f"`make lab` did not print its URL:\n{text[-2000:]}"


def test_file_browser_shows_the_course_not_its_tooling(lab):
    with urllib.request.urlopen(f"{lab.url}/api/contents/?token={lab.token}", timeout=30) as answer:
        names = {entry["name"] for entry in json.load(answer)["content"]}
    chapters = {path.name for path in lab.root.glob("ch*.ipynb")}
    assert chapters and chapters <= names, f"chapters {sorted(chapters)} not all listed in {sorted(names)}"
    tooling = names & {"_ext", "sanitize.cfg", "__pycache__"}
    assert not tooling, f"the file browser lists build tooling: {sorted(tooling)}"


def shipped_settings() -> dict:
    return json5.loads(SHIPPED_SETTINGS.read_text(encoding="utf-8"))


def test_the_server_serves_the_shipped_settings(lab):
    """Each value the course ships is the default the server gives the page, and
    no user settings lie over them (a learner has none yet)."""
    for plugin, ours in shipped_settings().items():
        with urllib.request.urlopen(f"{lab.url}/lab/api/settings/{plugin}?token={lab.token}", timeout=30) as answer:
            served = json.load(answer)
        defaults = {key: value.get("default") for key, value in served["schema"]["properties"].items()}
        assert {key: defaults.get(key) for key in ours} == ours, f"{plugin}: not the shipped values"
        assert not served["settings"], f"{plugin}: user settings where a learner has none: {served['settings']}"


def open_chapter(chromium, lab: Lab, notebook: str, locale: str = "ru-RU"):
    context = chromium.new_context(locale=locale, viewport=VIEWPORT)
    context.set_default_timeout(60_000)
    outside: list[str] = []

    def route(route):
        if route.request.url.startswith((lab.url, "data:", "blob:")):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort("internetdisconnected")

    context.route("**/*", route)
    page = context.new_page()
    page.goto(f"{lab.url}/lab/tree/{notebook}?token={lab.token}")
    page.wait_for_function(
        """name => { const app = window.jupyterapp; const panel = app && app.shell.currentWidget;
            return panel && panel.context && panel.context.path === name && panel.sessionContext
              && panel.sessionContext.session && panel.sessionContext.session.kernel
              && panel.sessionContext.session.kernel.status === 'idle'; }""",
        arg=notebook, timeout=START_TIMEOUT_S * 1000,
    )
    return context, page, outside


def run_all(page) -> list[str]:
    """Run → Run All Cells, wait until the kernel stays idle with no cell running;
    the code of each cell that reached the kernel, in order."""
    page.evaluate(RUN_ALL_JS)
    deadline, idle_polls = time.monotonic() + RUN_TIMEOUT_S, 0
    while idle_polls < 3:
        assert time.monotonic() < deadline, f"Run All did not finish in {RUN_TIMEOUT_S} s"
        idle_polls = 0 if page.evaluate(BUSY_JS) else idle_polls + 1
        time.sleep(0.5)
    return page.evaluate("() => window.codeSent")


def stored_cells(notebook: Path) -> list[dict]:
    return json.loads(notebook.read_text(encoding="utf-8"))["cells"]


def markdown_problems(index: int, state: dict, when: str) -> list[str]:
    """What is wrong with how a markdown cell shows (empty when MyST rendered it)."""
    if state["placeholder"]:
        return [f"cell {index} {when}: not rendered (JupyterLab has not built the cell yet)"]
    problems = []
    if state["editor"]:
        problems.append(f"cell {index} {when}: shows its source in an editor, not rendered")
    elif not state["myst"]:
        problems.append(f"cell {index} {when}: not rendered by jupyterlab-myst")
    for what, pattern in RAW_MYST.items():
        match = pattern.search(state["text"] or "")
        if match:
            problems.append(f"cell {index} {when}: raw MyST ({what}) visible: {match.group(0)!r}")
    return problems


# For each given markdown cell (scrolled into view as a reader would): every
# folded block is closed and hides its content, and a click on its title shows
# it. One evaluate for all cells: a locator call per block cost 8 s a chapter.
FOLDS_JS = """async indices => {
    const shown = el => { const box = el.getBoundingClientRect();  // as Playwright's isVisible
        return box.width > 0 && box.height > 0 && el.checkVisibility({visibilityProperty: true}); };
    const frame = () => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
    const problems = [];
    for (const index of indices) {
        const cell = document.querySelector(`[data-cell-index="${index}"]`);
        const folds = cell ? [...cell.querySelectorAll('details')] : [];
        if (!folds.length) {
            problems.push(`cell ${index}: a solution or dropdown that did not render as a folded block`);
            continue;
        }
        cell.scrollIntoView();
        await frame();
        for (const fold of folds) {
            const hidden = [...fold.children].filter(child => child.tagName !== 'SUMMARY');
            if (fold.open || hidden.some(shown)) {
                problems.push(`cell ${index}: a folded block is open after Run All`);
                continue;
            }
            fold.querySelector(':scope > summary').click();
            await frame();
            const target = fold.querySelector('pre, code') || hidden[0];
            if (!target || !shown(target))
                problems.push(`cell ${index}: a click on the folded block's title did not show its content`);
        }
    }
    return problems;
}"""


def learner_run(chromium, lab: Lab, docname: str) -> list[str]:
    """Open a chapter, Run All, and read it as a learner does: what is wrong."""
    # The lab serves a copy of book/: the Russian notebooks at its top, the English in en/.
    edition = edition_of(docname)
    name = ("en/" if edition.language == "en" else "") + Path(docname).name + ".ipynb"
    stored = stored_cells(lab.root / name)
    locale = "en-US" if edition.language == "en" else "ru-RU"
    context, page, outside = open_chapter(chromium, lab, name, locale)
    try:
        sent = run_all(page)
        assert any(lab.kernels.glob("kernel-*-ipc-*")), f"the kernel's sockets are not ipc files in {lab.kernels}"
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        shot = f"{docname.replace('/', '-')}-start-{lab.start}"
        page.screenshot(path=SCREENSHOTS / f"{shot}-after-run-all.png")
        cells = page.evaluate(CELLS_JS)
        assert len(cells) == len(stored), f"Lab shows {len(cells)} cells, the notebook has {len(stored)}"
        windowing = page.evaluate("() => window.jupyterapp.shell.currentWidget.content.notebookConfig.windowingMode")
        problems = []
        news = page.get_by_text(re.compile("official Jupyter news", re.IGNORECASE))
        if news.count() and news.first.is_visible():
            problems.append("the first-start news prompt is shown")
        if any(INSTALL_HINT in cell["text"] for cell in cells if cell["type"] == "code"):
            problems.append("a cell printed the install message: the kernel does not see the package")
        code = [cell["source"] for cell in cells if cell["type"] == "code" and cell["source"].strip()]
        if sent != code:
            ran = sum(1 for source in code if source in sent)
            problems.append(f"Run All sent {len(sent)} cells to the kernel; {ran} of the {len(code)} code cells ran")
        for index, (cell, saved) in enumerate(zip(cells, stored, strict=True)):
            if cell["type"] == "markdown":
                problems += markdown_problems(index, cell["markdown"], "after Run All")
                continue
            if cell["type"] != "code":
                continue
            for what, pattern in RAW_MYST.items():
                match = pattern.search(cell["text"] or "")
                if match:
                    problems.append(f"cell {index}: raw MyST ({what}) in the output: {match.group(0)!r}")
            if bool(cell["shown"]) != bool(saved.get("outputs")):
                problems.append(f"cell {index}: shows {cell['shown']} outputs, the stored notebook has "
                                f"{len(saved.get('outputs', []))}")
            if cell["errors"] and RAISES not in cell["tags"]:
                problems.append(f"cell {index}: error without the tag {RAISES}: {cell['errors'][0]}")
        for index, state in page.evaluate(SCROLL_THROUGH_JS):
            problems += markdown_problems(index, state, "scrolled into view")
        folded = [i for i, saved in enumerate(stored) if saved["cell_type"] == "markdown"
                  and re.search(r"\{solution\}|:class:\s*dropdown|\{dropdown\}", "".join(saved["source"]))]
        # A main page has the exercises; a section page (the checks) may fold only code cells.
        assert folded or docname not in EVERY_MAIN_PAGE, f"{name} has no solution or folded answer to check"
        if folded:
            problems += page.evaluate(FOLDS_JS, folded)
            solutions = [i for i in folded if "{solution}" in "".join(stored[i]["source"])]
            page.locator(f'[data-cell-index="{(solutions or folded)[0]}"]').scroll_into_view_if_needed()
            page.screenshot(path=SCREENSHOTS / f"{shot}-solution-opened.png")
        if outside:
            problems.append(f"requests to other hosts (blocked): {sorted(set(outside))[:5]}")
        return [f"(cold start {lab.start}, windowing mode {windowing!r}) {problem}" for problem in problems]
    finally:
        context.close()


@pytest.mark.parametrize("docname", EVERY_CHAPTER_PAGE)
def test_chapter_after_run_all(chromium, lab, docname):
    problems = learner_run(chromium, lab, docname)
    assert not problems, f"{len(problems)} problems in JupyterLab:\n" + "\n".join(problems[:40])


def test_the_first_chapter_again_on_another_cold_start(chromium, lab, tmp_path_factory):
    """The same run of the first chapter (the one whose solutions showed as raw
    MyST) on one more freshly started server, the module's first one still up."""
    with started_lab(tmp_path_factory.mktemp("lab"), start=2) as again:
        problems = learner_run(chromium, again, CHAPTER_PAGES[0])
    assert not problems, f"{len(problems)} problems in JupyterLab:\n" + "\n".join(problems[:40])
