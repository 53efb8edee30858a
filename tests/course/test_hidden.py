"""Do hidden problems and checks stay hidden from students, while still being graded?"""

import json
import runpy
from pathlib import Path

import pytest

from autograder.course.assignments.registry import UnknownProblem, for_notebooks, load
from autograder.inline import check
from autograder.judge.checks import max_score
from autograder.judge.reference import reference_data
from autograder.judge.validate import InvalidAssignment, validate
from autograder.judge.verdicts import judge
from tests.conftest import ALICE, HIDDEN_TESTS, ROOT, autograder

EXAMPLE = HIDDEN_TESTS


@pytest.fixture()
def notebook_extra(tmp_path, monkeypatch):
    """Has check() load an instructor's file, as AUTOGRADER_EXTRA does in a notebook's environment."""
    monkeypatch.delenv("AUTOGRADER_EXTRA", raising=False)

    def use(source: str | Path) -> None:
        path = source if isinstance(source, Path) else tmp_path / "extra.py"
        if not isinstance(source, Path):
            path.write_text("from autograder.course import hide\n" + source)
        monkeypatch.setenv("AUTOGRADER_EXTRA", str(path))

    return use


@pytest.fixture(scope="module")
def alice():
    """A right submission's Functions."""
    return runpy.run_path(str(ALICE))


def test_hidden_check_is_graded_but_not_shown_by_check(alice, notebook_extra):
    """Is a hidden check still judged and scored, yet absent from what check() shows?"""
    notebook_extra('hide("custom-functions", "Exp: gradgradcheck")\n')
    problem = for_notebooks().find_problem("Exp")
    graded = judge(problem, {"defined": False})
    assert [r.hidden for r in graded if r.check == "gradgradcheck"] == [True]
    assert sum(r.max_score for r in graded) == max_score(problem)  # it still counts
    report = check(alice["Exp"])
    assert report.passed
    shown = [r.check for r in report.results]
    assert "gradgradcheck" not in shown and "gradcheck" in shown
    assert "gradgradcheck" not in repr(report)
    assert "gradgradcheck" not in report._repr_html_()
    # what the notebook knows: its own checks pass; the grade may hold more (otter-grader issue 138)
    for shown_text in (repr(report), report._repr_html_()):
        assert "check(Exp): all checks of this notebook pass" in shown_text
        assert "marks" not in shown_text.lower()


def test_hidden_problem_is_unknown_to_check(alice, notebook_extra):
    """Does check() treat a hidden problem as unknown, and leave it out of the names it suggests?"""
    notebook_extra('hide("custom-functions", "Exp")\n')
    with pytest.raises(UnknownProblem) as raised:
        check(alice["Exp"])
    suggested = str(raised.value).split("The graded names are: ", 1)[1].split(". ", 1)[0].split(", ")
    assert "Exp" not in suggested and "KillHead" in suggested  # LogSumExp may be there: names, not text
    assert for_notebooks().find_problem("Exp").hidden  # the grader still finds it


def test_hiding_something_that_does_not_exist_says_what_exists():
    """Does a typo in hide() fail with the problems or checks that do exist?"""
    registry = load()
    with pytest.raises(LookupError, match="its problems are KillHead, MyReLU"):
        registry.hide("custom-functions", "Expo")
    registry.hide("custom-functions", "Exp: gradgradchek")  # a check's name is known to the judgement
    with pytest.raises(InvalidAssignment, match="'gradgradchek', which the problem does not ask; it asks .*"
                                                "gradgradcheck"):
        validate(registry.find_assignment("custom-functions"))


def test_example_file_adds_a_hidden_problem_on_other_shapes(alice, notebook_extra):
    """Does the documented example hide Exp's gradgradcheck and add a hidden LinearFunction problem whose
    reference is measured on its own shapes, leaving check(LinearFunction) as it was?"""
    before = check(alice["LinearFunction"]).results
    notebook_extra(EXAMPLE)
    assignment = for_notebooks().find_assignment("custom-functions")
    extra = assignment.problems[-1]
    assert (extra.name, extra.lookup, extra.hidden) == ("LinearFunction, other shapes", "LinearFunction",
                                                        True)
    assert len(reference_data(extra)["cases"]) == 2
    after = check(alice["LinearFunction"])
    assert [r.name for r in after.results] == [r.name for r in before]
    assert "other shapes" not in repr(after) + after._repr_html_()


def test_broken_extra_file_is_a_clear_error(tmp_path):
    """Does an extension file that raises name the file and the error?"""
    bad = tmp_path / "hidden.py"
    bad.write_text("raise RuntimeError('oops')\n")
    with pytest.raises(LookupError, match="hidden.py failed at line 1: RuntimeError: oops"):
        load([bad])


def test_list_marks_hidden_problems_for_instructors():
    """Does `list --extra FILE` show instructors which problems and checks are hidden?"""
    result = autograder("list", "--extra", EXAMPLE, timeout=300)
    assert "LinearFunction, other shapes" in result.stdout and "[hidden]" in result.stdout
    assert "[hidden checks: gradgradcheck]" in result.stdout
    listed = json.loads(autograder("list", "--json", timeout=300).stdout)
    assert all("other shapes" not in p for a in listed for p in a["problems"])  # only with --extra


def test_student_notebooks_never_check_hidden_problems():
    """Does no student notebook call check() on a problem the package marks hidden, or name a hidden
    check of one?"""
    assignments = load().assignments.values()
    hidden_problems = [p for a in assignments for p in a.problems if p.hidden]
    hidden_checks = [(p, c) for a in assignments for p in a.problems for c in p.hidden_checks]
    for notebook in sorted((ROOT / "course").glob("*.ipynb")):
        text = notebook.read_text(encoding="utf-8")
        for p in hidden_problems:
            assert f"check({p.lookup}" not in text, f"{notebook.name} checks hidden problem {p.name}"
        for p, c in hidden_checks:
            assert f"{p.name}: {c}" not in text, f"{notebook.name} shows hidden check {p.name}: {c}"
