"""Is a student's page fit to send: titled with their name, saying which file was graded and which were
not (and why), each cause said once with the checks it affects, the points of hidden tests stated,
tracebacks with the student's frames only (never the grader's, never cut at their start), and cells
numbered as Jupyter shows them?"""

import html
import re
from pathlib import Path

from autograder.cells import name, shortened, student_frames
from autograder.intake.loader import Submission
from autograder.judge.verdicts import CheckResult
from autograder.pipeline import about
from autograder.report.pages import feedback_page

MISSING = "KillHead is not defined in the submission."


def text(page: str) -> str:
    page = re.sub(r"<(style|script)\b.*?</\1>", "", page, flags=re.DOTALL)
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page)))


def results() -> list[CheckResult]:
    missing = [CheckResult("KillHead", check, False, 2, MISSING)
               for check in ("forward", "gradient", "gradcheck")]
    return missing + [CheckResult("MyReLU", "forward", True, 2),
                      CheckResult("MyReLU", "gradient", False, 3, "The gradient has the wrong sign."),
                      CheckResult("Hidden", "forward", True, 11, hidden=True)]


def test_a_repeated_cause_is_said_once_naming_the_checks_it_affects():
    page = text(feedback_page("Grace Hopper", "custom-functions", results(), [], ""))
    assert page.count(MISSING) == 1
    assert "Affects: KillHead (all 3 checks)." in page and page.count("Cause 1, above.") == 3
    assert page.count("The gradient has the wrong sign.") == 1  # said by one check only: in its row


def test_the_score_states_the_hidden_points_and_the_title_is_the_students_name():
    page = feedback_page("Grace Hopper", "custom-functions", results(), [], "")
    assert "<title>custom-functions: feedback for Grace Hopper</title>" in page
    assert ("Score: 2 / 11 on the checks shown here . The assignment is out of 22: 11 more points are in "
            "hidden tests, graded but not shown here, so this is not your final score") in text(page)
    assert "Hidden" not in text(page)
    without = text(feedback_page("x", "custom-functions", results()[:-1], [], ""))
    assert "Score: 2 / 11 ." in without and "hidden tests" not in without


def test_the_page_says_which_file_was_graded_and_which_were_not():
    sub = Submission("smithjohn_1_2_hw-1", Path("smithjohn_1_2_hw-1.ipynb"), modules={"helpers.py": ""},
                     ignored=["smithjohn_1_2_hw.ipynb: not graded: an earlier upload of hw.ipynb"],
                     identity={"name": "smithjohn", "late": True, "resubmission": 1})
    lines = about(sub)
    assert lines == ["Graded: smithjohn_1_2_hw-1.ipynb, with helpers.py beside it.",
                     "smithjohn_1_2_hw.ipynb: not graded: an earlier upload of hw.ipynb.",
                     "Canvas marks this submission late.",
                     "Canvas numbers this file as upload -1: the latest one is graded."]
    page = text(feedback_page("smithjohn", "custom-functions", results(), [], "", about=lines))
    assert all(line in page for line in lines)


SYNTAX = '''Traceback (most recent call last):
  File "autograder/sandbox/worker.py", line 170, in run
    exec_(compile_(source, filename, "exec"), namespace)  # this is the job
  File "<cell 1>", line 1
    def f(:
          ^
SyntaxError: invalid syntax'''
LIBRARY = '''Traceback (most recent call last):
  File "<cell 2>", line 3, in <module>
    y = helper(x)
  File "helpers.py", line 2, in helper
    return torch.mm(x, x)
  File "<python>/lib/python3.11/site-packages/torch/functional.py", line 10, in mm
    raise RuntimeError(message)
RuntimeError: mat1 and mat2 shapes cannot be multiplied'''


def test_tracebacks_show_the_students_frames_only_numbered_as_jupyter_does():
    sub = Submission("s", Path("s.ipynb"), positions=[3, 5])
    assert student_frames(SYNTAX, sub) == ('  File "<cell 3>", line 1\n    def f(:\n          ^\n'
                                           'SyntaxError: invalid syntax')
    shown = student_frames(LIBRARY, sub)
    assert "site-packages" not in shown and "raise RuntimeError(message)" not in shown
    assert shown.startswith("Traceback (most recent call last):\n  [1 frame(s) of Python's or a library's")
    assert '  File "<cell 5>", line 3' in shown and '"helpers.py", line 2' in shown
    assert shown.endswith("RuntimeError: mat1 and mat2 shapes cannot be multiplied")
    assert name(sub, 2) == "Cell 5 (code cell 2)" and name(Submission("p", Path("p.py")), 1) == "Cell 1"


def test_a_long_traceback_keeps_its_start_and_its_error_line():
    long = "Traceback (most recent call last):\n" + "x" * 10_000 + "\nValueError: the end"
    kept = shortened(long, 3000)
    assert len(kept) <= 3000 and kept.startswith("Traceback") and kept.endswith("ValueError: the end")


def test_the_class_report_lists_files_not_graded_and_cells_left_out():
    from autograder.course import find_assignment
    from autograder.report.classreport import class_report

    skipped = "Cell 92 (code cell 42), which starts with `import os`, exited with status 3 ..."
    rows = [("erin", {"score": 50, "tests": [], "extra_data": {
                "file": "my_solution.ipynb", "not_graded": ["02-custom-functions.ipynb: not graded: ..."]}}),
            ("dan", {"score": 50, "tests": [],
                     "extra_data": {"file": "hw.ipynb", "skipped_cells": [skipped]}}),
            ("alice", {"score": 50, "tests": [], "extra_data": {"file": "hw.ipynb"}})]
    page = text(class_report(find_assignment("custom-functions"), rows))
    section = page.split("Files not graded, and cells left out")[1]
    assert "erin my_solution.ipynb 02-custom-functions.ipynb: not graded: ..." in section
    assert f"dan hw.ipynb {skipped}" in section and "alice" not in section
