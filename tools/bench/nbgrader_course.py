"""The nbgrader side of the benchmark: its own environment (.venv-bench), the course (a source notebook
whose answer cells carry nbgrader's metadata and whose test cells hold hidden tests, one per problem, worth
that problem's points; the release; every student's submitted notebook), `nbgrader autograde`, and the
verdicts read from its gradebook."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from tools.bench import ASSIGNMENT, ROOT
from tools.bench.report import intervals, log
from tools.bench.students import Student, answer_source, variant_code

BENCH_VENV = ROOT / ".venv-bench"
# torch 2.13.0 is the only version that installs locally in seconds (a CPU build); pin it exactly.
BENCH_PINS = ("nbgrader==0.9.6", "torch==2.13.0", "numpy==2.4.6", "ipykernel==7.4.0")
KERNEL = "autograd-bench"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"
# A read-only cell of the assignment: the hidden tests call it. It asks our checks' questions.
HELPERS = (Path(__file__).parent / "cells" / "grading_helpers.py").read_text()


def ensure_bench_venv() -> Path:
    """.venv-bench with nbgrader, created (a few minutes, once) when missing or its pins changed."""
    stamp = BENCH_VENV / ".bench-pins"
    wanted = "\n".join(BENCH_PINS) + "\n"
    if (BENCH_VENV / "bin" / "nbgrader").exists() and stamp.exists() and stamp.read_text() == wanted:
        return BENCH_VENV / "bin" / "python"
    log(f"bench: creating {BENCH_VENV.name} with {', '.join(BENCH_PINS)} (once; a few minutes)")
    if not (BENCH_VENV / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(BENCH_VENV)], check=True)
    pip = [str(BENCH_VENV / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run(pip + list(BENCH_PINS), check=True)
    stamp.write_text(wanted)
    return BENCH_VENV / "bin" / "python"


# The references of the hidden tests, written with PyTorch's own operations (as in the assignment).
REFERENCES = {
    "KillHead": "def _reference(input, n):\n    keep = torch.ones_like(input)\n    keep[:, :n] = 0\n"
                "    return input * keep\n",
    "MyReLU": "def _reference(input):\n    return input.clamp(min=0)\n",
    "Exp": "def _reference(x):\n    return torch.exp(x)\n",
    "LinearFunction": "def _reference(input, weight, bias=None):\n    out = input @ weight.t()\n"
                      "    return out if bias is None else out + bias\n",
}


def _meta(grade_id: str, *, solution=False, grade=False, locked=False, points=None) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3, "solution": solution,
            "task": False}
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


def source_notebook(assignment, seed: int):
    """The instructor's notebook: answers between solution markers, hidden tests per problem."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    from autograder.judge.checks import max_score
    from autograder.judge.reference import encoded_cases

    title = "# Lesson 2: writing a custom Function\n\nImplement the four Functions below."
    cells = [new_markdown_cell(title),
             new_code_cell("import torch\nfrom torch.autograd import Function"),
             new_code_cell(HELPERS, metadata=_meta("helpers", locked=True))]
    for problem in assignment.problems:
        cells.append(new_markdown_cell(f"## {problem.name}\n\n{problem.summary}."))
        answer = variant_code(problem.name, "right")
        cells.append(new_code_cell(f"### BEGIN SOLUTION\n{answer}\n### END SOLUTION",
                                   metadata=_meta(f"{problem.name}-answer", solution=True)))
        cases = repr(encoded_cases(problem, seed))
        kinks = [(k.at, k.low, k.high) for k in problem.kinks]
        hidden = (f"{REFERENCES[problem.name]}\n_cases = {cases}\n"
                  f"_grade({problem.name!r}, _reference, _cases, double_backward={problem.double_backward}, "
                  f"kinks={kinks!r})")
        cells.append(new_code_cell(
            f"# {problem.name} is graded by hidden tests.\n"
            f"### BEGIN HIDDEN TESTS\n{hidden}\n### END HIDDEN TESTS",
            metadata=_meta(f"{problem.name}-tests", grade=True, locked=True, points=max_score(problem))))
    nb = new_notebook(cells=cells, metadata={
        "kernelspec": {"name": KERNEL, "display_name": "Python 3 (bench)", "language": "python"},
        "language_info": {"name": "python"}})
    nbformat.validate(nb)
    return nb


