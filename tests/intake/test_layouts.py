"""Are submissions found with the right ids in the layouts instructors get: a folder per student (with a
helper module the notebook imports), Canvas's bulk download, Gradescope's export with its metadata, and
zips of each; is a zip that tries to write outside its folder unpacked safely; are ids stable when a
student is added; and does `export` write one row per student?"""

import csv
import json
import os
import shutil
import sys
import zipfile
from pathlib import Path

import pytest

from autograder.course import find_assignment
from autograder.intake.layouts import uploads
from autograder.intake.loader import load
from autograder.judge.checks import max_score
from tests.conftest import EXAMPLES, autograder, notebook

ALICE, BOB = (EXAMPLES / "alice.py").read_text(), (EXAMPLES / "bob.py").read_text()
LESSON = ("02-custom-functions", "custom-functions")
FULL = max_score(find_assignment("custom-functions"))
PROBLEMS = tuple(p.lookup for p in find_assignment("custom-functions").problems)
IMPORTS = "from helpers import KillHead, MyReLU, Exp, LinearFunction\n"
METADATA = """\
submission_1001:
  :submitters:
  - :name: Grace Hopper
    :sid: '5001'
    :email: grace@uni.example
  :created_at: 2025-03-01 10:00:00.000000000 -08:00
  :score: 0.0
submission_1002:
  :submitters:
  - :name: Alan Turing
    :sid: '5002'
    :email: alan@uni.example
  - :name: Ada Lovelace
    :sid: '5003'
    :email: ada@uni.example
  :created_at: 2025-03-02 11:00:00.000000000 -08:00
submission_1003:
  :submitters:
  - :name: Alan Turing
    :sid: '5004'
    :email: aturing2@uni.example
submission_1004:
  :submitters:
  - :name: Alan Turing
    :sid: '5005'
    :email: alan.t@other.example
"""


def lesson(path: Path, *cells: str) -> None:
    """A student's lesson notebook: its title, then these code cells."""
    notebook(path, *cells, title="# Lesson 2")


def folder_per_student(base: Path) -> Path:
    """alice: a notebook importing her helpers.py; bob: one wrong .py; carol: two notebooks, the lesson's
    graded; dan: a notebook inside a folder of his own folder."""
    root = base / "folders"
    lesson(root / "alice" / "02-custom-functions.ipynb", IMPORTS, "x = KillHead")
    (root / "alice" / "helpers.py").write_text(ALICE)
    (root / "bob").mkdir(parents=True)
    (root / "bob" / "lab.py").write_text(BOB)
    lesson(root / "carol" / "scratch.ipynb", "raise SystemExit")
    lesson(root / "carol" / "02-custom-functions.ipynb", ALICE)
    lesson(root / "dan" / "hw2" / "notebook.ipynb", ALICE)
    return root


def canvas(base: Path) -> Path:
    """Canvas's "Download Submissions": smith's notebook and helper module (resubmitted: -1), jones late."""
    root = base / "canvas"
    lesson(root / "smithjohn_4242_998877_02-custom-functions.ipynb", IMPORTS)
    (root / "smithjohn_4242_998878_helpers-1.py").write_text(ALICE)
    (root / "jonesmary_LATE_4343_998879_lab2.py").write_text(BOB)
    return root


def gradescope(base: Path) -> Path:
    """Gradescope's "Export Submissions": the metadata, a folder per submission, a group of two, and two
    students of the same name."""
    root = base / "assignment_777_export"
    root.mkdir(parents=True)
    (root / "submission_metadata.yml").write_text(METADATA)
    lesson(root / "submission_1001" / "02-custom-functions.ipynb", IMPORTS)
    (root / "submission_1001" / "helpers.py").write_text(ALICE)
    (root / "submission_1002").mkdir()
    (root / "submission_1002" / "answers.py").write_text(BOB)
    for n in ("1003", "1004"):
        (root / f"submission_{n}").mkdir()
        (root / f"submission_{n}" / "answers.py").write_text(ALICE)
    return root


def zipped(folder: Path, target: Path, inside: str | None = None) -> Path:
    """A zip of the folder: its files at the top, or inside one folder named `inside`."""
    with zipfile.ZipFile(target, "w") as z:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                name = path.relative_to(folder).as_posix()
                z.write(path, f"{inside}/{name}" if inside else name)
    return target


