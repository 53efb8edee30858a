"""A term after the grading: the instructor's grading.toml (adjustments, a late policy) applied on top of
the results by `grade` and `export`, kept across re-runs; a hand edit of grades.csv refused; exports
that fail loudly. The class arrives as instructors receive it: Canvas's "Download Submissions" (one
file marked LATE) beside Gradescope's "Export Submissions" (with its submission times)."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import re
import shutil
from pathlib import Path

import pytest

from autograder.course import find_assignment
from autograder.judge.checks import max_score
from autograder.term.rules import RulesError, read_rules
from autograder.term.standing import standings, submission_time
from tests.conftest import EXAMPLES, ROOT, autograder

FULL = max_score(find_assignment("custom-functions"))  # alice.py's score: full marks
DAY = FULL * 10 / 100  # what a day started costs under LATE's policy (10%)
DUE = "2026-03-01T23:59:00"
METADATA = """submission_1:
  :submitters:
  - :name: Cleo Park
    :email: cleo@uni.example
    :sid: '1003'
  :created_at: 2026-03-02 09:30:00.000000000 -05:00
submission_2:
  :submitters:
  - :name: Dan Roe
    :email: dan@uni.example
    :sid: '1004'
  :created_at: 2026-03-01 20:00:00.000000000 -05:00
