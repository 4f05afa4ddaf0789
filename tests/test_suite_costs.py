"""tools/suite_costs.py sorts a JUnit report's test cases into the README's suites."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import suite_costs

REPORT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" time="9.5">
<testcase classname="tests.test_layers" name="a" file="tests/test_layers.py" time="0.5"/>
<testcase classname="book.ch30" name="Cell 0" file="book/ch30-checks.ipynb" time="2.0"/>
<testcase classname="book.en.ch30" name="Cell 0" file="book/en/ch30-checks.ipynb" time="3.0"/>
<testcase classname="tests.browser.test_jupyterlab" name="b"
          file="tests/browser/test_jupyterlab.py" time="4.0"/>
<testcase classname="tests.browser.test_reading_limits" name="c"
          file="tests/browser/test_reading_limits.py" time="1.0"/>
<testcase classname="tests.test_notebook_habits" name="d"
          file="tests/test_notebook_habits.py" time="6.0"/>
</testsuite></testsuites>
"""


def test_each_case_counts_once_in_its_suite(tmp_path):
    report = tmp_path / "times.xml"
    report.write_text(REPORT, encoding="utf-8")
    seconds, counts, wall = suite_costs.costs(report)
    assert seconds == {"unit: package and conventions": 0.5, "nbval, Russian edition": 2.0,
                       "nbval, English edition": 3.0,
                       "browser: JupyterLab (Run All, 3 runs)": 4.0,
                       "browser: built site in Chromium": 1.0,
                       "habits: run twice, sections alone": 6.0}
    assert sum(counts.values()) == 6 and wall == 9.5


def test_a_missing_report_is_answered_not_raised(tmp_path, capsys):
    assert suite_costs.main(["suite_costs.py", str(tmp_path / "none.xml")]) == 1
    assert "run `make test` first" in capsys.readouterr().out


@pytest.mark.parametrize("text, message", [
    ("", "not a JUnit XML report"),
    ("<a", "not a JUnit XML report"),
    ("<testsuites/>", "holds no test cases"),
    ('<testsuite time="1"><testcase name="t" time="abc"/></testsuite>', "must be a number of seconds"),
    ('<testsuite time="nan"><testcase name="t" time="1"/></testsuite>', "between 0 and 1e9"),
])
def test_a_report_it_cannot_read_gets_a_message_and_exit_1(tmp_path, capsys, text, message):
    report = tmp_path / "times.xml"
    report.write_text(text, encoding="utf-8")
    assert suite_costs.main(["suite_costs", str(report)]) == 1
    assert message in capsys.readouterr().out


def test_a_build_seconds_file_it_cannot_read_gets_a_message(tmp_path, capsys):
    report, seconds = tmp_path / "times.xml", tmp_path / "build.seconds"
    report.write_text(REPORT, encoding="utf-8")
    seconds.write_text("soon", encoding="utf-8")
    assert suite_costs.main(["suite_costs", str(report), str(seconds)]) == 1
    assert "a time must be a number of seconds, got 'soon'" in capsys.readouterr().out
