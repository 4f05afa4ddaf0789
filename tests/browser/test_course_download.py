"""The downloadable course of each edition, as a reader gets it from its front page.

Each edition links its own zip: the Russian front page «Скачать курс», the
English one (built into _build/html/en/) "Download the course". The two zips
hold the same file names, the same lock and the same wheel; the notebooks are
the edition's (book/ or book/en/) and the README its own, with the same
commands. Every check below runs for both.

The zip's files carry the date of a commit of this repository (not 1980, which
JupyterLab showed as "Modified 46y ago"). Its README's commands, and the front
page's, are the same: on Linux and macOS the ones the test runs, and on
Windows the same with Windows' names, one command a line, which Windows
PowerShell 5.1 (no ``&&``) and cmd both run.

The zip linked from the built front page is unpacked in a
temporary folder outside the repository. A learner's environment is there
first: a venv whose JupyterLab settings file (overrides.json) holds the
learner's own choices. The README's first block (a venv, then install
requirements.txt, that is the lock and the wheel, with hashes) runs exactly as
written, with
pip asking the registry alone (this machine's pip settings, local indexes and
constraints are not a learner's), so it needs the network, as a learner does.
Then:

* the venv holds exactly the lock's packages for this platform, and the wheel;
* the learner's overrides.json is untouched, and the README's `jupyter lab`
  serves both the learner's settings and the course's (no news
  prompt, every notebook cell rendered when it opens), the learner's winning
  where both set a value;
* JupyterLab lists the MyST extension as enabled;
* nbval runs the unpacked notebooks in a kernel of that venv (nbval itself
  runs here, the notebooks run there): they reproduce their stored outputs.

Those checks (a venv each, then nbval) are one test class an edition, so that
pytest-xdist's --dist loadscope gives the two editions to two workers: each
takes as long as the one course did.
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import re
import secrets
import struct
import subprocess
import sys
import time
import urllib.request
import zipfile
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import json5
import pytest
from book_site import HTML_DIR, REPO, ROOT_PAGE, page_path
from lab_server import lab_url

FOLDER = "llm-from-scratch-course"
LOCK = REPO / "tools" / "course" / "requirements.lock"
INSTALL_TIMEOUT_S = 900
NBVAL_TIMEOUT_S = 900
# pytest with tests/ on its path only (not the kernel's: PYTHONPATH would reach
# it), so that `-p ipc_kernels` loads (tests/ipc_kernels.py says why).
RUN_PYTEST = ("import sys; sys.path.insert(0, sys.argv.pop(1)); import pytest; "
              "raise SystemExit(pytest.main(sys.argv[1:]))")
LAB_START_TIMEOUT_S = 120
SETTINGS = Path("share", "jupyter", "lab", "settings")
NOTIFICATION = "@jupyterlab/apputils-extension:notification"
TRACKER = "@jupyterlab/notebook-extension:tracker"
THEMES = "@jupyterlab/apputils-extension:themes"
SHIPPED_SETTINGS = REPO / "tools" / "lab" / "llm-from-scratch.json5"
# A learner's own JupyterLab settings, in their venv before the course comes.
LEARNER_OVERRIDES = {THEMES: {"theme": "JupyterLab Dark"}, NOTIFICATION: {"checkForUpdates": True}}
# Evaluated by the course venv's Python: the lock's packages for this platform.
FOR_THIS_PLATFORM = """
import json, sys
from importlib.metadata import distributions
from packaging.markers import Marker
from packaging.utils import canonicalize_name
entries = json.load(sys.stdin)
print(json.dumps({
    "locked": sorted(f"{name}=={version}" for name, version, marker in entries
                     if marker is None or Marker(marker).evaluate()),
    "installed": sorted(f"{canonicalize_name(d.metadata['Name'])}=={d.version}" for d in distributions()),
}))
"""


@dataclass(frozen=True)
class Edition:
    """Where an edition's course comes from and where its front page links it."""

    html: Path          # the edition's built HTML
    link_text: str      # the front page's link to the zip
    notebooks: Path     # the chapter notebooks that go into the zip
    readme: Path        # the course README that goes into the zip