EXPECTED = {
    "alice": ("02-custom-functions.ipynb", ["helpers.py"]),
    "bob": ("lab.py", []),
    "carol": ("02-custom-functions.ipynb", []),
    "dan": ("notebook.ipynb", []),
    "smithjohn_4242_998877_02-custom-functions": ("smithjohn_4242_998877_02-custom-functions.ipynb",
                                                  ["helpers.py"]),
    "jonesmary_LATE_4343_998879_lab2": ("jonesmary_LATE_4343_998879_lab2.py", []),
    "Grace Hopper": ("02-custom-functions.ipynb", ["helpers.py"]),
    "Alan Turing + Ada Lovelace": ("answers.py", []),
    "Alan Turing (aturing2)": ("answers.py", []),
    "Alan Turing (alan.t)": ("answers.py", []),
}


@pytest.fixture()
def layouts(tmp_path) -> dict[str, Path]:
    return {"folders": folder_per_student(tmp_path), "canvas": canvas(tmp_path),
            "gradescope": gradescope(tmp_path)}


def found(paths: list[Path]) -> dict[str, tuple[str, list[str]]]:
    return {s.id: (s.file, sorted(s.modules)) for s in load(paths, LESSON)}


def test_each_layout_gives_students_their_ids(layouts):
    """Does each layout give each student one submission, with its notebook graded and the .py files
    beside it as modules, named as the layout names students?"""
    assert found(list(layouts.values())) == EXPECTED


def test_gradescope_metadata_gives_names_emails_and_ids(layouts):
    """Are the students of Gradescope's metadata kept: names, emails, student ids, submission time?"""
    subs = {s.id: s for s in load([layouts["gradescope"]], LESSON)}
    group = subs["Alan Turing + Ada Lovelace"].identity
    assert [p["email"] for p in group["submitters"]] == ["alan@uni.example", "ada@uni.example"]
    assert group["gradescope_submission"] == "1002" and group["submitted"].startswith("2025-03-02")
    assert subs["Grace Hopper"].identity["submitters"][0]["sid"] == "5001"


@pytest.mark.parametrize("inside", [None, "class"])
def test_zips_of_each_layout_give_the_same_ids(layouts, tmp_path, inside):
    """Does a zip of each layout, with its files at the top or inside one folder, give the same ids and
    files, the temporary folders removed afterwards?"""
    zips = [zipped(folder, tmp_path / f"{name}.zip", inside) for name, folder in layouts.items()]
    pattern = f"autograder-{os.getpid()}-unzip-*"
    assert found(zips) == EXPECTED
    assert list(Path("/tmp").glob(pattern)) == []


def test_a_students_zip_in_a_folder_is_that_student(tmp_path):
    """Is a zip lying in a folder one student's submission, its id the zip's name; and is Canvas's whole
    download, zipped, inside a folder, read as the class it is?"""
    student = tmp_path / "student"
    lesson(student / "hw.ipynb", IMPORTS)
    (student / "helpers.py").write_text(ALICE)
    root = tmp_path / "class"
    root.mkdir()
    zipped(student, root / "erin.zip")
    zipped(canvas(tmp_path), root / "submissions.zip")
    smith, jones = "smithjohn_4242_998877_02-custom-functions", "jonesmary_LATE_4343_998879_lab2"
    assert found([root]) == {"erin": ("hw.ipynb", ["helpers.py"]), smith: EXPECTED[smith],
                             jones: EXPECTED[jones]}


def test_ids_stay_when_students_come_and_go(layouts):
    """Do the ids of the others stay the same when a student is added, or removed, in every layout?"""
    before = found(list(layouts.values()))
    (layouts["folders"] / "aaron").mkdir()
    (layouts["folders"] / "aaron" / "x.py").write_text(ALICE)
    (layouts["canvas"] / "abbot_4000_1_lab.py").write_text(ALICE)
    shutil.rmtree(layouts["folders"] / "bob")
    after = found(list(layouts.values()))
    assert set(after) == set(before) - {"bob"} | {"aaron", "abbot_4000_1_lab"}
    assert all(after[sid] == before[sid] for sid in after if sid in before)


def test_several_python_files_without_a_notebook(tmp_path):
    """With .py files only, is the one the others do not import graded, and are two unrelated ones the
    student's error, named, rather than a guess?"""
    (tmp_path / "s1").mkdir()
    (tmp_path / "s1" / "main.py").write_text("import helpers\n" + ALICE)
    (tmp_path / "s1" / "helpers.py").write_text("X = 1\n")
    (tmp_path / "s2").mkdir()
    (tmp_path / "s2" / "a.py").write_text(ALICE)
    (tmp_path / "s2" / "b.py").write_text(BOB)
    subs = {s.id: s for s in load([tmp_path], LESSON)}
    assert subs["s1"].file == "main.py" and list(subs["s1"].modules) == ["helpers.py"]
    assert "several Python files and no notebook (a.py, b.py)" in subs["s2"].error