def student_notebook(release, student: Student):
    import nbformat
    from nbformat.v4 import new_code_cell

    nb = nbformat.from_dict(json.loads(json.dumps(release)))
    cells, k = [], -1
    for cell in nb.cells:
        cells.append(cell)
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")
        if grade_id.endswith("-answer"):
            problem = grade_id[: -len("-answer")]
            cell.source = answer_source(problem, student.answers[problem])
            k += 1
            cells += [new_code_cell(src) for after, src in student.extra_cells if after == k]
    nb.cells = cells
    return nb


def write_course(course: Path, assignment, students: list[Student], seed: int, bench_python: Path,
                 sample: list[Student] | None = None) -> Path:
    """The nbgrader course with the submissions of `sample` (default: all) in submitted/; returns a folder
    of every submission's notebook, named <student>.ipynb, for our grader."""
    import nbformat

    course.mkdir(parents=True)
    (course / "nbgrader_config.py").write_text(textwrap.dedent(f"""\
        c = get_config()  # noqa: F821
        c.CourseDirectory.root = {str(course)!r}
        c.CourseDirectory.course_id = "autograd-bench"
        c.Execute.timeout = 60
        """))
    kernel = course / "jupyter-data" / "kernels" / KERNEL
    kernel.mkdir(parents=True)
    (kernel / "kernel.json").write_text(json.dumps({
        "argv": [str(bench_python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (bench)", "language": "python"}))
    source = course / "source" / ASSIGNMENT / NOTEBOOK
    source.parent.mkdir(parents=True)
    nbformat.write(source_notebook(assignment, seed), source)
    nbgrader(course, "generate_assignment", ASSIGNMENT, "--force")
    release = nbformat.read(course / "release" / ASSIGNMENT / NOTEBOOK, as_version=4)
    ours = course / "ours"
    ours.mkdir()
    graded = {s.id for s in (students if sample is None else sample)}
    for s in students:
        nb = student_notebook(release, s)
        nbformat.write(nb, ours / f"{s.id}.ipynb")
        if s.id in graded:
            path = course / "submitted" / s.id / ASSIGNMENT / NOTEBOOK
            path.parent.mkdir(parents=True)
            shutil.copyfile(ours / f"{s.id}.ipynb", path)
    return ours


def nbgrader_env(course: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "PYTHONPATH", "VIRTUAL_ENV"))}
    env.update(JUPYTER_DATA_DIR=str(course / "jupyter-data"),
               JUPYTER_CONFIG_DIR=str(course / "jupyter-config"),
               JUPYTER_RUNTIME_DIR=str(course / "jupyter-runtime"), JUPYTER_PATH=str(course / "jupyter-data"),
               JUPYTER_PLATFORM_DIRS="1", PATH=f"{BENCH_VENV / 'bin'}:{env.get('PATH', '')}")
    return env


def nbgrader(course: Path, *args: str, log_file: Path | None = None) -> None:
    command = [str(BENCH_VENV / "bin" / "nbgrader"), *args]
    with open(log_file or course / "nbgrader-setup.log", "a") as out:
        done = subprocess.run(command, cwd=course, env=nbgrader_env(course), stdout=out,
                              stderr=subprocess.STDOUT, check=False)
    if done.returncode != 0:
        tail = (log_file or course / "nbgrader-setup.log").read_text()[-3000:]
        raise SystemExit(f"bench: `nbgrader {' '.join(args)}` failed (exit {done.returncode}):\n{tail}")


NBGRADER_SCORES = """
import json, sys
from nbgrader.api import Gradebook
rows = []
with Gradebook("sqlite:///" + sys.argv[1]) as gb:
    for sub in gb.assignment_submissions(sys.argv[2]):
        for nb in sub.notebooks:
            for g in nb.grades:
                rows.append([sub.student_id, g.name, g.score, g.max_score])
print(json.dumps(rows))
"""


def nbgrader_verdicts(course: Path, bench_python: Path) -> dict[tuple[str, str], bool]:
    command = [str(bench_python), "-c", NBGRADER_SCORES, str(course / "gradebook.db"), ASSIGNMENT]
    done = subprocess.run(command, env=nbgrader_env(course), capture_output=True, text=True, check=True)
    return {(student, grade_id.removesuffix("-tests")): score is not None and score >= max_score > 0
            for student, grade_id, score, max_score in json.loads(done.stdout)}


def run_nbgrader(course: Path, students: list[Student]) -> tuple[float, list[float]]:
    start, t0 = time.time(), time.perf_counter()
    nbgrader(course, "autograde", ASSIGNMENT, "--force", log_file=course / "nbgrader-autograde.log")
    wall = time.perf_counter() - t0
    return wall, intervals(start, [course / "autograded" / s.id / ASSIGNMENT / NOTEBOOK for s in students])