EDITIONS = {
    "ru": Edition(HTML_DIR, "Скачать курс", REPO / "book", REPO / "tools" / "course" / "README.md"),
    # The two-edition build writes the English edition into _build/html/en/.
    "en": Edition(HTML_DIR / "en", "Download the course", REPO / "book" / "en",
                  REPO / "tools" / "course" / "README.en.md"),
}


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


def front_page(edition: str) -> Path:
    """The built front page of an edition: the Russian root page, and the page the English
    edition's index.html sends a reader to (wherever its build puts the English pages)."""
    if edition == "ru":
        return page_path(ROOT_PAGE)
    index = EDITIONS[edition].html / "index.html"
    assert index.is_file(), f"{index} is missing: the {edition} edition is not built (make html builds both)"
    refresh = re.search(r'http-equiv="Refresh" content="0; url=([^"]+)"', index.read_text(encoding="utf-8"))
    assert refresh, f"{index} does not send the reader to a front page"
    page = (index.parent / refresh[1]).resolve()
    assert page.is_file(), f"{index} sends the reader to {page}, which is not built"
    return page


def linked_zip(edition: str) -> Path:
    """The zip the edition's built front page links, in that edition's build."""
    front, text = front_page(edition), EDITIONS[edition].link_text
    parser = _Links()
    parser.feed(front.read_text(encoding="utf-8"))
    hrefs = [href for href, link in parser.links if link == text]
    assert len(hrefs) == 1, f"{front.name} links «{text}» {len(hrefs)} times: {parser.links[:10]}"
    assert hrefs[0].endswith(".zip"), hrefs[0]
    path = (front.parent / hrefs[0]).resolve()
    built = EDITIONS[edition].html.resolve()
    assert path.is_file() and built in path.parents, f"the link points to {path}, not a file of the build {built}"
    return path


@pytest.fixture(scope="module", params=list(EDITIONS))
def edition(request) -> str:
    return request.param


@pytest.fixture(scope="module")
def course_zip(edition, built_site) -> Path:
    return linked_zip(edition)


def sh_blocks(readme: str, language: str = "sh") -> list[str]:
    """The code blocks of a markdown text in ``language``, each without its indent."""
    blocks = re.findall(rf"^( *)```{language}\n(.*?)^\1```", readme, flags=re.DOTALL | re.MULTILINE)
    return ["\n".join(line.removeprefix(indent) for line in block.splitlines()).strip() for indent, block in blocks]


def commands(blocks: list[str]) -> list[str]:
    """Each line of the blocks: one command (a line that chains two would fail a test)."""
    return [line for block in blocks for line in block.splitlines()]


def html_blocks(page: Path, language: str) -> list[str]:
    """The code blocks of a built page highlighted as ``language``, as text."""
    found = re.findall(rf'<div class="highlight-{language} notranslate">.*?<pre>(.*?)</pre>',
                       page.read_text(encoding="utf-8"), flags=re.DOTALL)
    return [html.unescape(re.sub(r"<[^>]+>", "", block)).strip() for block in found]


def commit_dates() -> set[int]:
    log = subprocess.run(["git", "log", "--format=%ct"], cwd=REPO, capture_output=True, text=True, check=True)
    return {int(date) for date in log.stdout.split()}


def extended_time(info: zipfile.ZipInfo) -> int | None:
    """The mtime of a zip entry's extended timestamp field (0x5455), if any."""
    extra = info.extra
    while len(extra) >= 4:
        kind, size = struct.unpack("<HH", extra[:4])
        if kind == 0x5455 and size >= 5 and extra[4] & 1:
            return struct.unpack("<l", extra[5:9])[0]
        extra = extra[4 + size:]
    return None


def lock_entries() -> list[tuple[str, str, str | None]]:
    """(name, version, marker) of each package of the committed lock."""
    entries = []
    for line in LOCK.read_text(encoding="utf-8").splitlines():
        match = re.match(r"^([a-z0-9][a-z0-9._-]*)==([^\s;\\]+)(?: ; ([^\\]+?))?\s*\\?$", line)
        if match:
            entries.append((match[1], match[2], match[3]))
    assert entries, f"{LOCK} pins nothing"
    return entries


