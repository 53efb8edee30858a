"""Do grades never go stale: is a result graded again when anything that decides it changes (the extra
file's code, the seed, the limits, the assignment's definition, the grader's version), only then (not for
a comment), with the grader saying how many and every reason why; does a re-run that would score fewer
points (the --extra file forgotten) stop before writing anything unless told --replace; can no score above
its maximum be written or exported; and does report.html count exactly what the results files hold?"""

import csv
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder.course import find_assignment
from autograder.judge.checks import max_score
from autograder.judge.fingerprint import normalised
from autograder.judge.verdicts import CheckResult
from autograder.keys import STALE, Key, losses, staleness
from autograder.report.files import ScoreAboveMaximum, grades_csv, results_json
from tests.conftest import EXAMPLES, HIDDEN_TESTS, ROOT, autograder

# An extra file whose reference comes from a module beside it: the extra file's bytes stay the same when
# the module changes, and only the assignment's fingerprint can tell.
EXTRA = """
import sys
sys.path.insert(0, {folder!r})
from reference_module import triple
from autograder.course import Case, Problem, TensorSpec, add_problem

add_problem("custom-functions", Problem(name="Triple", summary="3 x", reference=triple,
                                         cases=(Case((TensorSpec((4,)),)),), hidden=True))
"""
TRIPLE = """
class Triple(Function):
    @staticmethod
    def forward(ctx, x):
        return 3 * x

    @staticmethod
    def backward(ctx, grad):
        return 3 * grad
"""


def grade(out: Path, submissions: Path, *extra, check: bool = True) -> subprocess.CompletedProcess:
    return autograder("grade", "--assignment", "custom-functions", "--out", out, "--jobs", "2", "--quiet",
                      *extra, submissions, timeout=1800, check=check)


def inodes(out: Path) -> dict[str, int]:
    return {sid: (out / sid / "results.json").stat().st_ino for sid in ("alice", "bob")}


def grades(out: Path) -> dict[str, tuple[float, float]]:
    rows = csv.DictReader((out / "grades.csv").open())
    return {r["submission"]: (float(r["score"]), float(r["max_score"])) for r in rows}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The same class graded again and again, changing one thing at a time."""
    base = tmp_path_factory.mktemp("keys")
    subs = base / "class"
    subs.mkdir()
    (subs / "alice.py").write_text((EXAMPLES / "alice.py").read_text() + TRIPLE)
    (subs / "bob.py").write_text((EXAMPLES / "bob.py").read_text())
    (base / "reference_module.py").write_text("def triple(x):\n    return 3 * x\n")
    extra = base / "extra.py"
    extra.write_text(EXTRA.format(folder=str(base)))
    hidden = base / "hidden.py"
    hidden.write_text(HIDDEN_TESTS.read_text())
    out = base / "out"
    steps = {}

    def step(name, *options, check=True):
        before = inodes(out) if (out / "alice" / "results.json").exists() else {}
        csv_before = (out / "grades.csv").read_bytes() if (out / "grades.csv").exists() else b""
        run = grade(out, subs, *options, check=check)
        regraded = {s for s, i in inodes(out).items() if before.get(s) != i}
        steps[name] = {"stderr": run.stderr, "regraded": regraded, "grades": grades(out),
                       "status": run.returncode, "csv same": csv_before == (out / "grades.csv").read_bytes()}

    step("first")
    step("same")
    step("extra", "--extra", hidden)
    step("extra again", "--extra", hidden)
    # Comments added, blank lines and the layout of a call changed: the same code.
    source = HIDDEN_TESTS.read_text()
    hidden.write_text("# Hidden tests of this term.\n\n" + source.replace("\n# 2.", "\n\n\n# 2.").replace(
        'hide("custom-functions", "Exp: gradgradcheck")',
        'hide(\n    "custom-functions",  # the assignment\n    "Exp: gradgradcheck",\n)'))
    step("extra commented", "--extra", hidden)
    step("extra forgotten", check=False)
    step("extra removed", "--replace")
    step("seed", "--seed", "7")
    step("limits", "--seed", "7", "--problem-timeout", "30")
    step("seed and limits", "--seed", "8", "--problem-timeout", "40")
    step("own extra", "--extra", extra)
    (base / "reference_module.py").write_text("def triple(x):\n    tripled = x * 3\n    return tripled\n")
    step("same definition", "--extra", extra)
    (base / "reference_module.py").write_text("def triple(x):\n    return 2 * x\n")
    step("definition", "--extra", extra)
    return steps


@pytest.mark.slow
def test_nothing_changed_nothing_graded(runs):
    """Is a second identical run all "already graded", rewriting no result, and does it say so?"""
    assert runs["first"]["regraded"] == {"alice", "bob"}
    assert runs["same"]["regraded"] == set()
    assert "all already graded" in runs["same"]["stderr"]


@pytest.mark.slow
@pytest.mark.parametrize(("step", "why"), [
    ("extra", "because the extra files changed (hidden.py added) and the assignment's definition changed"),
    ("extra removed", ("because the extra files changed (hidden.py removed) and the assignment's "
                       "definition changed")),
    ("seed", "because the seed changed (0 -> 7)"),
    ("limits", "because the limits changed"),
    ("seed and limits", "because the seed changed (7 -> 8) and the limits changed"),
    ("definition", "because the assignment's definition changed"),
])
def test_a_change_grades_everything_again_and_says_why(runs, step, why):
    """Does each change grade every submission again, saying how many and why?"""
    assert runs[step]["regraded"] == {"alice", "bob"}
    assert f"2 submission(s): 0 already graded, 2 to grade (2 {why})." in runs[step]["stderr"]


@pytest.mark.slow
def test_a_comment_in_the_extra_file_grades_nobody_again(runs):
    """Is an edit of the extra file's comments, blank lines and layout no change at all?"""
    assert runs["extra commented"]["regraded"] == set()
    assert "all already graded" in runs["extra commented"]["stderr"]


