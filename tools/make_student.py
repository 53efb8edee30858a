"""Generates the student notebooks from the solutions: python -m tools.make_student solutions course

The nbgrader convention: in a code cell, the lines from `### BEGIN SOLUTION` to `### END SOLUTION`
become `raise NotImplementedError()` at the marker's indentation; in a markdown cell they become
"YOUR ANSWER HERE". In a cell that calls `predict(` (a Predict question answered in code), each line
`name = value` of a region becomes `name = ...  # your prediction`, which predict() answers with what to
write, so that Run All goes on. A cell that held a solution, calls `check(` or `predict(`, or is tagged
`uses-solution` loses its outputs, since they were computed by solution code or give an answer away. So
does every code cell of a Predict section (from its heading to the next heading): the learner runs the
experiment after predicting. Every other cell, narrative and outputs of demonstrations, is kept as it is.

Every student notebook starts with the set-up cell SETUP: it does nothing where the course's package
imports, and otherwise installs it from the course's release (autograder.PACKAGE_URL, or the wheel or
address in $AUTOGRADER_PACKAGE), so that a notebook opened in Colab, Binder or a bare Jupyter works. Where
pip fails (offline, say) it stops Run All with one paragraph that says how to install from a wheel, and pip's
last lines, instead of a traceback. Plain `pip install` keeps an installed torch that the package's range
accepts (pip's default upgrade strategy, only-if-needed), so Colab keeps its own PyTorch.
"""

import argparse
import re
import sys
from pathlib import Path

import nbformat

from autograder.course.setup_cell import SETUP

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
USES_SOLUTION = "uses-solution"
CHECK_CALL = re.compile(r"\bcheck\(")
PREDICT_CALL = re.compile(r"\bpredict\(")
ASSIGNED = re.compile(r"^(\s*)([A-Za-z_]\w*)\s*=[^=]")
HEADING = re.compile(r"^#{1,6}\s+(.*)")
SETUP_ID = "course-setup"


def solution_regions(source: str) -> list[list[str]]:
    """The lines inside each solution region of a cell's source (markers excluded)."""
    regions, current = [], None
    for line in source.splitlines():
        if line.strip() == BEGIN:
            current = []
        elif line.strip() == END and current is not None:
            regions.append(current)
            current = None
        elif current is not None:
            current.append(line)
    return regions


def strip_solutions(source: str, replacement: str) -> str:
    out, inside = [], False
    for line in source.splitlines():
        if line.strip() == BEGIN:
            inside = True
            indent = line[: len(line) - len(line.lstrip())]
            out.append(indent + replacement)
        elif line.strip() == END and inside:
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise ValueError(f"a `{BEGIN}` has no matching `{END}`")
    return "\n".join(out)


def blank_predictions(source: str) -> str:
    """A predict() cell as the learner gets it: each `name = value` of a solution region becomes
    `name = ...  # your prediction` (other lines of the region are dropped)."""
    out, inside = [], False
    for line in source.splitlines():
        if line.strip() == BEGIN:
            inside = True
        elif line.strip() == END and inside:
            inside = False
        elif not inside:
            out.append(line)
        elif match := ASSIGNED.match(line):
            out.append(f"{match.group(1)}{match.group(2)} = ...  # your prediction")
    if inside:
        raise ValueError(f"a `{BEGIN}` has no matching `{END}`")
    return "\n".join(out)


def task_source(source: str) -> str:
    """A solution code cell as the learner gets it."""
    if PREDICT_CALL.search(source):
        return blank_predictions(source)
    return strip_solutions(source, "raise NotImplementedError()")


def predict_sections(cells) -> set[int]:
    """The indices of the code cells of Predict sections (from a `Predict` heading to the next heading):
    their outputs show what the learner is asked to predict."""
    found, section = set(), False
    for index, cell in enumerate(cells):
        if cell.cell_type == "markdown":
            titles = [m.group(1) for m in map(HEADING.match, cell.source.splitlines())
                      if m and "SOLUTION" not in m.group(1)]
            if titles:
                section = titles[-1].startswith("Predict")
        elif section and cell.cell_type == "code":
            found.add(index)
    return found


def student_cell(cell, answers: bool = False):
    has_solution = BEGIN in cell.source
    if cell.cell_type == "markdown" and has_solution:
        cell.source = strip_solutions(cell.source, "YOUR ANSWER HERE")
    elif cell.cell_type == "code":
        tags = cell.metadata.get("tags", [])
        calls = CHECK_CALL.search(cell.source) or PREDICT_CALL.search(cell.source)
        if has_solution:
            cell.source = task_source(cell.source)
        if has_solution or answers or USES_SOLUTION in tags or calls:
            cell.outputs, cell.execution_count = [], None
    return cell


def setup_cell():
    """The first cell of every student notebook (see SETUP)."""
    from autograder import PACKAGE_URL, WHEEL

    return nbformat.v4.new_code_cell(SETUP.format(url=PACKAGE_URL, wheel=WHEEL), id=SETUP_ID)


def student_notebook(nb):
    answers = predict_sections(nb.cells)
    nb.cells = [setup_cell()] + [student_cell(cell, i in answers) for i, cell in enumerate(nb.cells)]
    return nb


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("solutions", type=Path)
    parser.add_argument("course", type=Path)
    args = parser.parse_args()
    args.course.mkdir(exist_ok=True)
    for path in sorted(args.solutions.glob("*.ipynb")):
        try:
            nb = student_notebook(nbformat.read(path, as_version=4))
        except ValueError as error:
            print(f"{path}: {error}. Close the region and run `make student` again.", file=sys.stderr)
            return 1
        nbformat.write(nb, args.course / path.name)
        print(f"wrote {args.course / path.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
