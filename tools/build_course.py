"""Build the downloadable course: one zip a learner unpacks anywhere.

    python tools/build_course.py _build/course/llm-from-scratch-course.zip

The zip holds one folder ``llm-from-scratch-course/`` with

* the chapter notebooks ``book/ch<number>-*.ipynb`` with their stored outputs,
* a wheel of ``llm_from_scratch`` built from this checkout,
* ``requirements.txt``: the runtime pins copied from the repository's
  ``requirements.txt`` (one source of versions) and the wheel by relative path,
* ``README.md`` (Russian, ``tools/course/README.md``): two commands.

Entries are sorted and dated 1980-01-01, so the zip changes only when its
content does. ``tests/browser/test_course_download.py`` installs it in a fresh
virtual environment far from this checkout and runs nbval on its notebooks.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FOLDER = "llm-from-scratch-course"
# What a learner's environment needs: the package's own dependencies, the
# kernel (ipykernel, and IPython, whose formatting the stored outputs show),
# JupyterLab and the extension that renders the book's MyST markup.
RUNTIME = ("numpy", "matplotlib", "ipykernel", "ipython", "jupyterlab", "jupyterlab-myst")
PIN = re.compile(r"^([A-Za-z0-9_.-]+)==\S+$")
STAMP = (1980, 1, 1, 0, 0, 0)


def chapter_notebooks() -> list[Path]:
    """The chapters: ``book/ch<number>-*.ipynb`` (as the tests find them)."""
    notebooks = sorted((REPO / "book").glob("ch[0-9]*.ipynb"))
    if not notebooks:
        sys.exit("build_course: no chapter notebooks book/ch*.ipynb")
    return notebooks


def runtime_requirements(wheel_name: str) -> str:
    """The runtime pins of the repository's requirements.txt, then the wheel."""
    pins = {}
    for line in (REPO / "requirements.txt").read_text(encoding="utf-8").splitlines():
        match = PIN.match(line.strip())
        if match:
            pins[match.group(1).lower().replace("_", "-")] = line.strip()
    missing = [name for name in RUNTIME if name not in pins]
    if missing:
        sys.exit(f"build_course: requirements.txt pins none of {missing}")
    lines = [
        "# Зависимости курса с точными версиями и сам пакет llm_from_scratch",
        "# (колесо рядом с этим файлом). Установка: см. README.md.",
        *(pins[name] for name in RUNTIME),
        f"./{wheel_name}",
    ]
    return "\n".join(lines) + "\n"


def build_wheel(into: Path) -> Path:
    """A wheel of the package, built from a copy so that the checkout stays clean."""
    source = into / "source"
    source.mkdir()
    shutil.copy2(REPO / "pyproject.toml", source / "pyproject.toml")
    shutil.copytree(REPO / "src", source / "src",
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc"))
    for extra in ("tools/lab",):  # data files the wheel installs (pyproject.toml)
        shutil.copytree(REPO / extra, source / extra)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(into), str(source)],
        check=True,
    )
    (wheel,) = into.glob("llm_from_scratch-*.whl")
    return wheel


def add(archive: zipfile.ZipFile, name: str, data: bytes) -> None:
    info = zipfile.ZipInfo(f"{FOLDER}/{name}", date_time=STAMP)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    archive.writestr(info, data)


def build(out: Path) -> None:
    notebooks = chapter_notebooks()
    with tempfile.TemporaryDirectory() as tmp:
        wheel = build_wheel(Path(tmp))
        files = {path.name: path.read_bytes() for path in notebooks}
        files[wheel.name] = wheel.read_bytes()
        files["requirements.txt"] = runtime_requirements(wheel.name).encode()
        files["README.md"] = (REPO / "tools" / "course" / "README.md").read_bytes()
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_suffix(".partial")
    with zipfile.ZipFile(partial, "w") as archive:
        for name in sorted(files):
            add(archive, name, files[name])
    partial.replace(out)
    print(f"course: {out} ({', '.join(sorted(files))})")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    build(Path(sys.argv[1]))
