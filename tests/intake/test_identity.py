"""Is every student graded as who they are, whatever the layout: nbgrader's submitted/<student>/<assignment>/
tree with two assignments, Canvas's resubmissions and late flags, a student who handed in a PDF only (in a
folder, in a Canvas download, in a Gradescope export, zipped or not), a folder holding the untouched lesson
beside the real work, a folder name that is not UTF-8; and is what cannot be told refused before grading?"""

import os
import shutil
import zipfile
from pathlib import Path

import pytest

from autograder.intake.layouts import NoSubmissions
from autograder.intake.loader import load
from tests.conftest import ROOT
from tests.intake.test_layouts import ALICE, BOB, LESSON, METADATA, PROBLEMS, lesson, zipped

UNTOUCHED = ROOT / "course" / "02-custom-functions.ipynb"  # the lesson as students get it: stubs only


def loaded(paths: list[Path], warnings: list[str] | None = None) -> dict:
    return {s.id: s for s in load(paths, LESSON, warnings, PROBLEMS)}


def nbgrader(base: Path, root: str = "submitted") -> Path:
    """alice and bob handed in ps1 (lesson 1) and ps2 (this lesson), carol ps1 only."""
    top = base / root
    for student, code in (("alice", ALICE), ("bob", BOB), ("carol", None)):
        lesson(top / student / "ps1" / "01-autograd-basics.ipynb", "x = 1")
        if code is not None:
            lesson(top / student / "ps2" / "02-custom-functions.ipynb", code)
            (top / student / "ps2" / "timestamp.txt").write_text("2026-03-01 10:00:00.000000 UTC")
    return top


@pytest.mark.parametrize("root", ["submitted", "autograded"])
@pytest.mark.parametrize("zipped_up", [False, True])
def test_nbgrader_tree_grades_the_assignment_under_each_students_name(tmp_path, root, zipped_up):
    """Does nbgrader's tree keep the students' names as ids, grade this lesson's assignment folder only,
    keep nbgrader's submission time, and give a student without it a row that says so?"""
    top = nbgrader(tmp_path, root)
    path = zipped(top, tmp_path / "class.zip", root) if zipped_up else top
    subs = loaded([path])
    assert sorted(subs) == ["alice", "bob", "carol"]
    assert [subs[s].file for s in ("alice", "bob")] == ["02-custom-functions.ipynb"] * 2
    assert subs["alice"].identity["submitted"] == "2026-03-01 10:00:00.000000 UTC"
    assert subs["alice"].identity["nbgrader_assignment"] == "ps2"
    assert "No ps2 folder was found among your submissions (you handed in: ps1)" in subs["carol"].error


def test_assignment_folders_named_are_graded_as_the_student_above(tmp_path):
    """Does naming submitted/*/ps2 give each student's name as the id, not the notebook's?"""
    top = nbgrader(tmp_path)
    subs = loaded(sorted(top.glob("*/ps2")))
    assert {s: subs[s].file for s in subs} == {"alice": "02-custom-functions.ipynb",
                                               "bob": "02-custom-functions.ipynb"}


def test_one_students_nbgrader_folder_named_is_that_student(tmp_path):
    """Does naming submitted/alice grade alice's ps2, as alice?"""
    subs = loaded([nbgrader(tmp_path) / "alice"])
    assert {s: subs[s].file for s in subs} == {"alice": "02-custom-functions.ipynb"}


def test_an_nbgrader_tree_whose_assignment_cannot_be_told_is_refused(tmp_path):
    """When no assignment folder holds the lesson's notebook, is the batch refused before grading, with
    the assignments found and what to name instead?"""
    top = tmp_path / "submitted"
    for assignment in ("ps1", "ps2"):
        lesson(top / "alice" / assignment / "homework.ipynb", ALICE)
    with pytest.raises(NoSubmissions) as refused:
        loaded([top])
    message = str(refused.value)
    assert "nbgrader's submitted/<student>/<assignment>/, with the assignments ps1, ps2" in message
    assert f"Name the assignment's folders instead, e.g. {top}/*/ps2" in message


def canvas(base: Path) -> Path:
    """smith uploaded the lesson twice (Canvas's -1 is the second), jones late, doe a PDF only."""
    root = base / "canvas"
    lesson(root / "smithjohn_4242_998877_02-custom-functions.ipynb", BOB)
    lesson(root / "smithjohn_4242_998877_02-custom-functions-1.ipynb", ALICE)
    lesson(root / "jonesmary_LATE_4343_998879_02-custom-functions.ipynb", ALICE)
    (root / "doejane_4444_998880_answers.pdf").write_bytes(b"%PDF-1.4")
    return root


@pytest.mark.parametrize("zipped_up", [False, True])
def test_canvas_resubmission_and_late_flag_are_kept(tmp_path, zipped_up):
    """Is Canvas's later upload (-1) graded and its number kept, the late flag kept, and does a student
    who handed in a PDF only get a row, zipped or not?"""
    root = canvas(tmp_path)
    subs = loaded([zipped(root, tmp_path / "canvas.zip") if zipped_up else root])
    smith = subs["smithjohn_4242_998877_02-custom-functions-1"]
    assert smith.identity["resubmission"] == 1 and smith.identity["late"] is False
    assert subs["jonesmary_LATE_4343_998879_02-custom-functions"].identity["late"] is True
    doe = subs["doejane_4444_998880_answers"]
    assert doe.identity["name"] == "doejane" and "No notebook (.ipynb) or Python file (.py)" in doe.error
    assert len(subs) == 3