def test_zip_holds_the_course(edition, course_zip):
    notebooks = EDITIONS[edition].notebooks
    with zipfile.ZipFile(course_zip) as archive:
        names = sorted(name.removeprefix(f"{FOLDER}/") for name in archive.namelist())
        # The Russian chapters' names in both editions (the English notebooks have the same names).
        chapters = sorted(path.name for path in (REPO / "book").glob("ch[0-9]*.ipynb"))
        assert [n for n in names if n.endswith(".ipynb")] == chapters
        for name in chapters:  # the notebooks with their stored outputs, as in book/ (book/en/)
            assert archive.read(f"{FOLDER}/{name}") == (notebooks / name).read_bytes(), name
        (wheel,) = [n for n in names if n.endswith(".whl")]
        wheel_hash = hashlib.sha256(archive.read(f"{FOLDER}/{wheel}")).hexdigest()
        lock = archive.read(f"{FOLDER}/requirements.lock")
        requirements = archive.read(f"{FOLDER}/requirements.txt").decode().splitlines()
        readme = archive.read(f"{FOLDER}/README.md").decode()
    assert set(names) == {*chapters, wheel, "requirements.txt", "requirements.lock", "README.md"}, names
    assert readme == EDITIONS[edition].readme.read_text(encoding="utf-8"), "not the edition's README"
    assert lock == LOCK.read_bytes(), "the zip's lock is not the committed tools/course/requirements.lock"
    assert [line for line in requirements if line and not line.startswith("#")] == [
        "-r requirements.lock",
        f"./{wheel} --hash=sha256:{wheel_hash}",
    ]
    assert sh_blocks(readme) == [
        "python3 -m venv .venv\n.venv/bin/pip install --require-hashes -r requirements.txt",
        ".venv/bin/jupyter lab",
    ]


def test_zip_files_carry_a_commits_date(course_zip):
    with zipfile.ZipFile(course_zip) as archive:
        entries = archive.infolist()
    stamps = {extended_time(info) for info in entries}
    assert len(stamps) == 1, f"the entries carry {len(stamps)} dates: {sorted(map(str, stamps))[:5]}"
    (stamp,) = stamps
    assert stamp in commit_dates(), f"{stamp} is the date of no commit of this repository"
    # The zip's own field: the same instant in UTC, to its 2 s resolution.
    expected = time.gmtime(stamp - stamp % 2)[:6]
    assert {info.date_time for info in entries} == {expected}, f"not {expected}: {entries[0].date_time}"


def test_windows_commands_are_the_same_one_a_line(course_zip):
    """One command a line (PowerShell 5.1 rejects &&; cmd reads no PowerShell),
    and each the Linux command with Windows' names: py, .venv\\Scripts\\."""
    with zipfile.ZipFile(course_zip) as archive:
        readme = archive.read(f"{FOLDER}/README.md").decode()
    windows = commands(sh_blocks(readme, "bat"))
    assert windows, "the README gives no Windows commands (a ```bat block)"
    chained = [line for line in windows if re.search(r"&&|\|\||;|\$|`|/", line)]
    assert not chained, f"lines that Windows PowerShell 5.1 or cmd would not run as written: {chained}"
    as_linux = [re.sub(r"^py ", "python3 ", line).replace(".venv\\Scripts\\", ".venv/bin/") for line in windows]
    assert as_linux == commands(sh_blocks(readme)), f"not the Linux commands: {windows}"


def test_front_page_gives_the_readmes_commands(edition, course_zip):
    with zipfile.ZipFile(course_zip) as archive:
        readme = archive.read(f"{FOLDER}/README.md").decode()
    front = front_page(edition)
    for language in ("sh", "bat"):
        shown = commands(html_blocks(front, language))
        assert shown == commands(sh_blocks(readme, language)), (
            f"the front page's {language} commands are not the README's: {shown}")


