"""Is nbgrader's exchange (`<course>/inbound/<student>+<assignment>+<timestamp>+<random>/`, as `nbgrader
submit` writes it) read as one submission per student, the latest by its timestamp, with its time kept
for the late policy, whether the exchange is personalized (`inbound/<student>/...`) or not, and named
whole, as its inbound/ or submission by submission?"""

import base64
import csv
import os

import pytest

from autograder.intake.layouts import NoSubmissions
from tests.conftest import autograder
from tests.intake.test_identity import loaded
from tests.intake.test_layouts import ALICE, BOB, lesson

EARLY, LATE = "2026-03-01 10:00:00.000000 UTC", "2026-03-02 09:30:00.500000 UTC"


def submit(inbound, student, assignment, timestamp, code, personalized=False):
    """One `nbgrader submit`: the folder named as nbgrader's ExchangeSubmit names it (a random string of
    9 random bytes, urlsafe base64), the notebook and timestamp.txt in it."""
    random = base64.urlsafe_b64encode(os.urandom(9)).decode("ascii")
    where = (inbound / student if personalized else inbound) / f"{student}+{assignment}+{timestamp}+{random}"
    lesson(where / "02-custom-functions.ipynb" if assignment == "ps2" else where / "01-autograd-basics.ipynb",
           code)
    (where / "timestamp.txt").write_text(timestamp)
    return where


def exchange(base, personalized=False):
    """alice submitted ps2 twice (wrong, then right) and ps1; bob ps2 once, late; carol ps1 only."""
    course = base / "exchange" / "course101"
    (course / "outbound" / "ps2").mkdir(parents=True)  # the released assignment: not a student
    lesson(course / "outbound" / "ps2" / "02-custom-functions.ipynb", "x = 1")
    inbound = course / "inbound"
    submit(inbound, "alice", "ps2", LATE, ALICE, personalized)
    submit(inbound, "alice", "ps2", EARLY, BOB, personalized)
    submit(inbound, "alice", "ps1", EARLY, "x = 1", personalized)
    submit(inbound, "bob", "ps2", "2026-03-05 08:00:00.000000 UTC", BOB, personalized)
    submit(inbound, "carol", "ps1", EARLY, "x = 1", personalized)
    return course


@pytest.mark.parametrize("personalized", [False, True])
@pytest.mark.parametrize("named", ["course", "inbound", "submissions"])
def test_exchange_gives_each_student_their_latest_submission(tmp_path, personalized, named):
    course = exchange(tmp_path, personalized)
    paths = {"course": [course], "inbound": [course / "inbound"],
             "submissions": sorted(course.glob("inbound/**/*+ps2+*"))}[named]
    subs = loaded(paths)
    assert sorted(subs) == ["alice", "bob"]
    alice = subs["alice"]
    assert alice.path.parent.name.startswith(f"alice+ps2+{LATE}+") and "".join(alice.cells).strip()
    assert alice.identity == {"name": "alice", "nbgrader_assignment": "ps2", "submitted": LATE,
                              "submissions": 2}
    assert subs["bob"].identity["submitted"] == "2026-03-05 08:00:00.000000 UTC"


def test_an_exchange_whose_assignment_cannot_be_told_is_refused(tmp_path):
    inbound = tmp_path / "inbound"
    for assignment in ("hw1", "hw2"):
        where = inbound / f"alice+{assignment}+{EARLY}+AAAA"
        lesson(where / "homework.ipynb", ALICE)
    with pytest.raises(NoSubmissions, match=r"exchange in .* holds submissions of hw1, hw2.*\*\+hw2\+\*"):
        loaded([inbound])


@pytest.mark.slow
def test_exchange_graded_with_a_late_policy(tmp_path):
    """Graded from the exchange with a due date: one row per student, alice's latest submission scored
    (full marks), bob's submission three days late penalized by its own timestamp."""
    course = exchange(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "grading.toml").write_text('[late]\ndue = 2026-03-02T12:00:00\ntimezone = "UTC"\nper = "day"\n'
                                      'penalty = 5\n')
    autograder("grade", "--assignment", "custom-functions", "--out", out, "--quiet", course / "inbound")
    with open(out / "grades.csv", newline="") as f:
        rows = {r["submission"]: r for r in csv.DictReader(f)}
    assert sorted(rows) == ["alice", "bob"]
    assert rows["alice"]["late"].startswith("handed in 2026-03-02 09:30 UTC, on time")
    assert rows["alice"]["score"] == rows["alice"]["max_score"] and rows["alice"]["late_penalty"] == "0"
    assert rows["bob"]["late"].startswith("handed in 2026-03-05 08:00 UTC")
    assert float(rows["bob"]["late_penalty"]) == 15  # 3 days started after the due time, 5 points each
