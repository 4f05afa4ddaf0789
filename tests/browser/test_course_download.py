"""The downloadable course, as a reader gets it from the front page.

The zip linked as «Скачать курс» from the built front page is unpacked in a
temporary folder outside the repository; its README's first command (create a
venv, install requirements.txt) runs exactly as written, with nothing else
installed; then nbval runs the unpacked notebooks in a kernel of that venv
(nbval itself runs here, the notebooks run there) and they must reproduce
their stored outputs. The second command's JupyterLab must have the MyST
extension enabled and the settings that switch off the news prompt.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from html.parser import HTMLParser
from pathlib import Path

import pytest
from book_site import REPO, ROOT_PAGE, page_path

LINK_TEXT = "Скачать курс"
FOLDER = "llm-from-scratch-course"
INSTALL_TIMEOUT_S = 900
NBVAL_TIMEOUT_S = 900


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, str]] = []
        self._href: str | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self._href, self._text = dict(attrs).get("href"), []

    def handle_data(self, data):
        if self._href is not None:
            self._text.append(data)

    def handle_endtag(self, tag):
        if tag == "a" and self._href is not None:
            self.links.append((self._href, "".join(self._text).strip()))
            self._href = None


@pytest.fixture(scope="module")
def course_zip(built_site) -> Path:
    front = page_path(ROOT_PAGE)
    parser = _Links()
    parser.feed(front.read_text(encoding="utf-8"))
    hrefs = [href for href, text in parser.links if text == LINK_TEXT]
    assert len(hrefs) == 1, f"{front.name} links «{LINK_TEXT}» {len(hrefs)} times: {parser.links[:10]}"
    assert hrefs[0].endswith(".zip"), hrefs[0]
    path = (front.parent / hrefs[0]).resolve()
    assert path.is_file() and built_site in path.parents, f"the link points to {path}, not a file of the build"
    return path


def sh_blocks(readme: str) -> list[str]:
    return [block.strip() for block in re.findall(r"```sh\n(.*?)```", readme, flags=re.DOTALL)]


def test_zip_holds_the_course(course_zip):
    with zipfile.ZipFile(course_zip) as archive:
        names = sorted(name.removeprefix(f"{FOLDER}/") for name in archive.namelist())
        chapters = sorted(path.name for path in (REPO / "book").glob("ch[0-9]*.ipynb"))
        assert [n for n in names if n.endswith(".ipynb")] == chapters
        for name in chapters:  # the notebooks with their stored outputs, as in book/
            assert archive.read(f"{FOLDER}/{name}") == (REPO / "book" / name).read_bytes(), name
        (wheel,) = [n for n in names if n.endswith(".whl")]
        requirements = archive.read(f"{FOLDER}/requirements.txt").decode().splitlines()
        readme = archive.read(f"{FOLDER}/README.md").decode()
    assert set(names) == {*chapters, wheel, "requirements.txt", "README.md"}, names
    pins = [line for line in requirements if line and not line.startswith("#")]
    assert pins[-1] == f"./{wheel}"
    assert all(re.fullmatch(r"[\w.-]+==[\w.]+", line) for line in pins[:-1]), pins
    assert {re.split("==", line)[0] for line in pins[:-1]} >= {"numpy", "matplotlib", "jupyterlab", "jupyterlab-myst"}
    assert sh_blocks(readme) == [
        "python3 -m venv .venv && .venv/bin/pip install -r requirements.txt",
        ".venv/bin/jupyter lab",
    ]


def test_course_runs_far_from_the_repository(course_zip, tmp_path_factory):
    base = tmp_path_factory.mktemp("course")
    assert REPO not in base.parents
    with zipfile.ZipFile(course_zip) as archive:
        archive.extractall(base)
    course = base / FOLDER
    install = sh_blocks((course / "README.md").read_text(encoding="utf-8"))[0]
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if not p.startswith(str(REPO)))
    done = subprocess.run(["bash", "-c", install], cwd=course, env=env, capture_output=True, text=True,
                          timeout=INSTALL_TIMEOUT_S)
    assert done.returncode == 0, f"`{install}` failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    python = course / ".venv" / "bin" / "python"

    where = subprocess.run([python, "-c", "import llm_from_scratch; print(llm_from_scratch.__file__)"],
                           cwd=base, env=env, capture_output=True, text=True, check=True).stdout
    assert Path(where.strip()).is_relative_to(course / ".venv"), f"the package comes from {where}"
    extensions = subprocess.run([course / ".venv" / "bin" / "jupyter", "labextension", "list"],
                                env=env, capture_output=True, text=True, check=True)
    listing = re.sub(r"\x1b\[[0-9;]*m", "", extensions.stdout + extensions.stderr)
    assert re.search(r"jupyterlab-myst v[\d.]+ enabled\s+OK", listing), listing
    overrides = course / ".venv" / "share" / "jupyter" / "lab" / "settings" / "overrides.d" / "llm-from-scratch.json"
    settings = json.loads(overrides.read_text())["@jupyterlab/apputils-extension:notification"]
    assert settings["fetchNews"] == "false", settings

    # A kernel of the course's venv; nbval runs from the repository's venv.
    kernel = base / "jupyter" / "kernels" / "course"
    kernel.mkdir(parents=True)
    (kernel / "kernel.json").write_text(json.dumps({
        "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "course venv", "language": "python",
    }))
    notebooks = sorted(p.name for p in course.glob("*.ipynb"))
    nbval = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
         "--rootdir", str(course), "--nbval", "--nbval-kernel-name", "course",
         "--nbval-sanitize-with", str(REPO / "book" / "sanitize.cfg"), *notebooks],
        cwd=course, env={**env, "JUPYTER_PATH": str(base / "jupyter"), "PYTHONHASHSEED": "0"},
        capture_output=True, text=True, timeout=NBVAL_TIMEOUT_S,
    )
    summary = nbval.stdout.strip().splitlines()[-1] if nbval.stdout.strip() else ""
    assert nbval.returncode == 0, f"nbval on the unpacked notebooks: {summary}\n{nbval.stdout[-6000:]}"
    assert " passed" in summary and "failed" not in summary, summary