def test_the_editions_zips_hold_the_same_files_and_package(built_site):
    """The same names at the same places, the same lock, the same wheel (byte for byte, so one
    hash), the same requirements and commands; only the notebooks and the README's words differ."""
    zips = {edition: zipfile.ZipFile(linked_zip(edition)) for edition in EDITIONS}
    try:
        names = {edition: sorted(archive.namelist()) for edition, archive in zips.items()}
        assert names["en"] == names["ru"]
        ru, en = zips["ru"], zips["en"]
        for name in names["ru"]:
            if name.endswith((".whl", ".lock")):
                assert en.read(name) == ru.read(name), f"the editions' {name} differ"

        def requirements(archive):
            lines = archive.read(f"{FOLDER}/requirements.txt").decode().splitlines()
            return [line for line in lines if line and not line.startswith("#")]

        assert requirements(en) == requirements(ru)
        for language in ("sh", "bat"):
            assert sh_blocks(en.read(f"{FOLDER}/README.md").decode(), language) == sh_blocks(
                ru.read(f"{FOLDER}/README.md").decode(), language), f"the READMEs' {language} commands differ"
    finally:
        for archive in zips.values():
            archive.close()


@dataclass
class Course:
    folder: Path
    base: Path
    env: dict[str, str]

    @property
    def venv(self) -> Path:
        return self.folder / ".venv"


def install(course_zip: Path, base: Path) -> Course:
    """The course unpacked far from the repository and installed by its README."""
    assert REPO not in base.parents
    with zipfile.ZipFile(course_zip) as archive:
        archive.extractall(base)
    folder = base / FOLDER
    env = {k: v for k, v in os.environ.items()  # nor a developer's pytest options (PYTEST_ADDOPTS)
           if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "PYTEST_ADDOPTS") and not k.startswith("PIP_")}
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if not p.startswith(str(REPO)))
    env["PIP_CONFIG_FILE"] = os.devnull  # no pip configuration file of this machine
    # The learner's venv and settings were there before the course.
    subprocess.run(["bash", "-c", "python3 -m venv .venv"], cwd=folder, env=env, check=True)
    overrides = folder / ".venv" / SETTINGS / "overrides.json"
    overrides.parent.mkdir(parents=True)
    overrides.write_text(json.dumps(LEARNER_OVERRIDES, indent=2))

    install = sh_blocks((folder / "README.md").read_text(encoding="utf-8"))[0]
    done = subprocess.run(["bash", "-ec", install], cwd=folder, env=env, capture_output=True, text=True,
                          timeout=INSTALL_TIMEOUT_S)
    assert done.returncode == 0, f"`{install}` failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return Course(folder, base, env)