def test_gradescope_upload_grades_the_file_a_local_batch_grades(tmp_path):
    """On Gradescope (one student's upload), is the notebook a local batch would grade the one graded,
    with the .py files as modules, the other notebook named as not graded and why, and the helper module
    never graded on its own?"""
    upload = tmp_path / "student"
    lesson(upload / "02-custom-functions.ipynb", IMPORTS)
    lesson(upload / "draft.ipynb", "x = 1")
    (upload / "helpers.py").write_text(ALICE)
    discovery = uploads(upload, LESSON, PROBLEMS)
    assert [(f.graded.name, sorted(f.modules)) for f in discovery.found] == [
        ("02-custom-functions.ipynb", ["helpers.py"])]
    assert discovery.found[0].ignored == [
        "draft.ipynb: not graded: it defines 0 of the 4 problems (none), 02-custom-functions.ipynb defines 4"]
    (local,) = load([tmp_path], LESSON, problems=PROBLEMS)
    assert (local.file, local.ignored) == ("02-custom-functions.ipynb", discovery.found[0].ignored)


# -- the whole way through the command line -----------------------------------------------------------------

def scores(out: Path) -> dict[str, float]:
    return {row["submission"]: float(row["score"]) for row in csv.DictReader((out / "grades.csv").open())}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Each layout graded through the command line, as folders and as zips, then again with a student
    added."""
    base = tmp_path_factory.mktemp("layouts")
    roots = [folder_per_student(base), canvas(base), gradescope(base)]
    zips = [zipped(root, base / f"{root.name}.zip", "top" if i == 2 else None)
            for i, root in enumerate(roots)]
    folders_out, zips_out = base / "out-folders", base / "out-zips"
    grade = ("grade", "--assignment", "custom-functions", "--jobs", "2", "--quiet")
    first = autograder(*grade, "--out", folders_out, *roots, timeout=1800)
    autograder(*grade, "--out", zips_out, *zips, timeout=1800)
    before = {sid: (folders_out / sid / "results.json").stat().st_ino for sid in EXPECTED}
    (roots[0] / "aaron").mkdir()
    (roots[0] / "aaron" / "lab.py").write_text(ALICE)
    again = autograder(*grade, "--out", folders_out, *roots, timeout=1800)
    after = {sid: (folders_out / sid / "results.json").stat().st_ino for sid in EXPECTED}
    canvas_csv = base / "canvas.csv"
    exported = autograder("export", "--graded", folders_out, "--canvas", canvas_csv, timeout=1800)
    return {"folders": folders_out, "zips": zips_out, "first": first, "again": again, "before": before,
            "after": after, "canvas": canvas_csv, "exported": exported}


@pytest.mark.slow
def test_every_layout_is_graded_with_helpers_imported(graded):
    """Does every student get their score under their id, the notebooks that import a helper module
    beside them full marks (locally, in a worker), and a wrong one less?"""
    got = scores(graded["folders"])
    assert set(got) == set(EXPECTED) | {"aaron"}
    for sid in ("alice", "carol", "dan", "smithjohn_4242_998877_02-custom-functions", "Grace Hopper",
                "Alan Turing (aturing2)", "Alan Turing (alan.t)", "aaron"):
        results = json.loads((graded["folders"] / sid / "results.json").read_text())
        assert got[sid] == FULL, (sid, results["tests"])
    assert got["bob"] < FULL and got["Alan Turing + Ada Lovelace"] == got["bob"]


@pytest.mark.slow
def test_zips_grade_the_same_as_folders(graded):
    """Do the zips of the three layouts give the very same ids and scores as the folders?"""
    folders = scores(graded["folders"])
    assert scores(graded["zips"]) == {sid: s for sid, s in folders.items() if sid != "aaron"}


@pytest.mark.slow
def test_a_new_student_leaves_the_others_graded(graded):
    """When a student is added, is only that student graded, the others kept as they were (same ids, same
    files), and does the grader say so?"""
    assert graded["after"] == graded["before"]
    assert "11 submission(s): 10 already graded, 1 to grade (1 new)." in graded["again"].stderr


@pytest.mark.slow
def test_export_writes_one_row_per_student(graded):
    """Does export write one row per student, whatever the layout: the group's two students each with the
    group's score, Canvas users by their Canvas id, Gradescope students by email, and say the policy?"""
    rows = list(csv.reader(graded["canvas"].open()))[2:]
    assert len(rows) == len(EXPECTED) + 1 + 1  # the group counts for two students, aaron is new
    by_login = {r[3] or r[1]: r for r in rows}
    bob = scores(graded["folders"])["bob"]
    assert by_login["alan@uni.example"][:3] == ["Alan Turing", "", "5002"]
    assert float(by_login["alan@uni.example"][5]) == float(by_login["ada@uni.example"][5]) == bob
    assert by_login["aturing2@uni.example"][5] == by_login["alan.t@other.example"][5] == f"{FULL:g}"
    by_name = {r[0]: r for r in rows}
    assert by_name["smithjohn"][1] == "4242" and by_name["smithjohn"][5] == f"{FULL:g}"
    assert "the best score counts" in graded["exported"].stdout