@pytest.mark.slow
def test_forgetting_the_extra_file_stops_before_writing_anything(runs):
    """Does a re-run without the --extra file the class was graded with stop (status 2), saying what would
    be lost and how to go on, with no result and no grades.csv written; and does --replace then go on?"""
    forgotten = runs["extra forgotten"]
    said = forgotten["stderr"].replace("\n  ", " ")
    assert forgotten["status"] == 2 and "Traceback" not in said
    assert forgotten["regraded"] == set() and forgotten["csv same"]
    assert forgotten["grades"] == runs["extra commented"]["grades"]
    with_hidden, without = (runs[step]["grades"]["alice"][1] for step in ("extra commented", "extra removed"))
    assert with_hidden > without
    assert ("Grading again would replace 2 result(s) in" in said and "and lose points graded before: " in said
            and "they were graded with --extra hidden.py, which this run is not given; the problem "
                "'LinearFunction, other shapes' is no longer graded; the maximum falls from "
                f"{with_hidden:g} to {without:g} points. "
                "Nothing was written. To keep them, pass --extra hidden.py again; to accept the change and "
                "replace them, add --replace (or grade into a new --out)." in said), said
    assert runs["extra removed"]["regraded"] == {"alice", "bob"}


@pytest.mark.slow
def test_an_extra_file_changes_the_maximum_both_ways(runs):
    """Does adding the hidden tests raise the maximum for everyone, and removing them bring it back, never
    leaving a score above the maximum of the moment (47 out of 38, as the grader once did)?"""
    plain, hidden = runs["first"]["grades"]["alice"][1], runs["extra"]["grades"]["alice"][1]
    assert hidden > plain
    assert runs["extra"]["grades"]["alice"] == (hidden, hidden)
    assert runs["extra again"]["regraded"] == set()
    assert runs["extra removed"]["grades"]["alice"] == (plain, plain)
    for step in runs.values():
        assert all(score <= best for score, best in step["grades"].values())


@pytest.mark.slow
def test_a_reference_that_computes_the_same_keeps_the_results(runs):
    """When the reference's module is rewritten to compute the same answers, are the results kept; and
    when it computes other answers, graded again with the new verdicts?"""
    assert runs["same definition"]["regraded"] == set()
    assert runs["own extra"]["grades"]["alice"][0] == runs["own extra"]["grades"]["alice"][1]
    assert runs["definition"]["grades"]["alice"][0] < runs["definition"]["grades"]["alice"][1]


