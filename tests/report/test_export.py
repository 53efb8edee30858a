"""Does the grade export write what Canvas's gradebook import expects, matched to the right students?"""

import csv
import io
import json

import pytest

from autograder.report.export import ExportError, canvas_csv, canvas_user_id, export_canvas, read_graded
from tests.conftest import ROOT, autograder

HEADER = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]


def rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


@pytest.fixture()
def graded(tmp_path):
    """A folder as `grade` leaves it: grades.csv and one results.json per submission."""
    folder = tmp_path / "graded"
    folder.mkdir()
    table = [("alice", 38, 38), ("bob", 19, 38), ("smithjohn_LATE_4242_998877_02-custom-functions", 30, 38),
             ("stranger", 10, 38)]
    lines = ["submission,score,max_score,KillHead"] + [f"{s},{score},{best},0" for s, score, best in table]
    (folder / "grades.csv").write_text("\n".join(lines) + "\n")
    for sid, score, _ in table:
        (folder / sid).mkdir()
        result = {"score": score, "tests": [], "extra_data": {"assignment": "custom-functions"}}
        (folder / sid / "results.json").write_text(json.dumps(result))
    return folder


@pytest.fixture()
def roster(tmp_path):
    """Canvas's own gradebook export: a byte-order mark, a Points Possible row, a test student."""
    path = tmp_path / "roster.csv"
    path.write_text("\ufeffStudent,ID,SIS User ID,SIS Login ID,Section,Lab 2 (77)\n"
                    "    Points Possible,,,,,10\n"
                    "\"Liddell, Alice\",1001,S1,alice,Mon,\n"
                    "\"Builder, Bob\",1002,S2,bob@uni.example,Mon,\n"
                    "\"Smith, John\",4242,S3,jsmith,Tue,\n"
                    "\"Nobody, Ned\",1004,S4,ned,Tue,\n", encoding="utf-8")
    return path


def test_canvas_download_names_give_the_user_id():
    """Is the Canvas user ID read from "Download Submissions" file names, late ones too, and only there?"""
    assert canvas_user_id("smithjohn_4242_998877_02-custom-functions") == "4242"
    assert canvas_user_id("smithjohn_LATE_4242_998877_lab") == "4242"
    assert canvas_user_id("alice") is None
    assert canvas_user_id("lab_2_notebook") is None


def test_without_roster_every_submission_gets_a_row(graded):
    """Without a roster, does each submission get a row: the Canvas ID from a Canvas file name, else the
    file name as SIS Login ID, under a Points Possible row?"""
    graded_rows, assignment = read_graded(graded)
    table = rows(canvas_csv(graded_rows, assignment).csv)
    assert table[0] == [*HEADER, "custom-functions"]
    assert table[1] == ["    Points Possible", "", "", "", "", "38"]
    by_student = {r[0]: r for r in table[2:]}
    assert by_student["alice"] == ["alice", "", "", "alice", "", "38"]
    assert by_student["smithjohn"] == ["smithjohn", "4242", "", "", "", "30"]


def test_roster_matches_login_email_and_canvas_id(graded, roster):
    """With Canvas's gradebook export as roster, is each student found by SIS Login ID, by the part of an
    email before the @, or by the Canvas ID in the file name; are others left blank and strangers
    reported?"""
    graded_rows, assignment = read_graded(graded)
    result = canvas_csv(graded_rows, assignment, roster, column="Lab 2 (77)", out_of=10)
    table = rows(result.csv)
    assert table[0] == [*HEADER, "Lab 2 (77)"]
    assert table[1][-1] == "10"
    assert table[2:] == [["Liddell, Alice", "1001", "S1", "alice", "Mon", "10"],
                         ["Builder, Bob", "1002", "S2", "bob@uni.example", "Mon", "5"],
                         ["Smith, John", "4242", "S3", "jsmith", "Tue", "7.8947"],
                         ["Nobody, Ned", "1004", "S4", "ned", "Tue", ""]]
    assert result.unmatched == ["stranger"]
    assert result.missing == ["Nobody, Ned"]


def test_several_files_of_one_student_count_once(graded, roster):
    """When two submissions belong to one student, is the best one written and the clash reported?"""
    graded_rows, assignment = read_graded(graded)
    graded_rows[3].submission = "ned"
    graded_rows.append(type(graded_rows[0])("NED", 25, 38))
    result = canvas_csv(graded_rows, assignment, roster)
    assert rows(result.csv)[5][-1] == "25"
    assert result.duplicates == ["Nobody, Ned: ned, NED"]


