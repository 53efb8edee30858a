"""Does `python -m autograder` keep its contract: list, grade, results.json, feedback.html, grades.csv?"""

import csv
import json
from pathlib import Path

import jsonschema
import pytest

from tests.conftest import EXAMPLES, GRADESCOPE_SCHEMA, autograder


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    out = tmp_path_factory.mktemp("graded")
    autograder("grade", "--assignment", "custom-functions", "--out", out, "--quiet", EXAMPLES)
    return out


def results(out: Path, sid: str) -> dict:
    return json.loads((out / sid / "results.json").read_text())


def test_list_json_names_problems_and_points():
    """Does `list --json` print every assignment with its problems and maximum score?"""
    listed = json.loads(autograder("list", "--json").stdout)
    by_name = {a["name"]: a for a in listed}
    assert by_name["custom-functions"]["problems"] == ["KillHead", "MyReLU", "Exp", "LinearFunction"]
    assert by_name["double-backward"]["problems"] == ["Square", "Sinh", "Cube", "GradientPenalty",
                                                      "HessianVectorProduct"]
    assert by_name["gradcheck"]["problems"] == ["Something", "LogSumExp", "LayerNorm", "ScipyConv2dFunction",
                                              "SoftmaxCrossEntropy"]
    assert by_name["conv-bn-fusion"]["problems"] == ["BatchNorm"]
    assert all(a["max_score"] > 0 for a in listed)


def test_results_follow_gradescope_format(graded):
    """Does every results.json validate against Gradescope's results fields?"""
    for sid in ("alice", "bob", "carol", "erin"):
        jsonschema.validate(results(graded, sid), GRADESCOPE_SCHEMA)


def test_right_submission_gets_full_marks(graded):
    """Does a right submission pass every check, named '<Problem>: <check>'?"""
    alice = results(graded, "alice")
    assert all(t["status"] == "passed" for t in alice["tests"])
    assert alice["score"] == sum(t["max_score"] for t in alice["tests"]) > 0
    assert "KillHead: gradcheck" in {t["name"] for t in alice["tests"]}


def test_wrong_submission_is_explained(graded):
    """Does a subtly wrong submission lose the right checks, each with its reason?"""
    tests = {t["name"]: t for t in results(graded, "bob")["tests"]}
    assert "columns 0, 2" in tests["KillHead: gradient"]["output"]
    assert "wrong sign" in tests["MyReLU: gradient"]["output"]
    assert "cannot follow" in tests["Exp: gradgradcheck"]["output"]
    assert "2 times" in tests["LinearFunction: gradient"]["output"]
    assert "GradcheckError" in tests["KillHead: gradcheck"]["output"]  # (bob's Exp passes gradcheck)


def test_broken_cells_do_not_stop_later_cells(graded):
    """Does a cell that raises get reported while later cells still define their classes?"""
    carol = {t["name"]: t for t in results(graded, "carol")["tests"]}
    assert carol["KillHead: gradient"]["status"] == "passed"
    assert carol["Exp: gradgradcheck"]["status"] == "passed"
    assert "not defined" in carol["MyReLU: forward"]["output"]
    assert "raised an error" in carol["MyReLU: forward"]["output"]
    page = (graded / "carol" / "feedback.html").read_text()
    assert "SyntaxError" in page and "NameError" in page


def test_unreadable_notebook_gets_a_result(graded):
    """Does a corrupt notebook get every problem failed with a clear reason, not a crash?"""
    erin = results(graded, "erin")
    assert erin["score"] == 0
    assert all("not a readable Jupyter notebook" in t["output"] for t in erin["tests"])


def test_missing_problem_still_appears(graded):
    """Does a problem missing from a submission still appear, failed, saying so?"""
    names = {t["name"] for t in results(graded, "erin")["tests"]}
    assert {"KillHead: forward", "LinearFunction: gradcheck"} <= names


def test_grades_csv_has_one_row_per_submission(graded):
    """Does grades.csv hold submission,score,max_score and one column per problem, then the columns of
    grading.toml's adjustments and late work (docs/instructors.md)?"""
    rows = list(csv.reader((graded / "grades.csv").open()))
    assert rows[0] == ["submission", "score", "max_score", "KillHead", "MyReLU", "Exp", "LinearFunction",
                       "graded", "adjustments", "late_penalty", "late", "flagged"]
    by_id = {r[0]: r for r in rows[1:]}
    assert set(by_id) == {"alice", "bob", "carol", "erin"}
    assert by_id["alice"][1] == by_id["alice"][2]
    assert float(by_id["erin"][1]) == 0


def test_feedback_page_is_self_contained(graded):
    """Is feedback.html one offline page, with its pictures inline as SVG?"""
    page = (graded / "bob" / "feedback.html").read_text()
    assert page.count("<svg") >= 3
    assert "src=\"http" not in page and "href=\"http" not in page
    assert "ExpBackward" in page  # the graph under Exp's second derivatives (none under a first one's)
    assert "KillHeadBackward" not in page


@pytest.mark.parametrize(("args", "phrase"), [
    (("grade", "--assignment", "nope", "--out", "OUT", "examples"), "There is no assignment called 'nope'"),
    (("grade", "--assignment", "gradcheck", "--out", "OUT", "EMPTY"), "No submissions found"),
    (("grade", "--assignment", "gradcheck", "--out", "FILE/sub", "examples"),
     "Cannot write to the output folder"),
    (("grade", "--assignment", "gradcheck"), "required"),
])
def test_usage_errors_are_one_clear_paragraph(tmp_path, args, phrase):
    """Does a usage error exit non-zero with a one-paragraph message and no traceback?"""
    (tmp_path / "EMPTY").mkdir()
    (tmp_path / "FILE").write_text("")
    real = [str(tmp_path / a) if a in ("OUT", "EMPTY") or a.startswith("FILE") else a for a in args]
    result = autograder(*real, check=False)
    assert result.returncode == 2
    assert phrase in result.stderr.replace("\n  ", " ")
    assert "Traceback" not in result.stderr