def test_staleness_asks_every_part_of_the_key():
    """Does every part of the key make a result stale when it differs, and only then?"""
    key = {"submission": "s", "assignment": "a", "grader": "1", "seed": 0, "limits": {"x": 1},
           "extra_files": [], "definition": "d", "isolation": "container"}
    assert staleness({"extra_data": {"key": dict(key)}}, key) == ""
    assert staleness(None, key) == "new"
    assert "earlier version" in staleness({"extra_data": {}}, key)
    for part, _ in STALE:
        changed = dict(key, **{part: "other"})
        assert staleness({"extra_data": {"key": changed}}, key), part


def test_staleness_names_every_part_that_changed():
    """When several parts change at once, is each named, in one phrase?"""
    key = {"submission": "s", "assignment": "a", "grader": "1", "seed": 0, "limits": {"x": 1},
           "extra_files": [["hidden.py", "h1"]], "definition": "d", "isolation": "container"}
    old = dict(key, seed=3, limits={"x": 2}, extra_files=[["hidden.py", "h0"], ["more.py", "m"]])
    assert staleness({"extra_data": {"key": old}}, key) == (
        "the seed changed (3 -> 0), the limits changed and the extra files changed (hidden.py edited, "
        "more.py removed)")


def test_a_new_seed_is_told_apart_from_a_new_definition():
    """After a new seed, is the definition compared at the old seed (so that a seed alone is one reason, and a
    seed with a changed definition two)?"""
    key = {"submission": "s", "assignment": "a", "grader": "1", "seed": 7, "limits": {}, "extra_files": [],
           "definition": "d at 7", "isolation": "container"}
    old = {"extra_data": {"key": dict(key, seed=0, definition="d at 0")}}
    assert staleness(old, key, {0: "d at 0", 7: "d at 7"}.get) == "the seed changed (0 -> 7)"
    assert staleness(old, key, {0: "other at 0"}.get) == (
        "the seed changed (0 -> 7) and the assignment's definition changed")


def test_a_renamed_extra_file_changes_nothing():
    """Does only the extra files' code decide, not their names?"""
    key = {"submission": "s", "assignment": "a", "grader": "1", "seed": 0, "limits": {}, "definition": "d",
           "extra_files": [["hidden-2025.py", "h"]], "isolation": "container"}
    assert staleness({"extra_data": {"key": dict(key, extra_files=[["hidden.py", "h"]])}}, key) == ""


def test_code_is_compared_by_what_it_does():
    """Are comments, blank lines and layout left out of the code a key holds, and is a change of code not?"""
    plain = "def f(x):\n    return 3 * x\n"
    assert normalised(plain) == normalised("# triple\ndef f(x):  # x a tensor\n\n    return (3 *\n x)\n")
    assert normalised(plain) != normalised(plain.replace("3", "2"))
    line = "    reference=lambda x: 3 * x,  # the reference\n"  # a lambda's line inside a call
    assert normalised(line) == normalised("reference=lambda x: 3*x,\n") != normalised(line.replace("3", "2"))


def test_every_way_of_losing_points_is_named():
    """Are an extra file missing, a problem no longer graded, a lower maximum and another assignment each
    named, and nothing when the run scores as many points?"""
    assignment = find_assignment("custom-functions")
    key = Key(assignment.name, "d", (), 0, {})
    full = max_score(assignment)

    def result(name="custom-functions", problems=("KillHead", "Gone"), max_score=full + 10, extras=()):
        return {"tests": [{"name": f"{p}: forward"} for p in problems],
                "extra_data": {"assignment": name, "max_score": max_score,
                               "key": {"extra_files": [list(e) for e in extras]}}}

    said = losses([result(extras=[("hidden.py", "h")])], assignment, key)
    assert said == ["they were graded with --extra hidden.py, which this run is not given",
                    "the problem 'Gone' is no longer graded",
                    f"the maximum falls from {full + 10:g} to {full:g} points"]
    assert losses([result(name="gradcheck")], assignment, key) == [
        "they are results of gradcheck, and this run grades custom-functions"]
    assert losses([result(problems=("KillHead", "Exp"), max_score=full)], assignment, key) == []
    given = Key(assignment.name, "d", (("hidden-renamed.py", "h"),), 0, {})
    assert losses([result(problems=("KillHead",), max_score=full, extras=[("hidden.py", "h")])],
                  assignment, given) == []


