"""Do the lessons and the grader agree: full marks for solutions/, zero for the untouched course/?"""

import json

import pytest

from autograder.course.assignments.registry import BUILTIN
from autograder.judge.checks import max_score
from tests.conftest import ROOT, autograder

pytestmark = [pytest.mark.slow, pytest.mark.stack]  # on every torch the course supports


@pytest.mark.parametrize("assignment", sorted(BUILTIN, key=lambda a: a.name), ids=lambda a: a.name)
def test_solution_full_marks_student_zero(tmp_path, assignment):
    """Does the solution notebook score full marks, and the untouched student notebook zero, without a
    crash?"""
    lesson = assignment.lesson
    solution, student = tmp_path / "solution.ipynb", tmp_path / "student.ipynb"
    solution.write_bytes((ROOT / "solutions" / f"{lesson}.ipynb").read_bytes())
    student.write_bytes((ROOT / "course" / f"{lesson}.ipynb").read_bytes())
    out = tmp_path / "out"
    autograder("grade", "--assignment", assignment.name, "--out", out, "--quiet", solution, student)
    graded = {sid: json.loads((out / sid / "results.json").read_text()) for sid in ("solution", "student")}
    failed = [t["name"] + ": " + t["output"][:300] for t in graded["solution"]["tests"]
              if t["status"] != "passed"]
    assert not failed, failed
    assert graded["solution"]["score"] == max_score(assignment)
    assert graded["student"]["score"] == 0
