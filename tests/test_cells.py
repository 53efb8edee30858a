"""Is a submission's cells' outcome made clean in one step (cells.cleaned), before anything is judged: the
lesson's expected errors left out, the cells skipped first, every error named as Jupyter numbers the
cells, the grader's paths out, tracebacks with the student's frames only; and is the cell a run stopped in
found, with its note (cells.to_skip)?"""

from pathlib import Path

from autograder.cells import SKIPPED, cleaned, hint, to_skip
from autograder.intake.loader import Submission
from autograder.pipeline import Private
from autograder.sandbox import Outcome

WORKER = "/tmp/autograder-12-abc/"  # a worker's temporary folder (pipeline.without_temporary)
TRACEBACK = f'''Traceback (most recent call last):
  File "{Path(__file__).resolve().parent.parent}/autograder/sandbox/worker.py", line 170, in run
    exec_(compile_(source, filename, "exec"), namespace)
  File "<cell 3>", line 2, in <module>
    helpers.boom()
  File "{WORKER}helpers.py", line 2, in boom
    open("/nonexistent/file.txt")
FileNotFoundError: [Errno 2] No such file or directory: '/nonexistent/file.txt\''''


def submission() -> Submission:
    cells = ["import os\nos._exit(3)\n", "1 / 0  # a What goes wrong here? cell",
             "import helpers\nhelpers.boom()"]
    return Submission("s", Path("s.ipynb"), cells, expected_errors=[1], positions=[2, 4, 7])


def test_the_cell_a_run_stopped_in_is_left_out_with_a_note():
    sub = submission()
    stopped = Outcome(failures={"KillHead": "Your program exited with status 3 while running cell 1, so "
                                            "nothing after it ran."})
    note = to_skip(sub, sub.cells, stopped, 0)
    assert note["index"] == 1 and note["type"] == SKIPPED
    assert note["error"].startswith("Cell 2 (code cell 1), which starts with `import os`, exited with "
                                    "status 3, so it was skipped")
    assert to_skip(sub, sub.cells, stopped, 3) is None  # at most MAX_SKIPPED cells
    assert to_skip(sub, sub.cells, Outcome(data={"KillHead": {}}, failures=stopped.failures), 0) is None
    assert to_skip(sub, ["", *sub.cells[1:]], stopped, 0) is None  # a cell already left out


def test_the_cells_outcome_is_clean_in_one_step():
    sub = submission()
    note = {"index": 1, "type": SKIPPED, "error": f"Cell 2 (code cell 1), which starts with `{WORKER}x`, ..."}
    outcome = Outcome(cell_errors=[{"index": 2, "type": "ZeroDivisionError", "error": "expected"},
                                   {"index": 3, "type": "FileNotFoundError", "error": TRACEBACK}],
                      output=f"printed {WORKER}helpers.py\n", seconds=1.5)
    clean = cleaned(sub, outcome, [note], 30.0, Private())
    assert clean is outcome and outcome.seconds == 31.5 and outcome.output == "printed helpers.py\n"
    skipped, error = outcome.cell_errors
    assert skipped is note and note["name"] == "Cell 2 (code cell 1)" and WORKER not in note["error"]
    assert error["name"] == "Cell 7 (code cell 3)"
    assert error["error"] == ('Traceback (most recent call last):\n  File "<cell 7>", line 2, in <module>\n'
                              '    helpers.boom()\n  File "helpers.py", line 2, in boom\n'
                              '    open("/nonexistent/file.txt")\n'
                              "FileNotFoundError: [Errno 2] No such file or directory: "
                              "'/nonexistent/file.txt'")
    assert hint(sub, skipped) == " " + note["error"]
    assert hint(sub, error) == (" Cell 7 (code cell 3) raised an error (FileNotFoundError; see below), which "
                                "may be why.")
