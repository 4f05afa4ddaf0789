"""Build the downloadable course: one zip an edition, a learner unpacks it anywhere.

    python tools/build_course.py _build/course/llm-from-scratch-course.zip
    python tools/build_course.py --edition en _build/course/llm-from-scratch-course-en.zip
    python tools/build_course.py --lock      # make lock: regenerate the lock

The zip holds one folder ``llm-from-scratch-course/`` with

* the chapter notebooks with their stored outputs: ``book/ch<number>-*.ipynb``
  in the Russian edition (the default), the same files of ``book/en/`` in the
  English one (each notebook's install cell sets its edition's package texts),
  under the same names in both zips, so that the same commands run either;
* a wheel of ``llm_from_scratch`` built from this checkout,
* ``requirements.lock``: ``tools/course/requirements.lock`` as committed, every
  package the course needs (the runtime pins of the repository's
  ``requirements.txt`` and all they pull in) at one version, with the sha256
  of each of its files on the registry, for Linux, macOS and Windows;
* ``requirements.txt``: ``-r requirements.lock``, then the wheel by relative
  path with its sha256, computed here from the wheel that goes into the zip
  (a hash cannot be committed for a wheel built at every build), so that
  ``pip install --require-hashes -r requirements.txt`` checks every file it
  installs, the wheel too, and refuses a dependency the lock does not pin;
* ``README.md``: the edition's README (``tools/course/README.md`` in Russian,
  ``tools/course/README.en.md`` in English) with the same commands.

The two editions' zips hold the same file names; they differ only in the
notebooks, the README and the comments of requirements.txt: the same lock,
and the same wheel byte for byte (it is built with
``SOURCE_DATE_EPOCH`` set to the last commit that changed the package, so two
builds give one wheel and one hash in requirements.txt).

The lock is made by ``uv pip compile --universal --generate-hashes`` from the
runtime pins (``--lock``, which ``make lock`` runs). uv reads no configuration
file and no ``UV_*`` variable here, so only the default registry is asked (this
machine's pip settings, local indexes and constraints never reach the lock).
A build refuses a lock whose pins no longer match ``requirements.txt``.

Entries are sorted and carry the date of the last commit that changed what
goes into the edition's zip (``SOURCE_DATE_EPOCH`` when set; UTC, also in each
entry's extended timestamp), so the zip changes only when its content does, and
JupyterLab's file browser shows a learner how old the course is (a fixed
1980-01-01 showed every file as "Modified 46y ago").
``tests/browser/test_course_download.py`` installs it in a fresh virtual
environment far from this checkout and runs nbval on its notebooks.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FOLDER = "llm-from-scratch-course"
# What a learner's environment needs: the package's own dependencies, the
# kernel (ipykernel, and IPython, whose formatting the stored outputs show),
# JupyterLab and the extension that renders the book's MyST markup.
RUNTIME = ("numpy", "matplotlib", "threadpoolctl", "ipykernel", "ipython", "jupyterlab", "jupyterlab-myst")
PIN = re.compile(r"^([A-Za-z0-9_.-]+)==\S+$")
@dataclass(frozen=True)
class Edition:
    """What differs between the editions' zips: the notebooks and the README."""

    notebooks: str    # the folder of the chapter notebooks, relative to the repository
    readme: str       # the course README
    requirements_comment: tuple[str, ...]  # the head of the zip's requirements.txt


EDITIONS = {
    "ru": Edition("book", "tools/course/README.md", (
        "# Все пакеты курса с точными версиями и хешами (requirements.lock) и сам",
        "# пакет llm_from_scratch: колесо рядом с этим файлом, его хеш записан при",
        "# сборке архива. Установка: см. README.md.",
    )),
    "en": Edition("book/en", "tools/course/README.en.md", (
        "# Every package of the course at an exact version with its hashes",
        "# (requirements.lock), and the llm_from_scratch package itself: the wheel",
        "# next to this file, its hash written when the archive was built.",
        "# To install, see README.md.",
    )),
}
# What goes into the wheel: the date of the last commit that changed one of
# these is the date of the wheel's files, in both editions' zips.
PACKAGE_SOURCES = ("src", "pyproject.toml", "tools/lab")
# What an edition's zip is made of: the date of the last commit that changed
# one of these is the date of every entry. The other edition's notebooks and
# README are not among them (an English README fixed does not re-date the
# Russian zip).
COMMON_SOURCES = ("src", "pyproject.toml", "requirements.txt", "tools")


def edition_sources(edition: str) -> tuple[str, ...]:
    """The git pathspecs of what goes into an edition's zip."""
    others = [other for name, other in EDITIONS.items() if name != edition]
    return (f"{EDITIONS[edition].notebooks}/ch[0-9]*.ipynb", *COMMON_SOURCES,
            *(f":(exclude){other.readme}" for other in others))