@pytest.mark.parametrize("zipped_up", [False, True])
def test_a_pdf_only_student_gets_a_row_in_every_layout(tmp_path, zipped_up):
    """In a folder per student and in Gradescope's export, does a student whose folder holds a PDF only
    get a row that says why, zipped or not?"""
    folders, export = tmp_path / "folders", tmp_path / "export"
    lesson(folders / "alice" / "02-custom-functions.ipynb", ALICE)
    (folders / "pdfonly").mkdir()
    (folders / "pdfonly" / "answers.pdf").write_bytes(b"%PDF-1.4")
    export.mkdir()
    (export / "submission_metadata.yml").write_text(METADATA)
    lesson(export / "submission_1001" / "02-custom-functions.ipynb", ALICE)
    (export / "submission_1002").mkdir()
    (export / "submission_1002" / "scan.pdf").write_bytes(b"%PDF-1.4")
    paths = [folders, export]
    if zipped_up:
        paths = [zipped(folders, tmp_path / "folders.zip"), zipped(export, tmp_path / "export.zip", "export")]
    subs = loaded(paths)
    assert sorted(subs) == ["Alan Turing + Ada Lovelace", "Grace Hopper", "alice", "pdfonly"]
    for sid in ("pdfonly", "Alan Turing + Ada Lovelace"):
        assert "No notebook (.ipynb) or Python file (.py) was found" in subs[sid].error


@pytest.mark.parametrize("zipped_up", [False, True])
def test_the_real_work_is_graded_beside_the_untouched_lesson(tmp_path, zipped_up):
    """With the untouched lesson notebook beside my_solution.ipynb, is the solution graded (it defines the
    problems, the lesson only stubs them), and is the lesson named as not graded, with why?"""
    folder = tmp_path / "class"
    (folder / "erin").mkdir(parents=True)
    shutil.copy(UNTOUCHED, folder / "erin" / "02-custom-functions.ipynb")
    lesson(folder / "erin" / "my_solution.ipynb", ALICE)
    (erin,) = loaded([zipped(folder, tmp_path / "class.zip", "class") if zipped_up else folder]).values()
    assert erin.file == "my_solution.ipynb"
    assert erin.ignored == [("02-custom-functions.ipynb: not graded: it defines 0 of the 4 problems (none), "
                             "my_solution.ipynb defines 4")]


def test_the_real_work_in_a_subfolder_is_graded_beside_the_lesson(tmp_path):
    """Is a notebook deeper in the student's folder that defines the problems graded rather than the
    untouched lesson at the top, and the untouched lesson named as not graded?"""
    folder = tmp_path / "class"
    (folder / "erin").mkdir(parents=True)
    shutil.copy(UNTOUCHED, folder / "erin" / "02-custom-functions.ipynb")
    lesson(folder / "erin" / "work" / "hw.ipynb", ALICE)
    (erin,) = loaded([folder]).values()
    assert (erin.file, erin.ignored[0].split(":")[0]) == ("hw.ipynb", "02-custom-functions.ipynb")


def test_a_name_that_is_not_utf8_is_read_and_reported(tmp_path):
    """Is a folder whose name is Latin-1 (not UTF-8) given the name it spells, and the instructor told?"""
    if os.fsencode("x") != b"x" or not os.path.supports_unicode_filenames and os.name == "nt":
        pytest.skip("needs a POSIX file system")
    top = tmp_path / "class"
    top.mkdir()
    folder = os.path.join(os.fsencode(top), b"M\xfcller")
    os.mkdir(folder)
    lesson(Path(os.fsdecode(folder)) / "02-custom-functions.ipynb", ALICE)
    lesson(top / "alice" / "02-custom-functions.ipynb", ALICE)
    warnings: list[str] = []
    subs = loaded([top], warnings)
    assert sorted(subs) == ["Müller", "alice"]
    assert subs["Müller"].identity["name_bytes"] == b"M\xfcller".hex()
    assert any("b'M\\xfcller' is not UTF-8; it was read as Windows-1252: 'Müller'" in w for w in warnings)


def test_zip_of_a_pdf_is_listed_never_inflated(tmp_path):
    """Is a large PDF in a zip written as an empty file of its name (the student is found), never
    inflated?"""
    from autograder.intake.unzip import remove, unpack

    target = tmp_path / "one.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("bob/answers.pdf", b"\0" * 10_000_000)
    unpacked = unpack(target, tmp_path)
    try:
        assert (unpacked.folder / "bob" / "answers.pdf").stat().st_size == 0
    finally:
        remove(unpacked.folder)


def test_zip_names_not_marked_utf8_are_read_as_written_and_reported(tmp_path):
    """A zip whose names are UTF-8 but not marked so (as many tools write them) gives the student's name;
    one whose names are in another code page is read as the zip standard's code page 437, and the
    instructor is told."""
    notebook = tmp_path / "nb.ipynb"
    lesson(notebook, ALICE)
    target = tmp_path / "class.zip"
    with zipfile.ZipFile(target, "w") as z:
        for placeholder in ("MXXller", "JXrg"):
            z.write(notebook, f"class/{placeholder}/02-custom-functions.ipynb")
    raw = target.read_bytes().replace(b"MXXller", "Müller".encode()).replace(b"JXrg", b"J\xf6rg")
    target.write_bytes(raw)
    warnings: list[str] = []
    subs = loaded([target], warnings)
    assert sorted(subs) == ["J÷rg", "Müller"]  # b"\xf6" is ÷ in code page 437
    assert warnings == [("class.zip: the name of class/J÷rg/02-custom-functions.ipynb is not UTF-8; it was "
                         "read as the zip standard's code page 437. Check the student's name.")]