# -- scores never above their maximum -----------------------------------------------------------------------

def test_a_score_above_its_maximum_is_never_written():
    """Does writing a result refuse a check scoring above its points, a total above the assignment's
    maximum, and a grades.csv row above its maximum?"""
    right = CheckResult("Exp", "forward", True, 2)
    results_json([right], "", {}, 2)
    too_much = CheckResult("Exp", "forward", True, 2)
    too_much.max_score = -1
    with pytest.raises(ScoreAboveMaximum):
        results_json([too_much], "", {})
    with pytest.raises(ScoreAboveMaximum):
        results_json([right, CheckResult("Exp", "gradient", True, 3)], "", {}, 4)
    with pytest.raises(ScoreAboveMaximum):
        grades_csv([("alice", {"score": 47, "tests": []})], ["Exp"], 38)


def test_export_refuses_a_grade_above_its_maximum(tmp_path):
    """Does export refuse a grades.csv saying 47 out of 38 (left by an older grader), saying to grade
    again, rather than send it to the gradebook?"""
    (tmp_path / "grades.csv").write_text("submission,score,max_score\nalice,47,38\n")
    result = autograder("export", "--graded", tmp_path, "--canvas", tmp_path / "canvas.csv", check=False,
                        timeout=300)
    assert result.returncode == 2 and "alice scored 47 out of 38" in result.stderr.replace("\n  ", " ")
    assert not (tmp_path / "canvas.csv").exists()


# -- the class report --------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def reported(tmp_path_factory):
    """The example class and a notebook that never finishes loading, graded once."""
    base = tmp_path_factory.mktemp("report")
    subs = base / "class"
    subs.mkdir()
    for path in EXAMPLES.iterdir():
        (subs / path.name).write_bytes(path.read_bytes())
    (subs / "bob2.py").write_text((EXAMPLES / "bob.py").read_text())
    (subs / "slow.py").write_text((EXAMPLES / "alice.py").read_text() + "\nimport time\ntime.sleep(600)\n")
    out = base / "out"
    grade(out, subs, "--load-timeout", "30")  # room for a loaded machine: slow.py sleeps 600 s
    return out


def report_data(out: Path) -> dict:
    page = (out / "report.html").read_text()
    data = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', page, re.DOTALL)
    return json.loads(data[1])


@pytest.mark.slow
def test_report_counts_match_the_results_files(reported):
    """Are the report's numbers those of the results.json files: submissions, each check's passes and
    failures, each problem's score distribution, and each cause's students failing that problem?"""
    data = report_data(reported)
    results = {row["submission"]: json.loads((reported / row["submission"] / "results.json").read_text())
               for row in csv.DictReader((reported / "grades.csv").open())}
    assert data["submissions"] == len(results) == 6
    assert sorted(data["totals"]) == sorted(r["score"] for r in results.values())
    for name, counts in data["checks"].items():
        statuses = [t["status"] for r in results.values() for t in r["tests"] if t["name"] == name]
        assert (counts["passed"], counts["failed"]) == (statuses.count("passed"), statuses.count("failed")), \
            name
    for problem, distribution in data["problems"].items():
        assert sum(distribution.values()) == len(results)
        for score, count in distribution.items():
            assert count == sum(1 for r in results.values()
                                if sum(t["score"] for t in r["tests"] if t["name"].startswith(problem + ": "))
                                == float(score)), (problem, score)
    for cause in data["causes"]:
        for sid in cause["students"]:
            assert all(any(t["status"] == "failed" and t["name"].startswith(problem + ": ")
                           for t in results[sid]["tests"]) for problem in cause["problems"]), (cause, sid)
    hits = [(row["student"], int(row["rank"])) for row in csv.DictReader((reported / "causes.csv").open())]
    assert hits == [(sid, rank) for rank, c in enumerate(data["causes"], 1) for sid in c["students"]]