"""


def arrived(base: Path) -> list[Path]:
    """ann (right, Canvas marks her late), ben (subtly wrong), Cleo (right, 9.5 hours late by
    Gradescope's time), Dan (subtly wrong, on time)."""
    canvas, gradescope = base / "canvas", base / "gradescope"
    canvas.mkdir(parents=True)
    shutil.copy(EXAMPLES / "alice.py", canvas / "ann_LATE_12345_67890_lab.py")
    shutil.copy(EXAMPLES / "bob.py", canvas / "ben_12346_67891_lab.py")
    for n, source in ((1, "alice.py"), (2, "bob.py")):
        (gradescope / f"submission_{n}").mkdir(parents=True)
        shutil.copy(EXAMPLES / source, gradescope / f"submission_{n}" / "lab.py")
    (gradescope / "submission_metadata.yml").write_text(METADATA)
    return [canvas, gradescope]


@pytest.fixture(scope="module")
def first_run(tmp_path_factory):
    base = tmp_path_factory.mktemp("term")
    classes = arrived(base)
    autograder("grade", "--assignment", "custom-functions", "--out", base / "graded", "--quiet", *classes)
    return base, classes


@pytest.fixture(scope="module")
def bob(first_run) -> dict[str, float]:
    """bob.py's grades as graded (ben's, on Canvas), before grading.toml: its score and LinearFunction's."""
    base, _ = first_run
    row = grades(base / "graded")["ben_12346_67891_lab"]
    return {"score": float(row["score"]), "LinearFunction": float(row["LinearFunction"])}


@pytest.fixture()
def term(first_run, tmp_path):
    """A copy of the graded folder, and the command that grades it again."""
    base, classes = first_run
    out = tmp_path / "graded"
    shutil.copytree(base / "graded", out)

    def grade(*options, check=True):
        return autograder("grade", "--assignment", "custom-functions", "--out", out, "--quiet", *options,
                          *classes, check=check)
    return out, grade


def grades(out: Path) -> dict[str, dict]:
    return {r["submission"]: r for r in csv.DictReader((out / "grades.csv").open())}


def table(path: Path) -> list[dict]:
    return list(csv.DictReader(io.StringIO(path.read_text())))


def one_paragraph(result) -> str:
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    return result.stderr.replace("\n  ", " ")


ADJUST = """
[[adjustment]]
student = "ben"
problem = "LinearFunction"
points = 2
reason = "regrade request: the bias gradient is right once summed"
"""


def test_an_adjustment_survives_regrading_and_reaches_page_report_and_export(term, bob, tmp_path):
    """Is ben's +2 on LinearFunction (named by his Canvas name) in grades.csv, on his page and in
    report.html, after a re-run that grades nothing and after one that grades everything again, with
    results.json as graded; and in every export format?"""
    out, grade = term
    (out / "grading.toml").write_text(ADJUST)
    ben = "ben_12346_67891_lab"
    for options in ((), ("--force",)):
        grade(*options)
        row = grades(out)[ben]
        assert (row["score"], row["graded"], row["adjustments"], row["LinearFunction"]) == \
            (f"{bob['score'] + 2:g}", f"{bob['score']:g}", "2", f"{bob['LinearFunction'] + 2:g}")
        assert json.loads((out / ben / "results.json").read_text())["score"] == bob["score"]
        for page in (out / ben / "feedback.html", out / "report.html"):
            assert "regrade request: the bias gradient is right once summed" in page.read_text()
    assert "regrade request" not in (out / "Dan Roe" / "feedback.html").read_text()
    autograder("export", "--graded", out, "--canvas", tmp_path / "canvas.csv")
    canvas = {r["Student"]: r["custom-functions"] for r in table(tmp_path / "canvas.csv")}
    assert canvas["ben"] == f"{bob['score'] + 2:g}"
    autograder("export", "--graded", out, "--csv", tmp_path / "plain.csv")
    plain = {r["name"]: r for r in table(tmp_path / "plain.csv")}
    assert list(plain["ben"]) == ["id", "name", "email", "KillHead", "MyReLU", "Exp", "LinearFunction",
                                  "adjustments", "late_penalty", "total"]
    ben = plain["ben"]
    assert (ben["id"], ben["adjustments"], ben["total"]) == ("12346", "2", f"{bob['score'] + 2:g}")
    assert (plain["Cleo Park"]["id"], plain["Cleo Park"]["email"]) == ("1003", "cleo@uni.example")
    autograder("export", "--graded", out, "--moodle", tmp_path / "moodle.csv")
    moodle = {r["Full name"]: r for r in table(tmp_path / "moodle.csv")}
    assert list(moodle["ben"]) == ["ID number", "Email address", "Full name", "custom-functions", "Feedback"]
    assert moodle["ben"]["custom-functions"] == f"{bob['score'] + 2:g}"
    assert "regrade request" in moodle["ben"]["Feedback"]
    assert moodle["Cleo Park"]["Email address"] == "cleo@uni.example"
    (out / "grading.toml").write_text(ADJUST.replace("points = 2", "points = 3"))  # not graded again
    said = autograder("export", "--graded", out, "--csv", tmp_path / "plain.csv").stdout.replace("\n  ", " ")
    assert "grading.toml changed since grades.csv was written" in said
    assert {r["name"]: r["total"] for r in table(tmp_path / "plain.csv")}["ben"] == f"{bob['score'] + 3:g}"


LATE = f"""
[late]
due = {DUE}
timezone = "America/New_York"
per = "day"
penalty = "10%"
cap = "50%"
"""


def test_late_work_loses_what_the_rule_says_and_an_extension_removes_it(term, tmp_path):
    """Does Cleo, 9.5 hours late by Gradescope's time, lose one day's 10 % of the full marks; ann, marked LATE
    by Canvas with no time, lose nothing and say why, until her time is given; and does an extension
    take Cleo's penalty away, in grades.csv, on the page and in the export?"""
    out, grade = term
    (out / "grading.toml").write_text(LATE)
    grade()
    rows = grades(out)
    cleo = rows["Cleo Park"]
    assert float(cleo["score"]) == pytest.approx(FULL - DAY)
    assert float(cleo["late_penalty"]) == pytest.approx(DAY)
    assert "9 h 31 min after the due time" in rows["Cleo Park"]["late"]
    ann = rows["ann_LATE_12345_67890_lab"]
    assert (ann["score"], ann["late_penalty"]) == (f"{FULL:g}", "0") and "no penalty" in ann["late"]
    assert rows["Dan Roe"]["late_penalty"] == "0"
    assert rows["ben_12346_67891_lab"]["late"] == "on time (by Canvas)"
    assert f"-{DAY:g} point(s)" in (out / "Cleo Park" / "feedback.html").read_text()

    (out / "grading.toml").write_text(LATE + '\n[late.extensions]\n"cleo@uni.example" = 1\n'
                                      '\n[late.submitted]\nann = 2026-03-04T12:00:00\n')
    grade()
    rows = grades(out)
    assert (rows["Cleo Park"]["score"], rows["Cleo Park"]["late_penalty"]) == (f"{FULL:g}", "0")
    assert "(extended)" in (out / "Cleo Park" / "feedback.html").read_text()
    late = float(rows["ann_LATE_12345_67890_lab"]["late_penalty"])
    assert late == pytest.approx(3 * DAY)  # 2 days 12 h: 3 days started
    autograder("export", "--graded", out, "--csv", tmp_path / "plain.csv")
    assert {r["name"]: r["late_penalty"] for r in table(tmp_path / "plain.csv")} == \
        {"ann": f"{late:g}", "ben": "0", "Cleo Park": "0", "Dan Roe": "0"}


def test_a_hand_edited_grades_csv_is_refused_and_kept(term, bob, tmp_path):
    """Does export refuse a grades.csv changed by hand, pointing to grading.toml and writing nothing;
    does the next `grade` keep the edited file aside and write grades.csv again?"""
    out, grade = term
    text, graded = (out / "grades.csv").read_text(), f"ben_12346_67891_lab,{bob['score']:g},"
    assert graded in text
    (out / "grades.csv").write_text(text.replace(graded, f"ben_12346_67891_lab,{bob['score'] + 10:g},"))
    message = one_paragraph(autograder("export", "--graded", out, "--canvas", tmp_path / "c.csv",
                                       check=False))
    assert "changed after the grader wrote it" in message and "grading.toml as an [[adjustment]]" in message
    assert not (tmp_path / "c.csv").exists()
    grade()
    first, second = (f"ben_12346_67891_lab,{bob['score'] + n:g}," for n in (10, 9))
    assert first in (out / "grades.edited.csv").read_text()
    assert (out / "grades.csv").read_text() == text
    (out / "grades.csv").write_text(text.replace(graded, second))
    grade()  # a second edit is kept beside the first, which stays
    assert first in (out / "grades.edited.csv").read_text()
    assert second in (out / "grades.edited-2.csv").read_text()
    autograder("export", "--graded", out, "--canvas", tmp_path / "c.csv")


def test_a_folder_of_an_earlier_version_is_not_taken_for_a_hand_edit(term):
    """A graded folder without grades.csv's digest (written before there was one) whose grades.csv says
    what the next run writes: nothing is kept aside, and the digest is written."""
    out, grade = term
    (out / "grades.csv.sha256").unlink()
    result = grade()
    assert "was changed since the grader wrote it" not in result.stderr + result.stdout
    assert not (out / "grades.edited.csv").exists() and (out / "grades.csv.sha256").is_file()


@pytest.mark.parametrize(("roster", "phrase"), [
    ("name,phone\nAnn,555\n", "has no column that identifies a student: its columns are name, phone"),
    ("name,email\nZed,zed@uni.example\n", "No submission matches a student of the roster"),
])
def test_a_bad_roster_fails_and_writes_nothing(term, tmp_path, roster, phrase):
    """Does a roster without an identifier column, or one that matches nobody, fail with one paragraph
    and exit status 2, writing nothing, for either format?"""
    out, _ = term
    (tmp_path / "roster.csv").write_text(roster)
    for fmt in ("--canvas", "--csv"):
        result = autograder("export", "--graded", out, fmt, tmp_path / "x.csv",
                            "--roster", tmp_path / "roster.csv", check=False)
        assert phrase in one_paragraph(result) and "Nothing was written" in result.stderr.replace("\n  ", " ")
        assert not (tmp_path / "x.csv").exists()


@pytest.mark.parametrize(("entry", "line", "phrase"), [
    ('[[adjustment]]\nstudent = "nobody"\npoints = 1\nreason = "x"\n', 2, "no graded submission is 'nobody'"),
    ('[[adjustment]]\nstudent = "ben"\nproblem = "Linear"\npoints = 1\nreason = "x"\n', 3,
     "'Linear' is not a problem of this assignment"),
    ('[late]\ndue = 2026-03-01T23:59:00Z\n[late.extensions]\nzed = 2\n', 4, "no graded submission is 'zed'"),
])
def test_an_unknown_student_or_problem_names_its_line(term, tmp_path, entry, line, phrase):
    """Does a grading.toml line that names no student or no problem stop grade (results kept) and export
    (nothing written) with one paragraph naming the file and the line?"""
    out, grade = term
    (out / "grading.toml").write_text("# the term's decisions\n" + entry)
    for result in (grade(check=False),
                   autograder("export", "--graded", out, "--csv", tmp_path / "x.csv", check=False)):
        message = one_paragraph(result)
        assert f"grading.toml, line {line + 1}: " in message and phrase in message
    assert not (tmp_path / "x.csv").exists() and (out / "ben_12346_67891_lab" / "results.json").exists()


def test_the_documented_file_gives_the_documented_grades(term):
    """Does docs/instructors.md's example grading.toml, on this class, print and write what the docs
    show?"""
    out, grade = term
    docs = (ROOT / "docs" / "instructors.md").read_text()
    (out / "grading.toml").write_text(re.search(r"```toml\n(.*?)```", docs, re.DOTALL)[1])
    said = grade()
    shown = re.search(r"\n\$ cat graded/grades.csv\n(.*?)```", docs, re.DOTALL)[1]
    written = (out / "grades.csv").read_text()
    assert written == shown, ("docs/instructors.md's grades.csv is not what this class gets today (a check "
                              "added, or its points changed): put this in its place\n" + written)
    line = next(x for x in docs.splitlines() if x.startswith("autograder: graded/grading.toml: "))
    assert line.replace("graded/", f"{out}/") in said.stderr


# -- the rule's arithmetic, without grading ------------------------------------------------------------------

def rules_of(tmp_path: Path, text: str):
    (tmp_path / "grading.toml").write_text(text)
    return read_rules(tmp_path)


def result(score: float, submitted: str | None = None) -> dict:
    identity = {"submitted": submitted} if submitted else {}
    return {"score": score, "tests": [{"name": "Exp: forward", "score": score, "max_score": 10}],
            "extra_data": {"identity": identity}}


@pytest.mark.parametrize(("late", "submitted", "penalty"), [
    ('per = "hour"\npenalty = 1', "2026-03-02T02:30:00+00:00", 3),  # 2 h 30 min: 3 hours started
    ('per = "hour"\npenalty = 1\ncap = 2', "2026-03-02T02:30:00+00:00", 2),
    ('per = "day"\npenalty = "10%"\ngrace_minutes = 30', "2026-03-02T00:20:00+00:00", 0),
    ('per = "day"\npenalty = "10%"\ngrace_minutes = 30', "2026-03-02T00:40:00+00:00", 1),
    ('per = "day"\npenalty = 4', "2026-03-04T00:00:01+00:00", 8),  # never below 0: 8 of 8
    ('per = "day"\npenalty = 4', "2026-03-01T22:00:00-01:00", 0),  # 23:00 UTC: on time
    ('per = "day"\npenalty = 4\n[late.submitted]\nx = 2026-03-02T01:00:00', None, 4),  # in due's zone
])
def test_penalties_per_hour_and_day_with_cap_and_grace(tmp_path, late, submitted, penalty):
    """Does the penalty count each hour or day started after the due time, keep within its cap, forgive
    the grace period, and never take more than the grade?"""
    rules = rules_of(tmp_path, f"[late]\ndue = 2026-03-02T00:00:00Z\n{late}\n")
    standing = standings(rules, [("x", result(8, submitted))], ["Exp"], 10)["x"]
    assert standing.penalty == penalty and standing.score == 8 - penalty


def test_adjustments_stay_within_the_points():
    """Does a problem adjustment stop at the problem's points and a total one at 0, saying what it gave?"""
    from autograder.term.rules import Adjustment, Rules

    rules = Rules(Path("grading.toml"), adjustments=[Adjustment(3, "x", "Exp", 5, "bonus"),
                                                     Adjustment(8, "x", "", -30, "copied")])
    standing = standings(rules, [("x", result(8))], ["Exp"], 10)["x"]
    assert [(a.points, a.applied) for a in standing.adjustments] == [(5, 2), (-30, -10)]
    assert standing.score == 0 and "(+5 asked; the bounds allow +2)" in standing.lines()[0]


def flagged(score: float, withheld: float) -> dict:
    """A result flagged for reaching into the grader (flags.py): Exp scored 0, its points withheld."""
    return dict(result(score), extra_data={"flagged": {"evidence": [], "touched": ["Exp"],
                                                       "withheld": {"Exp": withheld}}})


def test_an_accepted_flag_gives_back_the_points_withheld(tmp_path):
    """Does [[accept]] give a flagged submission the points its measurements earned, within the problem's
    points, say so with the reason, and change nothing for a submission that is not flagged?"""
    rules = rules_of(tmp_path, '[[accept]]\nstudent = "x"\nreason = "a debugging print"\n\n'
                               '[[accept]]\nstudent = "y"\nreason = "not flagged"\n')
    found = standings(rules, [("x", flagged(0, 7)), ("y", result(4)), ("z", flagged(0, 30))], ["Exp"], 10)
    assert (found["x"].score, found["x"].flagged, found["x"].problems["Exp"]) == (7, "accepted", 7)
    assert "accepts it: a debugging print" in found["x"].lines()[0]
    assert (found["y"].score, found["y"].flagged, found["y"].adjustments) == (4, "", [])
    assert (found["z"].score, found["z"].flagged) == (0, "withheld")  # not accepted: nothing given back
    rules = rules_of(tmp_path, '[[accept]]\nstudent = "z"\nreason = "reviewed"\n')
    assert standings(rules, [("z", flagged(0, 30))], ["Exp"], 10)["z"].score == 10  # within the points


def test_submission_times_as_layouts_keep_them():
    """Are Gradescope's and nbgrader's times read with their zones, and a time without one refused?"""
    utc = dt.UTC
    assert submission_time("2026-03-02 09:30:00-05:00") == dt.datetime(2026, 3, 2, 14, 30, tzinfo=utc)
    assert submission_time("2026-03-01 10:00:00.000000 UTC") == dt.datetime(2026, 3, 1, 10, tzinfo=utc)
    assert submission_time("2026-03-01 10:00:00") is None and submission_time("yesterday") is None


@pytest.mark.parametrize(("text", "phrase"), [
    ("[late]\ndue = 2026-03-01T23:59:00\n", "line 2: due = 2026-03-01T23:59:00 says no time zone"),
    ('[late]\ndue = 2026-03-01T23:59:00Z\nper = "week"\n', "line 3: per = 'week'"),
    ('[late]\ndue = 2026-03-01T23:59:00Z\ntimezone = "Mars/Olympus"\n', "line 3: timezone = 'Mars/Olympus'"),
    ('\n[[adjustment]]\nstudent = "ann"\npoints = 2\n', "line 2: this [[adjustment]] lacks reason"),
    ('[[adjustment]]\nstudent = "ann"\npoints = "two"\nreason = "x"\n', "line 1: points = 'two'"),
    ("[grades]\nann = 3\n", "line 1: 'grades' is not something grading.toml holds"),
    ('\n\n[[accept]]\nstudent = "ann"\n', "line 3: this [[accept]] lacks reason"),
    ('[[accept]]\nstudent = "ann"\nreason = "x"\npoints = 3\n', "line 1: an [[accept]] has no points"),
    ("[late\n", "is not valid TOML"),
])
def test_mistakes_in_grading_toml_name_their_line(tmp_path, text, phrase):
    with pytest.raises(RulesError, match=None) as error:
        rules_of(tmp_path, text)
    assert phrase in str(error.value)


# -- hostile or mistaken times and numbers ----------------------------------------------------------------

@pytest.mark.parametrize("submitted", ["9999-12-31 23:59:59 -12:00", "0001-01-01 00:00:00 +14:00",
                                       "not a time", "2026-13-45 25:00:00 -05:00"])
def test_a_submission_time_the_calendar_cannot_hold_costs_no_crash_and_is_named(tmp_path, submitted):
    """A created_at at the calendar's edges (a student's metadata is untrusted) used to raise
    OverflowError in grade and export: is it now a time the grader cannot read, named to the instructor
    as one that needs [late.submitted], the others' penalties still computed?"""
    from autograder.term.standing import describe_rules

    rules = rules_of(tmp_path, '[late]\ndue = 2026-03-02T00:00:00Z\npenalty = 4\n')
    rows = [("odd", result(8, submitted)), ("late", result(8, "2026-03-02T01:00:00+00:00"))]
    found = standings(rules, rows, ["Exp"], 10)
    assert (found["odd"].penalty, found["late"].penalty) == (0, 4)
    assert "cannot read as a time" in found["odd"].late and found["odd"].needs_time
    said = describe_rules(rules, found)
    assert "[late.submitted]" in said and "odd" in said and "late" not in said.split("[late.submitted]")[1]


@pytest.mark.parametrize(("text", "phrase"), [
    ("[late]\ndue = 2026-03-01T23:59:00Z\npenalty = nan\n", "line 3: penalty"),
    ("[late]\ndue = 2026-03-01T23:59:00Z\ncap = inf\n", "line 3: cap"),
    ("[late]\ndue = 2026-03-01T23:59:00Z\ngrace_minutes = inf\n", "line 3: grace_minutes"),
    ("[late]\ndue = 2026-03-01T23:59:00Z\n[late.extensions]\nann = 1e12\n", "line 4: ann = 1e+12"),
    ("[late]\ndue = 2026-03-01T23:59:00Z\n[late.extensions]\nann = nan\n", "line 4: ann = nan"),
    ("[late]\ndue = 9999-12-31T23:59:59-12:00\n", "line 2: due"),
    ('[[adjustment]]\nstudent = "ann"\npoints = nan\nreason = "x"\n', "line 1: points = nan"),
    ('[[adjustment]]\nstudent = "ann"\npoints = -inf\nreason = "x"\n', "line 1: points = -inf"),
])
def test_numbers_and_times_no_grade_can_hold_name_their_line(tmp_path, text, phrase):
    """nan, inf, an extension of a trillion days, a due time at the calendar's end: each used to reach the
    arithmetic (an OverflowError traceback, or grades.csv refused as "scored nan")."""
    with pytest.raises(RulesError) as error:
        rules_of(tmp_path, text)
    assert phrase in str(error.value) and "Fix grading.toml" in str(error.value)


def test_a_student_named_as_anothers_email_does_not_take_their_extension(tmp_path):
    """Gradescope names a submission by the name the student chose: one who calls themself
    "ann@uni.example" got Ann's extension (the entry matched their id before Ann's email). Is a string that
    names two submissions refused, with the line, and is Ann reached by her student id?"""
    ann = {"name": "Ann Smith", "email": "ann@uni.example", "sid": "100"}
    mallory = {"name": "ann@uni.example", "email": "mal@uni.example", "sid": "666"}
    rows = []
    for sid, person in (("Ann Smith", ann), ("ann@uni.example", mallory)):
        row = result(8, "2026-03-03T00:00:00+00:00")
        row["extra_data"]["identity"].update(person, submitters=[person])
        rows.append((sid, row))
    late = '[late]\ndue = 2026-03-02T00:00:00Z\npenalty = 4\n[late.extensions]\n'
    with pytest.raises(RulesError) as error:
        standings(rules_of(tmp_path, late + '"ann@uni.example" = 3\n'), rows, ["Exp"], 10)
    assert "line 5" in str(error.value) and "Ann Smith" in str(error.value)
    found = standings(rules_of(tmp_path, late + '"100" = 3\n'), rows, ["Exp"], 10)
    assert (found["Ann Smith"].penalty, found["ann@uni.example"].penalty) == (0, 4)