def served_settings(course: Course, plugin_ids: list[str]) -> dict[str, dict]:
    """The defaults JupyterLab serves for ``plugin_ids``, started by the README's second command."""
    command = sh_blocks((course.folder / "README.md").read_text(encoding="utf-8"))[1]
    token = secrets.token_hex(16)
    args = ["--port=0", "--no-browser", "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
            f"--LabApp.user_settings_dir={course.base / 'user-settings'}",
            f"--LabApp.workspaces_dir={course.base / 'workspaces'}"]
    if os.geteuid() == 0:
        args.append("--allow-root")  # as the README says for root
    log = course.base / "lab.log"
    with log.open("w") as out:
        # exec: the server is the child itself (`jupyter` execs `jupyter-lab`), stopped below.
        lab = subprocess.Popen(["bash", "-c", f"exec {command} {' '.join(args)}"], cwd=course.folder,
                               env=course.env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        url = lab_url(lab, log, token, LAB_START_TIMEOUT_S)
        served = {}
        for plugin in plugin_ids:
            address = f"{url}/lab/api/settings/{plugin}?token={token}"
            with urllib.request.urlopen(address, timeout=30) as answer:
                schema = json.load(answer)["schema"]["properties"]
            served[plugin] = {key: value.get("default") for key, value in schema.items()}
        return served
    finally:
        lab.terminate()  # JupyterLab shuts down on SIGTERM
        try:
            lab.wait(timeout=30)
        except subprocess.TimeoutExpired:
            lab.kill()
            lab.wait()


class CourseInstall:
    """The edition's course installed by its README in a fresh venv: one test class an edition
    (``--dist loadscope`` gives each class to a worker of its own)."""

    edition: str

    @pytest.fixture(scope="class")
    @classmethod
    def course(cls, built_site, tmp_path_factory) -> Course:
        return install(linked_zip(cls.edition), tmp_path_factory.mktemp(f"course-{cls.edition}"))

    def test_the_venv_holds_exactly_the_lock_and_the_wheel(self, course):
        (wheel,) = course.folder.glob("llm_from_scratch-*.whl")
        version = wheel.name.split("-")[1]
        listing = subprocess.run([course.venv / "bin" / "python", "-c", FOR_THIS_PLATFORM],
                                 input=json.dumps(lock_entries()), env=course.env, cwd=course.base,
                                 capture_output=True, text=True, check=True)
        packages = json.loads(listing.stdout)
        installed = {p for p in packages["installed"] if not p.startswith("pip==")}  # the venv's own pip
        assert installed == {*packages["locked"], f"llm-from-scratch=={version}"}, (
            f"not in the lock: {sorted(installed - set(packages['locked']))}; "
            f"locked, not installed: {sorted(set(packages['locked']) - installed)}")
        where = subprocess.run([course.venv / "bin" / "python", "-c",
                                "import llm_from_scratch; print(llm_from_scratch.__file__)"],
                               cwd=course.base, env=course.env, capture_output=True, text=True, check=True).stdout
        assert Path(where.strip()).is_relative_to(course.venv), f"the package comes from {where}"

    def test_jupyterlab_lists_the_myst_extension(self, course):
        extensions = subprocess.run([course.venv / "bin" / "jupyter", "labextension", "list"],
                                    env=course.env, capture_output=True, text=True, check=True)
        listing = re.sub(r"\x1b\[[0-9;]*m", "", extensions.stdout + extensions.stderr)
        assert re.search(r"jupyterlab-myst v[\d.]+ enabled\s+OK", listing), listing

    def test_settings_reach_the_learner_without_overwriting_theirs(self, course):
        settings = course.venv / SETTINGS
        assert json.loads((settings / "overrides.json").read_text()) == LEARNER_OVERRIDES, "the install changed it"
        ours = json5.loads(SHIPPED_SETTINGS.read_text(encoding="utf-8"))
        assert json5.loads((settings / "overrides.d" / SHIPPED_SETTINGS.name).read_text(encoding="utf-8")) == ours
        served = served_settings(course, [NOTIFICATION, TRACKER, THEMES])
        assert served[NOTIFICATION]["fetchNews"] == "false", served  # the course's: no news prompt
        assert served[TRACKER]["windowingMode"] == ours[TRACKER]["windowingMode"], served  # the course's
        assert served[NOTIFICATION]["checkForUpdates"] is True, served  # the learner's value wins over the course's
        assert served[THEMES]["theme"] == "JupyterLab Dark", served  # the learner's own

    def test_notebooks_reproduce_their_outputs_in_the_course_venv(self, course):
        # A kernel of the course's venv; nbval runs from the repository's venv.
        kernel = course.base / "jupyter" / "kernels" / "course"
        kernel.mkdir(parents=True)
        (kernel / "kernel.json").write_text(json.dumps({
            "argv": [str(course.venv / "bin" / "python"), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "course venv", "language": "python",
        }))
        notebooks = sorted(p.name for p in course.folder.glob("*.ipynb"))
        nbval = subprocess.run(
            [sys.executable, "-c", RUN_PYTEST, str(REPO / "tests"), "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
             "-p", "ipc_kernels",
             "--rootdir", str(course.folder), "--nbval", "--nbval-kernel-name", "course",
             "--nbval-sanitize-with", str(REPO / "book" / "sanitize.cfg"), *notebooks],
            cwd=course.folder, env={**course.env, "JUPYTER_PATH": str(course.base / "jupyter"), "PYTHONHASHSEED": "0"},
            capture_output=True, text=True, timeout=NBVAL_TIMEOUT_S,
        )
        summary = nbval.stdout.strip().splitlines()[-1] if nbval.stdout.strip() else ""
        assert nbval.returncode == 0, f"nbval on the unpacked notebooks: {summary}\n{nbval.stdout[-6000:]}"
        assert " passed" in summary and "failed" not in summary, summary


class TestRussianCourse(CourseInstall):
    edition = "ru"


class TestEnglishCourse(CourseInstall):
    edition = "en"