def test_export_policy_chooses_best_or_latest(tmp_path):
    """With two submissions of one student (a Gradescope resubmission), does --policy best take the higher
    score and --policy latest the later one, and does it say which?"""
    from autograder.report.export import canvas_csv, read_graded

    folder = tmp_path / "graded"
    folder.mkdir()
    people = {"first": (30, "2025-03-01 10:00:00"), "second": (20, "2025-03-05 10:00:00")}
    (folder / "grades.csv").write_text("submission,score,max_score\n" + "".join(
        f"{sid},{score},38\n" for sid, (score, _) in people.items()))
    for sid, (score, when) in people.items():
        (folder / sid).mkdir()
        identity = {"name": "Grace Hopper", "submitted": when,
                    "submitters": [{"name": "Grace Hopper", "email": "grace@uni.example"}]}
        (folder / sid / "results.json").write_text(json.dumps({"score": score, "tests": [], "extra_data": {
            "assignment": "custom-functions", "identity": identity}}))
    graded_rows, assignment = read_graded(folder)
    best = list(csv.reader(canvas_csv(graded_rows, assignment, policy="best").csv.splitlines()))[2:]
    latest = canvas_csv(graded_rows, assignment, policy="latest")
    assert [r[-1] for r in best] == ["30"]
    assert [r[-1] for r in csv.reader(latest.csv.splitlines())][2:] == ["20"]
    assert latest.duplicates == ["Grace Hopper: first, second"]


def test_results_never_hold_the_instructors_paths(tmp_path):
    """Does the batch's path filter take the grader's folders, Python's and the workers' temporary folders
    out of a traceback a student reads?"""
    from autograder.pipeline import Private

    private = Private([tmp_path / "submissions", tmp_path / "out"])
    text = (f'File "{tmp_path}/submissions/alice/helpers.py", line 3\n'
            f'File "/tmp/autograder-123-abc_d/helpers.py", line 4\n'
            f'File "/tmp/autograder-123-unzip-x1/alice/nb.py", line 5\n'
            f'File "{sys.prefix}/lib/python3.11/site-packages/torch/autograd/function.py", line 5\n'
            f"{os.path.expanduser('~')}/notes.txt")
    cleaned = private(text)
    assert str(tmp_path) not in cleaned and "/tmp/autograder-" not in cleaned and sys.prefix not in cleaned
    assert '"alice/helpers.py"' in cleaned and '"helpers.py", line 4' in cleaned and "<python>/lib" in cleaned
    assert '"alice/nb.py", line 5' in cleaned


def test_an_unreadable_file_is_named_without_the_instructors_path(tmp_path, monkeypatch):
    """Does a file the grader may not open become that submission's error naming the file only (never the
    folder it lies in on the instructor's machine), marked unreadable so that the instructor is told?"""
    from autograder.intake import files

    folder = tmp_path / "home" / "prof" / "course"
    (folder / "alice").mkdir(parents=True)
    (folder / "alice" / "hw.ipynb").write_text("{}")
    real_open = os.open

    def denied(path, *args, **kwargs):
        if str(path).endswith("hw.ipynb"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(files.os, "open", denied)
    (sub,) = load([folder])
    assert sub.unreadable and sub.error == "hw.ipynb could not be read (Permission denied)."
    assert str(tmp_path) in sub.found_at  # for the instructor's list only


def test_a_problem_bound_by_assignment_counts_as_defined(tmp_path):
    """Is sinh = lambda x: Sinh.apply(x)[0] a definition of sinh (a right answer, written without def),
    while sinh = None, a placeholder, is not?"""
    from autograder.intake.student_files import implemented
    path = tmp_path / "answers.py"
    path.write_text("sinh = lambda x: Sinh.apply(x)[0]\nCube = None\n")
    assert implemented(path, ("sinh", "Cube")) == {"sinh"}
