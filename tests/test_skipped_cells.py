"""Does one cell that ends the worker (os._exit, a segfault) or runs past the time for running the notebook
(a training loop left in the last cell) cost only itself: the notebook run again without it, the right
Functions keeping full marks, and the page naming the cell as Jupyter numbers it and why it was skipped?"""

from pathlib import Path

import pytest

from autograder.course import find_assignment
from autograder.intake.loader import load
from autograder.judge.checks import max_score
from autograder.pipeline import Pipeline
from autograder.sandbox import Limits
from tests.conftest import ALICE, notebook

ASSIGNMENT = find_assignment("custom-functions")
LOAD_SECONDS = 15  # the endless loop is stopped by this; the right cells take well under a second
TRAINING = "import time\nwhile True:  # the training loop left in the notebook\n    time.sleep(0.05)\n"
EXITS = "import os\nos._exit(3)\n"
CRASHES = "import faulthandler\nfaulthandler._sigsegv()  # a demo cell that segfaults\n"


def graded(tmp_path: Path, *cells: str) -> dict:
    """Each notebook (a markdown title, then the cells) graded; id -> (Submission, Graded)."""
    paths = [notebook(tmp_path / f"{i}.ipynb", *cell, title="# Lesson 2") for i, cell in enumerate(cells)]
    subs = load(paths, ("02-custom-functions",))
    with Pipeline(ASSIGNMENT, Limits(load_seconds=LOAD_SECONDS), workers=2) as pipeline:
        return {sub.id: (sub, g) for sub, g in pipeline.grade(subs)}


@pytest.mark.slow
def test_a_cell_that_stops_the_notebook_is_skipped_and_the_rest_graded(tmp_path):
    right = ALICE.read_text()
    results = graded(tmp_path, (right, TRAINING), (right, EXITS), ("print('demo')", CRASHES, right))
    causes = {"0": "ran past the grader's time limit of 15 s", "1": "exited with status 3",
              "2": "was killed by SIGSEGV"}
    cells = {"0": "Cell 3 (code cell 2), which starts with `import time`,",
             "1": "Cell 3 (code cell 2), which starts with `import os`,",
             "2": "Cell 3 (code cell 2), which starts with `import faulthandler`,"}
    for sid, (sub, g) in results.items():
        assert g.score == max_score(ASSIGNMENT), (sid, [r.message for r in g.results if not r.passed])
        skipped = [c for c in g.cell_errors if c["type"] == "skipped"]
        assert len(skipped) == 1, g.cell_errors
        assert skipped[0]["error"].startswith(f"{cells[sid]} {causes[sid]}"), skipped[0]["error"]
        assert "the Functions defined before and after it were graded" in skipped[0]["error"]
        assert skipped[0]["name"] == "Cell 3 (code cell 2)"


@pytest.mark.slow
def test_the_lessons_filled_in_run_as_in_jupyter(tmp_path):
    """Do the lesson notebooks, filled with the solutions, run without a cell error (display and get_ipython
    exist, as in Jupyter), and does a student's use of them raise nothing either?"""
    from tests.conftest import ROOT

    subs = load(sorted((ROOT / "solutions").glob("*.ipynb")), ("02-custom-functions",))
    assert len(subs) >= 7
    uses = ("display('x', raw=True)\nget_ipython().run_line_magic('matplotlib', 'inline')\n"
            "shell = get_ipython()\nshell.system('ls')\n"
            "def typed(x: int) -> None: ...\n"  # annotations are types, as in Jupyter (torch.library reads)
            "assert typed.__annotations__['x'] is int, typed.__annotations__\n")
    kernel = load([notebook(tmp_path / "kernel.ipynb", uses)])
    with Pipeline(ASSIGNMENT, workers=2) as pipeline:
        for sub, g in pipeline.grade(subs + kernel):
            assert not g.cell_errors, (sub.id, g.cell_errors)
            assert sub.id != "02-custom-functions" or g.score == max_score(ASSIGNMENT)