LOCK = REPO / "tools" / "course" / "requirements.lock"
# One entry of a pip requirements file as uv writes it: `name==version[ ; marker] \`,
# its `--hash=sha256:...` lines, then `# via` comments naming what requires it.
ENTRY = re.compile(r"^(?P<name>[a-z0-9][a-z0-9._-]*)==(?P<version>[^\s;\\]+)(?: ; (?P<marker>[^\\\n]+?))?\s*\\?$")
HASH = re.compile(r"^\s+--hash=sha256:(?P<hash>[0-9a-f]{64})\s*\\?$")


def chapter_notebooks(edition: str = "ru") -> list[Path]:
    """An edition's chapters: ``book/ch<number>-*.ipynb`` (as the tests find them),
    in the English edition the same names in ``book/en/``, every one of them."""
    names = sorted(path.name for path in (REPO / "book").glob("ch[0-9]*.ipynb"))
    if not names:
        sys.exit("build_course: no chapter notebooks book/ch*.ipynb")
    folder = REPO / EDITIONS[edition].notebooks
    missing = [name for name in names if not (folder / name).is_file()]
    if missing:
        sys.exit(f"build_course: the {edition} edition has no {', '.join(missing)} in "
                 f"{EDITIONS[edition].notebooks}/ (the zips hold the same notebooks)")
    extra = sorted({path.name for path in folder.glob("ch[0-9]*.ipynb")} - set(names))
    if extra:
        sys.exit(f"build_course: {EDITIONS[edition].notebooks}/ has {', '.join(extra)}, "
                 "which book/ has not")
    return [folder / name for name in names]


def normalized(name: str) -> str:
    """A project name as the registry compares it (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def runtime_pins(requirements: str | None = None) -> list[str]:
    """The runtime pins (``name==version``) of requirements.txt, in RUNTIME's order."""
    if requirements is None:
        requirements = (REPO / "requirements.txt").read_text(encoding="utf-8")
    pins = {}
    for line in requirements.splitlines():
        match = PIN.match(line.strip())
        if match:
            name = normalized(match.group(1))
            pins[name] = f"{name}=={line.strip().split('==', 1)[1]}"
    missing = [name for name in RUNTIME if name not in pins]
    if missing:
        sys.exit(f"build_course: requirements.txt pins none of {missing}")
    return [pins[name] for name in RUNTIME]


@dataclass
class Entry:
    """One package of the lock."""

    name: str
    version: str
    marker: str | None
    hashes: list[str]
    required_by: list[str]


def lock_entries(lock: str) -> list[Entry]:
    """The lock's packages with their hashes and what requires them."""
    entries: list[Entry] = []
    via = False
    for line in lock.splitlines():
        if match := ENTRY.match(line):
            entries.append(Entry(match["name"], match["version"], match["marker"], [], []))
            via = False
        elif entries and (match := HASH.match(line)):
            entries[-1].hashes.append(match["hash"])
        elif entries and line.startswith("    # via"):
            # `# via numpy` on one line, or `# via` then one `#   name` a line.
            entries[-1].required_by += line.removeprefix("    # via").split()
            via = True
        elif entries and via and line.startswith("    #   "):
            entries[-1].required_by.append(line.removeprefix("    #   ").strip())
        elif line.strip() and not line.startswith("#"):
            raise ValueError(f"unexpected line in the lock: {line!r}")
    return entries


def lock_problems(lock: str, pins: list[str]) -> list[str]:
    """Why ``lock`` is not the complete lock of ``pins`` (empty when it is).

    Each runtime pin must be in the lock at its version for every platform
    (no marker), every package must carry hashes, and a package that nothing
    in the lock requires must be a runtime pin (else it is left over from an
    older requirements.txt).
    """
    try:
        entries = lock_entries(lock)
    except ValueError as error:
        return [str(error)]
    problems = []
    for pin in pins:
        name = pin.split("==")[0]
        found = [f"{e.name}=={e.version}" + (f" ; {e.marker}" if e.marker else "")
                 for e in entries if e.name == name]
        if found != [pin]:
            problems.append(f"requirements.txt pins {pin}, the lock has {', '.join(found) or 'no ' + name}")
    runtime = {pin.split("==")[0] for pin in pins}
    for entry in entries:
        if not entry.hashes:
            problems.append(f"{entry.name}=={entry.version} has no hash")
        if not entry.required_by and entry.name not in runtime:
            problems.append(f"{entry.name}=={entry.version}: no runtime pin requires it")
    if not entries:
        problems.append("the lock pins no package")
    return problems


def python_floor() -> str:
    """The oldest Python the package supports, from pyproject's requires-python."""
    requires = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["requires-python"]
    match = re.fullmatch(r">=\s*(\d+\.\d+)", requires)
    if not match:
        sys.exit(f"build_course: requires-python {requires!r} is not of the form >=X.Y")
    return match.group(1)


