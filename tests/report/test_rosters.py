"""Is every export row a student's, with every column the roster can fill filled, whichever LMS's own
export is the roster (Canvas's gradebook, Moodle's grades, Blackboard's Grade Center, Gradescope's)?"""

import csv
import io
import json

import pytest

from autograder.report.export import ExportError, canvas_csv, moodle_csv, plain_csv, read_graded

# Each LMS's export, as its header and two students; the submissions are named by login (alice, bob).
ROSTERS = {
    "canvas": ("\ufeffStudent,ID,SIS User ID,SIS Login ID,Section,Lab 2 (77)\n"
               "    Points Possible,,,,,10\n"
               "\"Liddell, Alice\",1001,S1001,alice,Mon,\n"
               "\"Builder, Bob\",1002,S1002,bob,Tue,\n"),
    "moodle": ("First name,Last name,ID number,Institution,Department,Email address,Assignment: Lab 2 (Real),"
               "Last downloaded from this course\n"
               "Alice,Liddell,S1001,Uni,CS,alice@uni.example,-,1700000000\n"
               "Bob,Builder,S1002,Uni,CS,bob@uni.example,-,1700000000\n"),
    "blackboard": ("\"Last Name\",\"First Name\",\"Username\",\"Student ID\",\"Last Access\","
                   "\"Availability\",\"Lab 2 [Total Pts: 10 Score] |123\"\n"
                   "\"Liddell\",\"Alice\",\"alice\",\"S1001\",\"2026-03-01\",\"Available\",\"\"\n"
                   "\"Builder\",\"Bob\",\"bob\",\"S1002\",\"2026-03-01\",\"Available\",\"\"\n"),
    "gradescope": ("First Name,Last Name,SID,Email,Role\n"  # its Roster page's download (memberships.csv)
                   "Alice,Liddell,S1001,alice@uni.example,Student\n"
                   "Bob,Builder,S1002,bob@uni.example,Student\n"),
}
NAMES = {"Alice Liddell", "Liddell, Alice"}


def table(text: str) -> list[dict[str, str]]:
    return [r for r in csv.DictReader(io.StringIO(text)) if "Points Possible" not in r.get("Student", "")]


@pytest.fixture()
def graded(tmp_path):
    folder = tmp_path / "graded"
    folder.mkdir()
    lines = ["submission,score,max_score,KillHead"]
    for sid, score in (("alice", 38), ("bob", 19)):
        lines.append(f"{sid},{score},38,0")
        (folder / sid).mkdir()
        (folder / sid / "results.json").write_text(json.dumps(
            {"score": score, "tests": [], "extra_data": {"assignment": "custom-functions"}}))
    (folder / "grades.csv").write_text("\n".join(lines) + "\n")
    return read_graded(folder)


@pytest.mark.parametrize("lms", ROSTERS)
def test_every_export_row_names_its_student(lms, graded, tmp_path):
    """With each LMS's export as the roster, does every row of every format carry the student's name and
    an identifier the gradebook matches on (never the score alone), Moodle's ID number the roster's own
    number (never an email), its Full name made of first and last names where the roster splits them?"""
    roster = tmp_path / f"{lms}.csv"
    roster.write_text(ROSTERS[lms], encoding="utf-8")
    graded_rows, assignment = graded

    canvas = table(canvas_csv(graded_rows, assignment, roster).csv)
    assert [r[assignment] for r in canvas] == ["38", "19"]
    alice = canvas[0]
    assert alice["Student"] in NAMES
    assert alice["SIS User ID"] == "S1001"  # the roster's student number
    if lms in ("canvas", "blackboard"):
        assert alice["SIS Login ID"] == "alice"
    assert alice["ID"] == ("1001" if lms == "canvas" else "")

    moodle = table(moodle_csv(graded_rows, assignment, roster).csv)
    assert [(r["Full name"] in NAMES or r["Full name"] == "Bob Builder" or r["Full name"] == "Builder, Bob")
            for r in moodle] == [True, True]
    assert moodle[0]["ID number"] == "S1001" and "@" not in moodle[0]["ID number"]
    if lms in ("moodle", "gradescope"):
        assert moodle[0]["Full name"] == "Alice Liddell"
        assert moodle[0]["Email address"] == "alice@uni.example"

    plain = table(plain_csv(graded_rows, assignment, roster).csv)
    assert plain[0]["id"] == "S1001" and plain[0]["name"] in NAMES and plain[0]["total"] == "38"


def test_moodle_id_number_is_never_the_email(graded, tmp_path):
    """With the email column first, is Moodle's ID number still the roster's ID number?"""
    roster = tmp_path / "moodle.csv"
    roster.write_text("Email address,First name,Last name,ID number\nalice@uni.example,Alice,Liddell,S1001\n")
    graded_rows, assignment = graded
    row = table(moodle_csv(graded_rows, assignment, roster).csv)[0]
    assert (row["ID number"], row["Email address"], row["Full name"]) == \
        ("S1001", "alice@uni.example", "Alice Liddell")


def test_a_roster_no_gradebook_can_match_is_refused(graded, tmp_path):
    """A roster of names and logins only: Moodle matches neither, so the export is refused with what to
    do and nothing written, rather than rows no gradebook can place."""
    roster = tmp_path / "names.csv"
    roster.write_text("First name,Last name,Username\nAlice,Liddell,alice\n")
    graded_rows, assignment = graded
    with pytest.raises(ExportError, match="ID number or Email address.*Alice Liddell.*Plain text file"):
        moodle_csv(graded_rows, assignment, roster)
    row = table(canvas_csv(graded_rows, assignment, roster).csv)[0]  # Canvas matches the login
    assert (row["Student"], row["SIS Login ID"]) == ("Alice Liddell", "alice")
