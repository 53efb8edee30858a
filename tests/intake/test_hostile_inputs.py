"""Does one batch of hostile *inputs* (files rather than code: links, pipes, huge or malformed notebooks,
names that collide with the grader's own files or read as formulas, graph labels and output written as
markup) get graded to the end through `python -m autograder grade`, each hostile submission failing
with its cause named, while the honest submissions among them keep full marks?

The class is written into a temporary folder by the fixture (links, a named pipe and a sparse file do
not belong in git), next to a "hidden tests" file that the links point at and that must never be read.
Nothing here measures time.
"""

import csv
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ALICE, autograder, notebook
from tests.report.test_escaping import assert_no_live_markup

pytestmark = pytest.mark.slow

ALICE_CODE = ALICE.read_text()
SECRET = "hidden-test-answer-7f3a"  # in the file the links point at: must appear nowhere in the results
PROBLEMS = ["KillHead", "MyReLU", "Exp", "LinearFunction"]
FORMULA_IDS = ["=HYPERLINK(evil)", "@SUM(1+1)", "-2+3+cmd"]
# Honest code under every name: full marks, whatever the name.
HONEST = ["alice", "magics", "grades.csv-2", "canvas.csv-2", *FORMULA_IDS]
# Submission id -> what its failed results must say.
REFUSED = {
    "link_to_file": "symbolic link",
    "link_to_folder": "symbolic link",
    "pipe": "not a regular file",
    "huge": "over the grader's limit of 20 MB",
    "cell_not_a_dict": "not a readable Jupyter notebook",
    "source_null": "not a readable Jupyter notebook",
    "source_dict": "not a readable Jupyter notebook",
    "cells_not_a_list": "not a readable Jupyter notebook",
    "deeply_nested": "not a readable Jupyter notebook",
    "invalid_utf8": "not a readable Jupyter notebook",
    "magic_flood": "IPython syntax",
}


def section(name: str, end: str = "") -> str:
    """One class of alice.py, up to the class named `end` (or to the end of the file)."""
    text = f"class {name}(Function):" + ALICE_CODE.split(f"class {name}(Function):")[1]
    return text.split(f"class {end}(Function):")[0] if end else text


# An honest notebook as students write them: magics, shell escapes, %%time around a Function, other cell
# magics, and continuation lines that start with != or % (which line-by-line stripping broke).
CONTINUED = ("        ctx.save_for_backward(result)\n"
             "        ok = (result.shape\n"
             "              != torch.Size([0]))\n"
             "        three = (7\n"
             "                 % 4)\n"
             "        assert ok and three == 3\n")
MAGIC_CELLS = [
    ("%matplotlib inline\n%load_ext autoreload\n%autoreload 2\n!echo hello\nimport torch\n"
     "from torch.autograd import Function"),
    "%%time\n" + section("KillHead", "MyReLU"),
    "%%capture\n" + section("MyReLU", "Exp"),
    section("Exp", "LinearFunction").replace("        ctx.save_for_backward(result)\n", CONTINUED),
    "%%bash\nexit 1",
    "%%writefile helper.py\nraise SystemExit('a %%writefile body ran')",
    "files = !ls\nassert files == []\n%time checked = True",
    section("LinearFunction"),
    "assert checked",
]

# Right KillHead and MyReLU; Exp and LinearFunction wrong through helper Functions whose backward nodes
# are named with markup: the feedback draws their graphs. The cells also print and raise markup.
MARKUP_CELLS = [
    "print('<script>alert(\"printed\")</script>')",
    "raise ValueError('<img src=x onerror=alert(1)>')",
    ALICE_CODE.replace("return grad_output * result",
                       "return Doubler.apply(grad_output * result)  # wrong: twice")
              .replace("grad_input = grad_output.mm(weight)",
                       "grad_input = Shifter.apply(grad_output.mm(weight))") + '''

class Doubler(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


class Shifter(Function):
    @staticmethod
    def forward(ctx, x):
        return x + 1

    @staticmethod
    def backward(ctx, grad):
        return grad + 1


Doubler._backward_cls.__name__ = '<<TABLE HREF="javascript:alert(1)"><TR><TD>click</TD></TR></TABLE>>'
Shifter._backward_cls.__name__ = '<<b>'  # an HTML-like label Graphviz cannot parse
''']


