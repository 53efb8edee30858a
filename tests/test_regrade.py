"""Does re-grading a few students keep the whole class in every class file?

An instructor grades a class, then re-grades one student (naming their file, or `--only ID`): the
results of earlier runs are kept in --out, and grades.csv, report.html, the exports and the release are
written from all of them, so no student drops out of the class's files.
"""

import csv
import json
import shutil

import pytest

from autograder.selection import class_rows
from tests.conftest import EXAMPLES, autograder

pytestmark = pytest.mark.slow


def grades(out) -> dict[str, str]:
    with open(out / "grades.csv", newline="") as f:
        return {row["submission"]: row["score"] for row in csv.DictReader(f)}


def grade(out, *args, check=True):
    return autograder("grade", "--assignment", "custom-functions", "--out", out, "--quiet", *args,
                      check=check)


def test_regrading_one_student_keeps_the_class(tmp_path):
    """Graded as a class, then bob's resubmission graded alone (his file named), then carol with --only:
    does every class file still hold the three students, with bob's new score, and is --only checked?"""
    folder = tmp_path / "class"
    folder.mkdir()
    for name, source in (("alice", "alice.py"), ("bob", "bob.py"), ("carol", "bob.py")):
        shutil.copy(EXAMPLES / source, folder / f"{name}.py")
    out = tmp_path / "out"
    grade(out, folder)
    first = grades(out)
    assert set(first) == {"alice", "bob", "carol"} and first["alice"] == "50" and first["bob"] != "50"

    shutil.copy(EXAMPLES / "alice.py", folder / "bob.py")  # bob resubmits, right this time
    said = grade(out, folder / "bob.py").stderr.replace("\n  ", " ")
    assert "1 of this run and 2 graded earlier" in said
    second = grades(out)
    assert second == {**first, "bob": "50"}
    report = (out / "report.html").read_text()
    assert all(f">{sid}<" in report for sid in ("alice", "bob", "carol"))
    autograder("export", "--graded", out, "--csv", tmp_path / "plain.csv")
    with open(tmp_path / "plain.csv", newline="") as f:
        assert {r["id"]: r["total"] for r in csv.DictReader(f)} == second
    autograder("release", "--graded", out, "--to", tmp_path / "release")
    assert {p.name for p in (tmp_path / "release").iterdir() if p.is_dir()} == set(second)

    before = (out / "grades.csv").read_bytes()
    said = grade(out, folder, "--only", "carol").stderr.replace("\n  ", " ")
    assert "1 of the 3 submission(s) found graded again (--only)" in said
    assert json.loads((out / "carol" / "results.json").read_text())["score"] == float(first["carol"])
    assert (out / "grades.csv").read_bytes() == before  # the same files as grading the class

    refused = grade(out, folder, "--only", "carl", check=False)
    message = refused.stderr.replace("\n  ", " ")
    assert refused.returncode == 2 and "--only names carl" in message and "did you mean carol?" in message
    assert "Traceback" not in message and grades(out) == second


def test_the_class_is_this_assignments_results_in_out(tmp_path):
    """Are results of another assignment, and folders that are not results, left out of the class?"""
    for sid, assignment in (("ann", "custom-functions"), ("ben", "gradcheck"), ("cy", "custom-functions")):
        (tmp_path / sid).mkdir()
        (tmp_path / sid / "results.json").write_text(json.dumps(
            {"score": 1, "tests": [], "extra_data": {"assignment": assignment, "submission": sid}}))
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "results.json").write_text("{not json")
    this_run = {"cy": {"score": 2}}
    assert class_rows(tmp_path, "custom-functions", this_run) == {
        "cy": {"score": 2}, "ann": json.loads((tmp_path / "ann" / "results.json").read_text())}