@pytest.mark.slow
def test_report_ranks_causes_and_lists_what_could_not_be_graded(reported):
    """Are the causes ranked by how many students hit them (bob's mistakes, made twice, first), each with
    links to the students' pages; and are the unreadable notebook and the one that ran out of time listed?"""
    data = report_data(reported)
    counts = [len(c["students"]) for c in data["causes"]]
    assert counts == sorted(counts, reverse=True) and counts[0] == 2
    assert sorted(data["causes"][0]["students"]) == ["bob", "bob2"]
    assert [s["id"] for s in data["not_loaded"]] == ["erin"]
    assert "not a readable" in data["not_loaded"][0]["why"]
    assert data["timed_out"] == [{"id": "slow", "what": ["load"]}]
    page = (reported / "report.html").read_text()
    assert 'href="bob2/feedback.html"' in page and 'href="erin/feedback.html"' in page
    assert "<svg" in page and "src=" not in page
    assert "http" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")


@pytest.mark.slow
def test_report_tables_every_student_and_lists_the_copies_it_graded(reported):
    """Does the batch give the report each submission's code: a row per student in grades.csv's order, and
    bob2 (a copy of bob) and slow (alice with a cell added) listed beside what they copy?"""
    data = report_data(reported)
    graded = [row["submission"] for row in csv.DictReader((reported / "grades.csv").open())]
    assert [s["id"] for s in data["students"]] == graded
    pairs = {frozenset((p["a"], p["b"])): p for p in data["similar"]}
    assert pairs[frozenset(("bob", "bob2"))]["similarity"] == 1.0
    assert frozenset(("alice", "slow")) in pairs and not any("erin" in pair for pair in pairs)


# -- interrupted ---------------------------------------------------------------------------------------------

def _as_in_a_terminal() -> None:
    """SIGINT as a terminal's foreground process has it: a test run started as a background job of a
    script (`make test &`) has it ignored, which the grader would inherit and rightly keep."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.slow
@pytest.mark.parametrize("how", ["ctrl-c", "sigterm"])
def test_ctrl_c_and_sigterm_say_how_to_resume_in_one_line_and_resume_exactly(tmp_path, how):
    """Does Ctrl-C (SIGINT to the grader's process group, as a terminal sends it), or SIGTERM to the grader
    alone (kill, a scheduler's time limit), end the batch with one line saying how to resume, no traceback,
    and leave what was graded; and does the same command then grade the rest, and only the rest?"""
    subs = tmp_path / "class"
    subs.mkdir()
    release = tmp_path / "release"
    (subs / "a.py").write_text((EXAMPLES / "alice.py").read_text())
    (subs / "b_waits.py").write_text((EXAMPLES / "alice.py").read_text() + (
        f"\nimport os, time\nwhile not os.path.exists({str(release)!r}):\n    time.sleep(0.05)\n"))
    out = tmp_path / "out"
    grader = subprocess.Popen([sys.executable, "-m", "autograder", "grade", "--assignment",
                               "custom-functions", "--out", str(out), "--jobs", "1", "--quiet",
                               "--load-timeout", "600", str(subs)],
                              cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              start_new_session=True, preexec_fn=_as_in_a_terminal)  # noqa: PLW1509 - one call
    try:
        for _ in range(3000):
            if (out / "a" / "results.json").exists() or grader.poll() is not None:
                break
            time.sleep(0.1)
        time.sleep(1)
        if how == "ctrl-c":
            os.killpg(grader.pid, signal.SIGINT)
        else:
            os.kill(grader.pid, signal.SIGTERM)
        _, stderr = grader.communicate(timeout=120)
    finally:
        release.touch()
        if grader.poll() is None:
            grader.kill()
    assert grader.returncode == 130
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr
    last = [line for line in stderr.splitlines() if line.strip()][-1]
    assert last.startswith("autograder: Stopped.") and "run the same command again" in last
    assert (out / "a" / "results.json").exists() and not (out / "b_waits" / "results.json").exists()
    first = (out / "a" / "results.json").read_bytes()
    # a worker never sees `release` (its /tmp is its own): b_waits is handed in again, without the wait
    (subs / "b_waits.py").write_text((EXAMPLES / "alice.py").read_text())
    again = subprocess.run(grader.args, cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert again.returncode == 0, again.stderr
    assert "2 submission(s): 1 already graded, 1 to grade (1 new)." in again.stderr
    assert (out / "a" / "results.json").read_bytes() == first  # kept, not graded again
    assert [row["submission"] for row in csv.DictReader((out / "grades.csv").open())] == ["a", "b_waits"]
