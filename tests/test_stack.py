"""Does the course work on every torch it supports, not only the pinned one?

`make test-torch` (tools/torch_matrix.py) runs the tests marked `stack` on the oldest and the newest torch
the course is tested with (autograder/torch_versions.py): these, the judge's catalogue of right and wrong
Functions through check() (tests/judge/test_judge.py) and the solutions graded by the batch grader
(tests/course/test_lessons_graded.py). Here: every lesson runs to its end, a named wrong attempt per
problem fails through the batch grader with its cause, and the example classes get the scores they get on
the pinned torch (AUTOGRADER_PINNED_PYTHON: the pinned torch's interpreter, which the matrix names).
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import torch
from nbclient import NotebookClient

from autograder.course.assignments.registry import BUILTIN, find_problem
from tests.conftest import ROOT, autograder
from tests.test_install import pinned
from tests.wrong_functions import CASES, HEADER

pytestmark = [pytest.mark.stack, pytest.mark.slow]
PINNED = pinned()["torch"]
ON_PINNED = torch.__version__.split("+")[0] == PINNED
LESSONS = sorted((ROOT / "solutions").glob("*.ipynb"))
ASSIGNMENTS = sorted(BUILTIN, key=lambda a: a.name)


@pytest.mark.skipif(ON_PINNED, reason="on the pinned torch, nbval runs the lessons and compares outputs")
@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_lesson_runs_to_its_end(tmp_path, lesson):
    """Does every cell of the lesson run without an error it does not expect (expect_error fails when an
    expected error does not come)? Outputs may differ from the pinned torch's."""
    nb = nbformat.read(lesson, as_version=4)
    client = NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=False,
                            resources={"metadata": {"path": str(tmp_path)}})
    shutil.copytree(ROOT / "solutions", tmp_path, dirs_exist_ok=True)  # a lesson's data files beside it
    client.execute()


def first_case_per_problem() -> dict[str, tuple]:
    """One wrong attempt of the catalogue per problem: (source, failing check, words of its cause)."""
    chosen: dict[str, tuple] = {}
    for problem, source, failing, phrase in CASES:
        chosen.setdefault(problem, (source, failing, phrase))
    return chosen


@pytest.mark.parametrize("assignment", ASSIGNMENTS, ids=lambda a: a.name)
def test_named_wrong_attempts_fail_with_their_causes_in_the_batch(tmp_path, assignment):
    """Graded by `python -m autograder grade`, in its container, does each problem's named wrong attempt
    fail its check with the words of its cause?"""
    wanted = {p.name: case for p, case in ((find_problem(n), c) for n, c in first_case_per_problem().items())
              if p.name in {q.name for q in assignment.problems}}
    assert wanted, f"the catalogue has no wrong attempt for {assignment.name}"
    folder = tmp_path / "subs"
    folder.mkdir()
    for name, (source, _, _) in wanted.items():
        (folder / f"wrong_{name}.py").write_text(HEADER + source)
    out = tmp_path / "out"
    autograder("grade", "--assignment", assignment.name, "--out", out, "--quiet", folder)
    for name, (_, failing, phrase) in wanted.items():
        graded = json.loads((out / f"wrong_{name}" / "results.json").read_text())
        tests = {t["name"]: t for t in graded["tests"]}
        test = tests[f"{name}: {failing}"]
        assert test["status"] == "failed", (name, failing, test)
        assert phrase in test["output"], (name, phrase, test["output"][:600])


def scores(python: str, assignment: str, out: Path) -> dict[str, dict[str, str]]:
    """grades.csv of the example class of `assignment`, graded with this Python: {student: row}."""
    command = [python, "-m", "autograder", "grade", "--assignment", assignment, "--out", str(out), "--quiet",
               str(ROOT / "examples" / assignment)]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=900, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    with open(out / "grades.csv", newline="") as f:
        return {row["submission"]: row for row in csv.DictReader(f)}


@pytest.mark.skipif(ON_PINNED or not os.environ.get("AUTOGRADER_PINNED_PYTHON"),
                    reason="compares another torch with the pinned one: `make test-torch` runs it")
@pytest.mark.parametrize("assignment", sorted(p.name for p in (ROOT / "examples").iterdir() if p.is_dir()))
def test_example_class_scores_as_on_the_pinned_torch(tmp_path, assignment):
    """Does every student of the example class get, problem by problem, the score the pinned torch gives?"""
    here = scores(sys.executable, assignment, tmp_path / "here")
    there = scores(os.environ["AUTOGRADER_PINNED_PYTHON"], assignment, tmp_path / "pinned")
    assert here == there
