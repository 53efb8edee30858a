"""Does `release` put each student's feedback page where docs/instructors.md says: one zip that Canvas's
Re-Upload Submissions reads, a folder or a zip per student named by their Gradescope student id or
email, a manifest for a mail merge; and does it fail in one paragraph, writing nothing, where it cannot?"""

from __future__ import annotations

import csv
import json
import re
import zipfile

import pytest

from tests.conftest import autograder
from tests.intake.test_layouts import canvas, gradescope

PAGE = "custom-functions-feedback.html"


@pytest.fixture(scope="module")
def classes(tmp_path_factory):
    """Canvas's download and Gradescope's export, each graded as it arrives."""
    base = tmp_path_factory.mktemp("arrived")
    graded = {}
    for name, layout in (("canvas", canvas), ("gradescope", gradescope)):
        graded[name] = base / f"graded-{name}"
        autograder("grade", "--assignment", "custom-functions", "--out", graded[name], layout(base),
                   "--quiet")
    return graded


def manifest(folder) -> list[dict]:
    with (folder / "manifest.csv").open(newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.slow
def test_canvas_gets_one_zip_its_re_upload_attaches_to_each_submission(classes, tmp_path):
    out = tmp_path / "release"
    done = autograder("release", "--graded", classes["canvas"], "--to", out, "--format", "canvas")
    assert "canvas-feedback.zip, for Canvas's Re-Upload Submissions" in done.stdout
    with zipfile.ZipFile(out / "canvas-feedback.zip") as archive:
        names = sorted(archive.namelist())
        assert names == [f"jonesmary_4343_998879_{PAGE}", f"smithjohn_4242_998877_{PAGE}"]
        # Canvas reads the first two parts of the name that are all digits: the user id, then the id of a
        # file the student handed in (998877 is smith's notebook, the file graded)
        ids = [re.findall(r"(?<=_)\d+(?=_)", n)[:2] for n in names]
        assert ids == [["4343", "998879"], ["4242", "998877"]]
        smith = next(p for p in classes["canvas"].iterdir() if p.name.startswith("smithjohn"))
        assert archive.read(names[1]) == (smith / "feedback.html").read_bytes()
    assert sorted((r["canvas_user"], r["name"]) for r in manifest(out)) == [("4242", "smithjohn"),
                                                                             ("4343", "jonesmary")]


@pytest.mark.slow
def test_gradescope_students_get_a_folder_by_student_id_and_a_group_a_copy_each(classes, tmp_path):
    out = tmp_path / "release"
    autograder("release", "--graded", classes["gradescope"], "--to", out, "--name-by", "sid")
    assert sorted(p.name for p in out.iterdir()) == ["5001", "5002", "5003", "5004", "5005", "manifest.csv"]
    assert all([p.name for p in (out / sid).iterdir()] == [PAGE] for sid in ("5001", "5002", "5005"))
    assert (out / "5002" / PAGE).read_bytes() == (out / "5003" / PAGE).read_bytes()  # Turing and Lovelace
    assert b"Alan Turing + Ada Lovelace" in (out / "5002" / PAGE).read_bytes()
    rows = {r["sid"]: r for r in manifest(out)}
    assert rows["5003"]["email"] == "ada@uni.example" and rows["5003"]["file"] == f"5003/{PAGE}"


@pytest.mark.slow
def test_a_zip_per_student_by_email_and_canvas_ids_refused_where_there_are_none(classes, tmp_path):
    out = tmp_path / "release"
    autograder("release", "--graded", classes["gradescope"], "--to", out, "--format", "zip",
               "--name-by", "email")
    zips = sorted(p.name for p in out.glob("*.zip"))
    assert zips == ["ada@uni.example.zip", "alan.t@other.example.zip", "alan@uni.example.zip",
                    "aturing2@uni.example.zip", "grace@uni.example.zip"]
    with zipfile.ZipFile(out / "grace@uni.example.zip") as archive:
        assert archive.namelist() == [PAGE] and b"Grace Hopper" in archive.read(PAGE)
    refused = autograder("release", "--graded", classes["gradescope"], "--to", tmp_path / "canvas",
                         "--format", "canvas", check=False)
    assert refused.returncode == 2 and "Nothing was written" in " ".join(refused.stderr.split())
    assert "Traceback" not in refused.stderr and not (tmp_path / "canvas").exists()


@pytest.fixture()
def graded(tmp_path):
    """A folder as `grade` leaves it, for three students, without grading them."""
    folder = tmp_path / "graded"
    folder.mkdir()
    (folder / "grades.csv").write_text("submission,score,max_score\nann,3,4\nben,1,4\ncal,4,4\n")
    for sid in ("ann", "ben", "cal"):
        (folder / sid).mkdir()
        (folder / sid / "results.json").write_text(json.dumps({"score": 1, "tests": [], "extra_data": {
            "assignment": "custom-functions"}}))
        (folder / sid / "feedback.html").write_text(f"<p>the page of {sid}</p>")
    return folder


def test_a_release_made_again_replaces_its_own_files_only(graded, tmp_path):
    out = tmp_path / "release"
    autograder("release", "--graded", graded, "--to", out)
    assert (out / "ben" / PAGE).read_text() == "<p>the page of ben</p>"
    (graded / "grades.csv").write_text("submission,score,max_score\nann,3,4\ncal,4,4\n")  # ben withdrew
    autograder("release", "--graded", graded, "--to", out, "--format", "zip")
    assert sorted(p.name for p in out.iterdir()) == ["ann.zip", "cal.zip", "manifest.csv"]


def test_a_folder_that_holds_something_else_or_a_missing_id_is_refused_in_one_paragraph(graded, tmp_path):
    other = tmp_path / "documents"
    other.mkdir()
    (other / "exam.pdf").write_text("%PDF")
    for args, says in (((other,), "is not empty and holds no release"),
                       ((graded / "out",), "is inside the graded folder"),
                       ((tmp_path / "r", "--name-by", "email"),
                        "have none: ann, ben, cal. Nothing was written")):
        refused = autograder("release", "--graded", graded, "--to", *args, check=False)
        assert refused.returncode == 2 and says in " ".join(refused.stderr.split()), refused.stderr
        assert "Traceback" not in refused.stderr
    assert [p.name for p in other.iterdir()] == ["exam.pdf"] and not (tmp_path / "r").exists()


def hostile(tmp_path, people: dict[str, dict]):
    """A graded folder whose students' identities (Gradescope's metadata: untrusted) are people."""
    folder = tmp_path / "graded"
    folder.mkdir()
    rows = "".join(f"{sid},2,4\n" for sid in people)
    (folder / "grades.csv").write_text("submission,score,max_score\n" + rows)
    for sid, person in people.items():
        (folder / sid).mkdir()
        (folder / sid / "results.json").write_text(json.dumps({"score": 2, "tests": [], "extra_data": {
            "assignment": "custom-functions", "identity": {**person, "submitters": [person]}}}))
        (folder / sid / "feedback.html").write_text(f"<p>the page of {sid}</p>")
    return folder


@pytest.mark.parametrize(("by", "field", "values"), [
    ("email", "email", ["a/b@uni.example", "a_b@uni.example"]),  # one folder name once made safe
    ("sid", "sid", ["ABC", "abc"]),  # one folder on macOS and Windows, and in a zip opened there
    ("sid", "sid", ["7" * 300 + "1", "7" * 300 + "2"]),  # one name once cut to a file name's length
])
def test_two_students_whose_names_give_one_file_are_refused(tmp_path, by, field, values):
    """A student whose email or student id gives the same file name as another's used to get that
    student's page (one file written over the other, and both manifest rows naming it)."""
    people = {f"s{i}": {"name": f"S {i}", field: value} for i, value in enumerate(values)}
    graded, out = hostile(tmp_path, people), tmp_path / "release"
    refused = autograder("release", "--graded", graded, "--to", out, "--name-by", by, check=False)
    said = " ".join(refused.stderr.split())
    assert refused.returncode == 2 and "s0 and s1" in said and "Nothing was written" in said, said
    assert "Traceback" not in refused.stderr and not out.exists()


def test_a_name_a_spreadsheet_would_run_is_a_file_the_manifest_names_exactly(tmp_path):
    """--name-by id with an id such as =HYPERLINK(...): the manifest's cell was neutralised with an
    apostrophe, so it no longer named the file written (a mail merge attached nothing), and a release
    made again did not remove it."""
    graded = hostile(tmp_path, {"=HYPERLINK(1)": {"name": "x"}, "ann": {"name": "Ann"}})
    out = tmp_path / "release"
    autograder("release", "--graded", graded, "--to", out)
    files = [row["file"] for row in manifest(out)]
    assert all((out / f).is_file() and not f.startswith(("=", "'")) for f in files), files
    (graded / "grades.csv").write_text("submission,score,max_score\nann,2,4\n")  # the other withdrew
    autograder("release", "--graded", graded, "--to", out)
    assert sorted(p.name for p in out.iterdir()) == ["ann", "manifest.csv"]


def test_a_manifest_that_is_not_a_releases_removes_nothing(graded, tmp_path):
    """A manifest.csv in --to that the grader did not write (another tool's, or edited) named files that
    a release made there deleted, outside --to too."""
    out, kept = tmp_path / "release", tmp_path / "keep.txt"
    out.mkdir()
    kept.write_text("mine")
    (out / "notes.txt").write_text("mine")
    (out / "manifest.csv").write_text(f"file,what\n{kept},x\n../keep.txt,x\nnotes.txt,x\n")
    autograder("release", "--graded", graded, "--to", out, check=False)
    assert kept.read_text() == "mine" and (out / "notes.txt").read_text() == "mine"
