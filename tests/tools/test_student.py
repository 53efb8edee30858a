"""Are the student notebooks in course/ what the solutions make, free of solutions, and runnable?"""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest

from tests.conftest import ROOT
from tools.make_student import BEGIN, END, student_notebook

SOLUTIONS = ROOT / "solutions"
COURSE = ROOT / "course"
LESSONS = sorted(path.name for path in SOLUTIONS.glob("*.ipynb"))
RAISES = "raises-exception"
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def read(path: Path):
    return nbformat.read(path, as_version=4)


def normalised(line: str) -> str:
    """A line without surrounding blanks and without a trailing `  # comment`."""
    return line.split("  #")[0].strip()


def split_lines(nb) -> tuple[set[str], set[str]]:
    """The stripped lines of a notebook's cells inside solution regions, and those outside them.

    Read here line by line, independently of tools.make_student, so a bug there cannot hide a leak.
    """
    inside, outside = set(), set()
    for cell in nb.cells:
        in_region = False
        for line in cell.source.splitlines():
            stripped = line.strip()
            if stripped == BEGIN:
                in_region = True
            elif stripped == END:
                in_region = False
            else:
                (inside if in_region else outside).add(normalised(line))
    return inside, outside


def secret_lines() -> set[str]:
    """Solution lines worth looking for: not blank, longer than 10 characters, not a comment, and not
    also shown outside a solution region (a line the lesson itself prints in its narrative is no secret).
    """
    inside, outside = set(), set()
    for name in LESSONS:
        lesson_inside, lesson_outside = split_lines(read(SOLUTIONS / name))
        inside |= lesson_inside
        outside |= lesson_outside
    return {line for line in inside - outside if len(line) > 10 and not line.startswith("#")}


def everything_in(nb) -> str:
    """All the text of a notebook: sources and every output (text, data, tracebacks without colours)."""
    parts = []
    for cell in nb.cells:
        parts.append(cell.source)
        for output in cell.get("outputs", []):
            if "text" in output:
                parts.append(output["text"])
            for value in output.get("data", {}).values():
                parts.append(value if isinstance(value, str) else json.dumps(value))
            parts.extend(output.get("traceback", []))
            parts.append(f"{output.get('ename', '')}: {output.get('evalue', '')}")
    return ANSI.sub("", "\n".join(parts))


def test_course_has_one_notebook_per_lesson():
    """Does course/ hold a student notebook for every lesson of solutions/, and nothing else?"""
    assert LESSONS, "solutions/ has no lesson notebook"
    course = sorted(path.name for path in COURSE.glob("*.ipynb"))
    assert course == LESSONS, "run `make student` to regenerate course/ from solutions/"


@pytest.mark.parametrize("name", LESSONS)
def test_course_is_what_make_student_generates(name):
    """Is course/<lesson> exactly what `make student` generates from solutions/<lesson> (not stale)?"""
    path = COURSE / name
    assert path.exists(), f"course/{name} is missing: run `make student`"
    expected = student_notebook(read(SOLUTIONS / name))
    actual = read(path)
    assert actual.metadata == expected.metadata, f"course/{name}: metadata differ; run `make student`"
    assert len(actual.cells) == len(expected.cells), f"course/{name}: cells differ; run `make student`"
    for index, (got, want) in enumerate(zip(actual.cells, expected.cells), 1):
        assert got == want, f"course/{name}, cell {index} is stale: run `make student`"


@pytest.mark.parametrize("name", LESSONS)
def test_no_solution_line_leaks_into_course(name):
    """Does no line of any solution region appear in course/<lesson>, in its sources or its outputs?"""
    path = COURSE / name
    if not path.exists():
        pytest.skip(f"course/{name} is missing (test_course_has_one_notebook_per_lesson fails)")
    lines = {normalised(line) for line in everything_in(read(path)).splitlines()}
    secrets = secret_lines()
    # A secret shows as a whole line, or at the end of one, as in a traceback: "---> 12     return x"
    leaks = sorted({secret for line in lines for secret in secrets
                    if line == secret or line.endswith((" " + secret, ">" + secret))})
    assert leaks == [], f"course/{name} shows solution code or answers: {leaks}"


@pytest.mark.parametrize("name", LESSONS)
def test_no_cell_is_expected_to_raise(name):
    """Does every cell of solutions/<lesson> run without an error, so that Run All, which ignores the
    raises-exception tag, goes to the end (a lesson shows its errors through expect_error)?"""
    nb = read(SOLUTIONS / name)
    tagged = [index for index, cell in enumerate(nb.cells, 1) if RAISES in cell.metadata.get("tags", [])]
    errors = [index for index, cell in enumerate(nb.cells, 1)
              for output in cell.get("outputs", []) if output.output_type == "error"]
    assert (tagged, errors) == ([], []), f"solutions/{name}: cells tagged {RAISES} or showing an error"


@pytest.mark.slow
@pytest.mark.parametrize("name", LESSONS)
def test_course_notebook_fails_only_where_the_student_writes(name):
    """Does course/<lesson>, run as Run All does (no cell may raise), fail only with the NotImplementedError
    of an exercise not written yet?

    Run All stops at the first error; here every cell runs, so that a later demonstration that fails for
    another reason is found too.
    """
    from nbclient import NotebookClient

    path = COURSE / name
    if not path.exists():
        pytest.skip(f"course/{name} is missing (test_course_has_one_notebook_per_lesson fails)")
    nb = read(path)
    for cell in nb.cells:  # as Run All: the tag is not honoured there
        tags = cell.metadata.get("tags", [])
        if RAISES in tags:
            tags.remove(RAISES)
    client = NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(COURSE)}})
    client.execute()
    wrong = []
    for index, cell in enumerate(nb.cells, 1):
        for output in cell.get("outputs", []):
            if output.output_type == "error" and output.ename != "NotImplementedError":
                wrong.append(f"cell {index}: {output.ename}: {output.evalue}")
    assert wrong == [], (
        f"course/{name}: these cells fail for another reason than an unwritten exercise (a cell that needs "
        f"a solution should call the exercise's Function itself, see docs/STYLE.md): {wrong}"
    )


def test_a_predict_cell_keeps_a_blank_prediction_and_runs():
    """Does a predict() cell reach the learner as `name = ...  # your prediction` (which predict() answers
    with what to write, so Run All goes on), without the answer or its outputs?"""
    from tools.make_student import student_cell

    cell = nbformat.v4.new_code_cell(
        f"{BEGIN}\nleaves = {{'x', 'y', 'w', 'b'}}  # the solution\n{END}\npredict('1.leaves', leaves)",
        outputs=[nbformat.v4.new_output("stream", text="predict('1.leaves'): right")])
    student = student_cell(cell)
    assert student.source == "leaves = ...  # your prediction\npredict('1.leaves', leaves)"
    assert student.outputs == []


def test_every_code_cell_of_a_predict_section_loses_its_outputs():
    """Are the outputs of a Predict section's experiment cleared in the student notebook (the learner sees
    them by running the cell), and those of other sections kept?"""
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    printed = [nbformat.v4.new_output("stream", text="True\n")]
    nb = nbformat.v4.new_notebook(cells=[
        md("### Predict: does `detach()` copy?"), code("print(1)", outputs=printed),
        md("The answer is discussed here."), code("print(2)", outputs=printed),
        md("### What goes wrong here?"), code("print(3)", outputs=printed)])
    cells = student_notebook(nb).cells[1:]
    assert [len(c.outputs) for c in cells if c.cell_type == "code"] == [0, 0, 1]