def test_id_column_is_checked(graded, roster):
    """Does an unknown --id-column fail with the roster's columns?"""
    graded_rows, assignment = read_graded(graded)
    with pytest.raises(ExportError, match="no column 'Login'.*SIS Login ID"):
        canvas_csv(graded_rows, assignment, roster, id_column="Login")


def test_generic_roster_with_email_column(graded, tmp_path):
    """Does a plain class list (name and email) match submissions, and is the Canvas import refused with
    what to do (Canvas matches none of its columns: a row would hold a score and no student)?"""
    plain = tmp_path / "class.csv"
    plain.write_text("Name,Email\nAlice L,alice@uni.example\nBob B,bob@uni.example\n")
    graded_rows, assignment = read_graded(graded)
    with pytest.raises(ExportError, match="SIS Login ID.*Export Entire Gradebook.*Nothing was written"):
        canvas_csv(graded_rows, assignment, plain)
    plain.write_text("Name,SIS Login ID\nAlice L,alice@uni.example\nBob B,bob@uni.example\n")
    table = rows(canvas_csv(graded_rows, assignment, plain).csv)
    assert table[2] == ["Alice L", "", "", "alice@uni.example", "", "38"]
    assert [r[-1] for r in table[2:]] == ["38", "19"]


def test_export_command_and_its_errors(graded, roster, tmp_path):
    """Does `python -m autograder export` write the file and say what it matched, and fail clearly
    without grades?"""
    out = tmp_path / "canvas.csv"
    command = ["export", "--graded", graded, "--canvas", out, "--roster", roster]
    result = autograder(*command, timeout=300)
    assert "4 students" in result.stdout and "stranger" in result.stdout and "Nobody, Ned" in result.stdout
    assert rows(out.read_text())[2][-1] == "38"
    command[2] = tmp_path / "nothing"
    result = autograder(*command, check=False, timeout=300)
    message = result.stderr.replace("\n  ", " ")
    assert result.returncode == 2 and "holds no grades.csv" in message and "Traceback" not in message


def test_export_canvas_writes_atomically(graded, tmp_path):
    """Is the file written whole, with nothing left over beside it?"""
    out = tmp_path / "out" / "canvas.csv"
    export_canvas(graded, out)
    assert [p.name for p in out.parent.iterdir()] == ["canvas.csv"]


@pytest.mark.slow
def test_grade_with_canvas_and_hidden_checks(tmp_path):
    """Does `grade --canvas` write the import next to grades.csv, and does a hidden check count in the
    score, carry visibility "hidden" in results.json, and stay out of the student's feedback.html?"""
    extra = tmp_path / "hidden.py"
    extra.write_text("from autograder.course import hide\nhide('double-backward', 'Cube: gradgradcheck')\n")
    out, canvas = tmp_path / "graded", tmp_path / "canvas.csv"
    autograder("grade", "--assignment", "double-backward", "--out", out, "--quiet", "--extra", extra,
               "--canvas", canvas, ROOT / "examples" / "double-backward")
    table = rows(canvas.read_text())
    assert {r[3] for r in table[2:]} == {"frank", "grace"}
    for sid in ("frank", "grace"):
        tests = {t["name"]: t for t in json.loads((out / sid / "results.json").read_text())["tests"]}
        assert tests["Cube: gradgradcheck"]["visibility"] == "hidden"
        assert "visibility" not in tests["Cube: gradcheck"]
        page = (out / sid / "feedback.html").read_text()
        assert "Cube: gradgradcheck" not in page and "Cube: gradcheck" in page


def test_a_student_who_gives_anothers_email_does_not_take_their_grade(tmp_path):
    """Two submitters with one email (case aside) but different student ids were one student: the export
    kept the better score under the first one's name and id, so Bob's 50 went to Mallory and Bob had no
    row. Gradescope's metadata is the students' data: are they two rows, each with their own score?"""
    from autograder.report.export import export

    folder = tmp_path / "graded"
    folder.mkdir()
    people = {"Mallory": ("Zed@uni.example", "ABC", 28), "Bob": ("zed@UNI.example", "abc", 50)}
    (folder / "grades.csv").write_text("submission,score,max_score\n"
                                       + "".join(f"{n},{s},50\n" for n, (_, _, s) in people.items()))
    for name, (email, sid, score) in people.items():
        (folder / name).mkdir()
        person = {"name": name, "email": email, "sid": sid}
        (folder / name / "results.json").write_text(json.dumps({"score": score, "tests": [], "extra_data": {
            "assignment": "custom-functions", "identity": {**person, "submitters": [person]}}}))
    export(folder, tmp_path / "out.csv", "csv")
    table = list(csv.DictReader((tmp_path / "out.csv").open()))
    assert sorted((r["id"], r["total"]) for r in table) == [("ABC", "28"), ("abc", "50")]
