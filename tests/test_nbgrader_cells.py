"""Are nbgrader's read-only cells (the instructor's helpers and tests, which may inspect a Function as a
test does) left out of the source read for reaches, while what any cell does as it runs is still watched?
A grading helper of nbgrader's kind (`globals()`, `fn.__dict__`) flagged every student of such a class."""

import nbformat
import pytest

from autograder.course import find_assignment
from autograder.intake.loader import load
from autograder.judge.checks import max_score
from autograder.judge.reaching import scan
from autograder.pipeline import Pipeline
from autograder.sandbox import Limits
from tests.conftest import ALICE

ASSIGNMENT = find_assignment("custom-functions")
HELPER = ('def _grade(name):\n    fn = globals().get(name)\n    return "backward" in fn.__dict__\n')
REACH = "import sys\nloop = sys._getframe(1)  # the frame above: the grader's\n"


def nbgrader_notebook(path, helper: str):
    """A released nbgrader notebook: a read-only helper cell, the student's answer, a read-only test."""
    def meta(grade_id, **flags):
        return {"nbgrader": {"grade": False, "grade_id": grade_id, "locked": False, "schema_version": 3,
                             "solution": False, **flags}}
    cells = [nbformat.v4.new_code_cell(helper, metadata=meta("helpers", locked=True)),
             nbformat.v4.new_code_cell(ALICE.read_text(), metadata=meta("answer", solution=True)),
             nbformat.v4.new_code_cell('assert _grade("KillHead")',
                                       metadata=meta("tests", grade=True, locked=True, points=1))]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    return path


def test_read_only_cells_are_known_and_not_read_for_reaches(tmp_path):
    (sub,) = load([nbgrader_notebook(tmp_path / "ann.ipynb", HELPER)], ("02-custom-functions",))
    assert sub.read_only == [0, 2]
    assert scan(sub.cells) != []  # the helper, read as a student's cell, reaches
    assert scan(sub.cells, sub.modules, frozenset(i + 1 for i in sub.read_only)) == []


@pytest.mark.slow
def test_the_helper_costs_nothing_and_a_reach_in_a_read_only_cell_is_still_seen(tmp_path):
    paths = [nbgrader_notebook(tmp_path / "helper.ipynb", HELPER),
             nbgrader_notebook(tmp_path / "reach.ipynb", HELPER + REACH)]
    subs = load(paths, ("02-custom-functions",))
    with Pipeline(ASSIGNMENT, Limits(load_seconds=30), workers=2) as pipeline:
        graded = {sub.id: g for sub, g in pipeline.grade(subs)}
    assert graded["helper"].flag is None and graded["helper"].score == max_score(ASSIGNMENT)
    flag = graded["reach"].flag
    assert flag is not None and graded["reach"].score == 0
    assert all(e.how.startswith("while running") for e in flag.evidence), flag.evidence