def write_class(base: Path) -> Path:
    secret = base / "source"
    secret.mkdir()
    (secret / "hidden_tests.py").write_text(f"ANSWER = '{SECRET}'\n")
    subs = base / "submissions"
    subs.mkdir()
    for name in ["alice.py", "grades.csv.py", "canvas.csv.py"] + [f"{sid}.py" for sid in FORMULA_IDS]:
        (subs / name).write_text(ALICE_CODE)
    notebook(subs / "magics.ipynb", *MAGIC_CELLS)
    notebook(subs / "markup.ipynb", *MARKUP_CELLS)
    (subs / "link_to_file.py").symlink_to(secret / "hidden_tests.py")
    (subs / "link_to_folder").symlink_to(secret)
    os.mkfifo(subs / "pipe.py")
    with (subs / "huge.ipynb").open("wb") as f:
        f.truncate(30 * 2**20)  # sparse: 30 MB that take no disk
    code = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None}
    malformed = {
        "cell_not_a_dict": {"cells": ["print(1)"]},
        "source_null": {"cells": [{**code, "source": None}]},
        "source_dict": {"cells": [{**code, "source": {"print(1)": 1}}]},
        "cells_not_a_list": {"cells": {"0": code}},
    }
    for name, nb in malformed.items():
        (subs / f"{name}.ipynb").write_text(json.dumps(nb))
    (subs / "deeply_nested.ipynb").write_bytes(b'{"cells": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
    (subs / "invalid_utf8.ipynb").write_bytes(b'{"cells": [{"cell_type": "code", "source": "x = \'\xff\'"}]}')
    notebook(subs / "magic_flood.ipynb", *["x = !ls\n" * 400 + "y = 1\n" * 8000] * 3)
    return subs


class BatchRun:
    def __init__(self, out: Path, canvas: Path, run: subprocess.CompletedProcess):
        self.out, self.canvas, self.run = out, canvas, run

    def results(self, sid: str) -> dict:
        return json.loads((self.out / sid / "results.json").read_text())

    def problem(self, sid: str, problem: str) -> list[dict]:
        """The problem's checks in sid's results: never none, so that a loop over them always asserts."""
        found = [t for t in self.results(sid)["tests"] if t["name"].startswith(problem + ": ")]
        assert found, f"{sid} has no check of {problem}"
        return found


@pytest.fixture(scope="module")
def batch(tmp_path_factory) -> BatchRun:
    if not shutil.which("dot"):
        pytest.skip("Graphviz's dot is missing")
    base = tmp_path_factory.mktemp("hostile-inputs")
    subs = write_class(base)
    out = base / "out"
    canvas = out / "canvas.csv"  # the Canvas import beside grades.csv, where a student's id must not land
    run = autograder("grade", "--assignment", "custom-functions", "--out", out, "--jobs", "2", "--quiet",
                     "--canvas", canvas, subs, cwd=base, timeout=1800)
    return BatchRun(out, canvas, run)


def test_batch_grades_every_submission(batch):
    """Does the batch end normally with one row in grades.csv and a complete results.json for each
    submission, hostile ones included?"""
    rows = list(csv.reader((batch.out / "grades.csv").open(newline="")))
    ids = [row[0] for row in rows[1:]]
    expected = HONEST + sorted(REFUSED) + ["markup"]
    assert sorted(ids) == sorted("'" + sid if sid[0] in "=@-" else sid for sid in expected)
    alice = len(batch.results("alice")["tests"])
    for sid in expected:
        assert len(batch.results(sid)["tests"]) == alice > 0, sid


def test_honest_submissions_keep_full_marks(batch):
    """Do honest submissions keep full marks amid the hostile ones, whatever their names?"""
    best = sum(t["max_score"] for t in batch.results("alice")["tests"])
    for sid in HONEST:
        tests = batch.results(sid)["tests"]
        failed = [t for t in tests if t["status"] != "passed"]
        assert all(t["status"] == "passed" for t in tests), (sid, failed)
        assert batch.results(sid)["score"] == best, sid


def test_magics_run_as_in_jupyter(batch):
    """Does the notebook of magics score full marks without a single cell error: %%time and %%capture
    ran their Functions, continuation lines starting with != and % stayed, %%bash and %%writefile did
    not run, `files = !ls` and `%time` behaved?"""
    page = (batch.out / "magics" / "feedback.html").read_text()
    assert "Cells that raised" not in page and "writefile body ran" not in page


@pytest.mark.parametrize("sid", sorted(REFUSED))
def test_refused_submission_fails_with_its_cause(batch, sid):
    """Does each refused submission fail every check, scoring 0, with its cause in every output?"""
    for problem in PROBLEMS:
        for test in batch.problem(sid, problem):
            assert test["status"] == "failed" and test["score"] == 0, (sid, test)
            assert REFUSED[sid] in test["output"].replace("\n", " "), (sid, test["output"])


def test_links_are_never_followed(batch):
    """Does nothing of the file that the links point at appear in any result, page or CSV?"""
    for path in batch.out.rglob("*"):
        if path.is_file():
            assert SECRET not in path.read_text(errors="replace"), path


def test_ids_never_take_the_graders_files(batch):
    """Do grades.csv.py and canvas.csv.py get ids of their own, leaving grades.csv and the Canvas import
    regular files of the grader, with a row for every submission?"""
    assert (batch.out / "grades.csv").is_file() and (batch.out / "grades.csv-2" / "results.json").is_file()
    assert batch.canvas.is_file() and (batch.out / "canvas.csv-2" / "results.json").is_file()
    canvas = list(csv.reader(batch.canvas.open(newline="")))
    assert len(canvas) == 2 + len(HONEST) + len(REFUSED) + 1


def test_formula_names_are_text_in_both_csvs(batch):
    """Are ids that start like a formula neutralised in grades.csv and in the Canvas import, their
    scores left as numbers?"""
    grades = {row[0]: row for row in csv.reader((batch.out / "grades.csv").open(newline=""))}
    canvas = list(csv.reader(batch.canvas.open(newline="")))
    for sid in FORMULA_IDS:
        assert float(grades["'" + sid][1]) == batch.results(sid)["score"] > 0
        assert ["'" + sid, "", "", "'" + sid, ""] in [row[:5] for row in canvas]
    for row in list(grades.values()) + canvas:
        assert not any(c.startswith(("=", "+", "@", "\t", "\r")) for c in row), row
        assert not any(c.startswith("-") and not c.lstrip("-").replace(".", "").isdigit() for c in row), row


def test_markup_from_a_worker_is_text(batch):
    """Do markup in a Function's graph labels (a javascript: link, a label Graphviz cannot parse), in
    printed output and in a cell's error reach the feedback page as text only, while the wrong Functions
    fail their gradient checks and the right ones keep full marks?"""
    for problem in ("KillHead", "MyReLU"):
        assert all(t["status"] == "passed" for t in batch.problem("markup", problem))
    for problem in ("Exp", "LinearFunction"):
        (gradient,) = [t for t in batch.problem("markup", problem) if t["name"].endswith(": gradient")]
        assert gradient["status"] == "failed" and gradient["score"] == 0
    page = (batch.out / "markup" / "feedback.html").read_text()
    assert_no_live_markup(page)
    assert "could not draw" not in page  # (graphs are drawn where they explain: none for these failures)
    assert "&lt;script&gt;alert" in page and "onerror=alert(1)&gt;" in page
    # (no graph is drawn under a first-derivative failure, so the labels do not reach this page; their
    # escaping in a drawn graph is tests/report/test_escaping.py's)