def write_lock() -> None:
    """Resolve the runtime pins for every platform, with hashes, into LOCK (make lock)."""
    uv = Path(sys.executable).with_name("uv")
    env = {key: value for key, value in os.environ.items() if not key.startswith("UV_")}
    subprocess.run(
        [uv, "pip", "compile", "--quiet", "--no-config", "--universal", "--generate-hashes",
         "--python-version", python_floor(), "--custom-compile-command", "make lock",
         "--output-file", LOCK, "-"],
        input="\n".join(runtime_pins()) + "\n", text=True, env=env, cwd=REPO, check=True,
    )
    problems = lock_problems(LOCK.read_text(encoding="utf-8"), runtime_pins())
    if problems:
        sys.exit("build_course: the new lock is incomplete: " + "; ".join(problems))
    entries = lock_entries(LOCK.read_text(encoding="utf-8"))
    print(f"lock: {LOCK.relative_to(REPO)} ({len(entries)} entries)")


def checked_lock() -> bytes:
    """The committed lock, refused when requirements.txt has moved on."""
    lock = LOCK.read_text(encoding="utf-8")
    problems = lock_problems(lock, runtime_pins())
    if problems:
        sys.exit(f"build_course: {os.path.relpath(LOCK, REPO)} is stale, run `make lock`: " + "; ".join(problems))
    return lock.encode()


def course_requirements(wheel: Path, edition: str = "ru") -> str:
    """The zip's requirements.txt: the lock, then the wheel with its hash."""
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    lines = [
        *EDITIONS[edition].requirements_comment,
        "-r requirements.lock",
        f"./{wheel.name} --hash=sha256:{digest}",
    ]
    return "\n".join(lines) + "\n"


def build_wheel(into: Path) -> Path:
    """A wheel of the package, built from a copy so that the checkout stays clean.

    Its files carry the date of the last commit that changed the package
    (``SOURCE_DATE_EPOCH`` for the build backend), not the time of the build:
    each edition's zip builds its own wheel, and they must be one file."""
    source = into / "source"
    source.mkdir()
    shutil.copy2(REPO / "pyproject.toml", source / "pyproject.toml")
    shutil.copytree(REPO / "src", source / "src",
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc"))
    for extra in ("tools/lab",):  # data files the wheel installs (pyproject.toml)
        shutil.copytree(REPO / extra, source / extra)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(into), str(source)],
        check=True, env={**os.environ, "SOURCE_DATE_EPOCH": str(source_date(PACKAGE_SOURCES))},
    )
    (wheel,) = into.glob("llm_from_scratch-*.whl")
    return wheel


def source_date(sources: tuple[str, ...]) -> int:
    """Seconds since the epoch of the last commit that changed ``sources`` (git pathspecs)."""
    if os.environ.get("SOURCE_DATE_EPOCH"):
        return int(os.environ["SOURCE_DATE_EPOCH"])
    try:
        found = subprocess.run(["git", "log", "-1", "--format=%ct", "--", *sources], cwd=REPO,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError) as error:
        sys.exit(f"build_course: no git history to date the zip's files ({error}); set SOURCE_DATE_EPOCH")
    if not found:
        sys.exit("build_course: no commit changed the course's sources; set SOURCE_DATE_EPOCH")
    return int(found)


def add(archive: zipfile.ZipFile, name: str, data: bytes, date: int) -> None:
    # A zip's own date field is a local time without zone: UTC here. The
    # extended timestamp (0x5455: flags, mtime) gives unzip and 7-Zip the instant.
    info = zipfile.ZipInfo(f"{FOLDER}/{name}", date_time=time.gmtime(date)[:6])
    info.extra = struct.pack("<HHBl", 0x5455, 5, 1, date)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    archive.writestr(info, data)


def build(out: Path, edition: str = "ru") -> None:
    notebooks = chapter_notebooks(edition)
    lock = checked_lock()
    date = source_date(edition_sources(edition))
    with tempfile.TemporaryDirectory() as tmp:
        wheel = build_wheel(Path(tmp))
        files = {path.name: path.read_bytes() for path in notebooks}
        files[wheel.name] = wheel.read_bytes()
        files["requirements.lock"] = lock
        files["requirements.txt"] = course_requirements(wheel, edition).encode()
        files["README.md"] = (REPO / EDITIONS[edition].readme).read_bytes()
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_suffix(".partial")
    with zipfile.ZipFile(partial, "w") as archive:
        for name in sorted(files):
            add(archive, name, files[name], date)
    partial.replace(out)
    print(f"course ({edition}): {out} ({', '.join(sorted(files))})")


if __name__ == "__main__":
    arguments = sys.argv[1:]
    if arguments == ["--lock"]:
        write_lock()
    elif len(arguments) == 1 and not arguments[0].startswith("-"):
        build(Path(arguments[0]))
    elif len(arguments) == 3 and arguments[0] == "--edition" and arguments[1] in EDITIONS:
        build(Path(arguments[2]), arguments[1])
    else:
        sys.exit(__doc__)
