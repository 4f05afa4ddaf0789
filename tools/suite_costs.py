"""What each part of `make test` cost: worker-seconds per suite, from pytest's JUnit report.

`make test` writes _build/test-times.xml (pytest's --junitxml, xunit1, so every test case names its
file). The suites are the README's: the package's unit tests, nbval per edition, the learner-habit
kernels, and the browser modules (JupyterLab, the downloaded course, the rest). A test's time is the
time its worker spent on it (setup, call and teardown), so the suites add up to more than the wall
clock when two workers run side by side.

    python tools/suite_costs.py [_build/test-times.xml [_build/html-build.seconds]]

The second file, when given, holds the seconds the strict build of both editions took beside the
tests (`make test` writes it); it is printed apart, since it runs in its own processes.
"""

import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path


def suite(path: str) -> str:
    name = Path(path).name
    if path.startswith("book/en/"):
        return "nbval, English edition"
    if path.startswith("book/"):
        return "nbval, Russian edition"
    if name == "test_jupyterlab.py":
        return "browser: JupyterLab (Run All, 3 runs)"
    if name == "test_course_download.py":
        return "browser: course zips in fresh venvs"
    if "/browser/" in path:
        return "browser: built site in Chromium"
    if name in ("test_notebook_habits.py", "test_notebook_rules.py"):
        return "habits: run twice, sections alone"
    return "unit: package and conventions"


class ReportError(ValueError):
    """A report or seconds file this tool cannot read: the file and what is wrong."""


def seconds_of(text: object, where: str) -> float:
    """A time in seconds: a finite number >= 0."""
    try:
        value = float(str(text).strip())
    except ValueError:
        raise ReportError(f"{where}: a time must be a number of seconds, got {str(text)[:40]!r}") from None
    if not 0.0 <= value < 1e9:                      # NaN fails both comparisons
        raise ReportError(f"{where}: a time must be between 0 and 1e9 seconds, got {value}")
    return value


def costs(report: Path) -> tuple[dict[str, float], dict[str, int], float]:
    try:
        root = ET.parse(report).getroot()
    except ET.ParseError as error:
        raise ReportError(f"{report}: not a JUnit XML report ({error})") from None
    seconds: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    for case in root.iter("testcase"):
        where = case.get("file") or case.get("classname", "").replace(".", "/")
        seconds[suite(where)] += seconds_of(case.get("time", 0.0), f"{report}: test {case.get('name')!r:.80}")
        counts[suite(where)] += 1
    if not counts:
        raise ReportError(f"{report}: the report holds no test cases")
    wall = sum(seconds_of(s.get("time", 0.0), f"{report}: suite {s.get('name')!r:.80}")
               for s in root.iter("testsuite"))
    return seconds, counts, wall


def main(argv: list[str]) -> int:
    report = Path(argv[1] if len(argv) > 1 else "_build/test-times.xml")
    if not report.is_file():
        print(f"no report at {report}: run `make test` first")
        return 1
    try:
        seconds, counts, wall = costs(report)
        build = Path(argv[2]) if len(argv) > 2 else None
        built = (seconds_of(build.read_text(errors="replace"), str(build))
                 if build is not None and build.is_file() else None)
    except (ReportError, OSError) as error:
        print(f"cannot read the suite costs: {error}")
        return 1
    build_label = "make html beside the tests (wall clock)"
    width = max(len(build_label), *map(len, seconds))
    for name, spent in sorted(seconds.items(), key=lambda item: -item[1]):
        print(f"{name:<{width}}  {counts[name]:5d} tests  {spent:7.1f} s")
    print(f"{'all suites (worker-seconds)':<{width}}  {sum(counts.values()):5d} tests  "
          f"{sum(seconds.values()):7.1f} s; pytest's wall clock {wall:.1f} s")
    if built is not None:
        print(f"{build_label:<{width}}  {'':11}  {built:7.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
