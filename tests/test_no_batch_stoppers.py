"""Can one submission stop a batch, or reach the instructor's terminal, through what it prints, raises or
is named?

One batch through the command line, as an instructor runs it (progress and summary on): honest copies of
alice.py, one of them in a file named with an escape sequence, one named with rich's markup, and one in a
zip beside an entry named with an escape sequence;
a submission that prints and raises lone surrogates and escape sequences (in a cell and inside a
Function's forward); an unreadable notebook named "\\x1b[2J.ipynb"; and a 144-byte zip declaring a 2**60-byte
entry. And, without any worker, a batch whose workers cannot be started: nobody is scored 0 for it.
"""

import csv
import json
import subprocess
import sys
import unicodedata
import zipfile
from pathlib import Path

import pytest

from autograder.course import find_assignment
from autograder.judge.checks import max_score
from tests.conftest import ALICE, ROOT

TITLE = "\x1b]0;pwned\x07"  # sets the terminal's title
CLEAR = "\x1b[2J"  # clears the screen
HOSTILE = ("print('printed \\udcff and \\x1b[2J')\n"
           + ALICE.read_text().replace("        result = torch.exp(x)\n",
                                       "        raise ValueError('forward \\ud800 \\x1b]0;pwned\\x07')\n", 1)
           + "\nraise ValueError('cell \\ud800')\n")


def huge_zip(path: Path, name: str = "mallory.py") -> Path:
    """A zip of a few bytes whose central directory declares its entry 2**60 bytes long."""
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(name, "x = 1\n")
        z.filelist[-1].file_size = 2**60
    return path


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    base = tmp_path_factory.mktemp("stoppers")
    submissions = base / "class"
    submissions.mkdir()
    (submissions / "alice.py").write_bytes(ALICE.read_bytes())
    (submissions / f"{TITLE}.py").write_bytes(ALICE.read_bytes())
    (submissions / "[blink]b.py").write_bytes(ALICE.read_bytes())  # rich's markup for blinking text
    (submissions / "mallory.py").write_text(HOSTILE)
    (submissions / f"{CLEAR}.ipynb").write_bytes(b"\xff\xfe not UTF-8\n")
    with zipfile.ZipFile(submissions / "zoe.zip", "w") as z:
        z.writestr("zoe.py", ALICE.read_text())
        z.writestr(f"{TITLE}.py", "raise SystemExit")
    huge_zip(submissions / "huge.zip")
    out = base / "out"
    run = subprocess.run([sys.executable, "-m", "autograder", "grade", "--assignment", "custom-functions",
                          "--out", str(out), str(submissions)], capture_output=True, cwd=ROOT, timeout=600,
                         check=False)
    rows = {}
    if (out / "grades.csv").exists():
        rows = {row["submission"]: row for row in csv.DictReader((out / "grades.csv").open())}
    return {"run": run, "out": out, "rows": rows}


def test_lone_surrogates_printed_or_raised_stop_nothing(batch):
    """Does the batch end (status 0, grades.csv) with the honest copies at full marks, and is the hostile
    submission's page valid UTF-8 showing its error, the surrogates replaced?"""
    assert batch["run"].returncode == 0, batch["run"].stderr.decode(errors="replace")[-3000:]
    rows = batch["rows"]
    full = max_score(find_assignment("custom-functions"))
    assert {float(rows[sid]["score"]) for sid in ("alice", "_]0;pwned_", "[blink]b", "zoe")} == {full}
    assert float(rows["mallory"]["score"]) < full
    folder = batch["out"] / "mallory"
    page = (folder / "feedback.html").read_bytes().decode("utf-8")
    assert "cell \ufffd" in page and "printed " in page
    document = json.loads((folder / "results.json").read_bytes().decode("utf-8"))
    json.dumps(document, ensure_ascii=False).encode("utf-8")  # no lone surrogate, not even as an escape
    exp = " ".join(t["output"] for t in document["tests"] if t["name"].startswith("Exp:"))
    assert "ValueError" in exp and "forward \ufffd" in exp


def test_a_zip_declaring_2_60_bytes_fails_alone_with_the_cause(batch):
    """Is the zip that declares more than any disk holds that student's 0, saying why, and the others
    graded?"""
    assert batch["rows"]["huge"]["score"] == "0"
    error = json.loads((batch["out"] / "huge" / "results.json").read_text())["extra_data"]["error"]
    assert "mallory.py was not unpacked: it declares 1,152,921,504,606,846,976 bytes" in error


def test_no_control_character_reaches_the_terminal(batch):
    """Is everything the command printed valid UTF-8 without a control character but newline and tab, the
    names of the class shown with their escapes written out?"""
    printed = (batch["run"].stdout + batch["run"].stderr).decode("utf-8")
    controls = {c for c in printed if unicodedata.category(c) in ("Cc", "Cs") and c not in "\n\t"}
    assert controls == set()
    assert "\\x1b]0;pwned\\x07.py" in printed  # the zip entry refused, in a warning
    assert "\\x1b[2J.ipynb" in printed  # the unreadable notebook, where it was found
    assert "[blink]b" in printed  # in the summary, as it is named, not as markup


class NoWorkers:
    """A pipeline whose every worker fails to start (its temporary disk full, say), judged by the real
    Pipeline.judge: what the grader's batch gets when the fault is its own."""

    def __init__(self, assignment):
        from autograder.pipeline import Pipeline, Private

        self.real = Pipeline.__new__(Pipeline)  # its judge only: no pool, no worker
        self.real.assignment, self.real.seed, self.real.private = assignment, 0, Private()

    def grade(self, subs):
        from autograder.sandbox import Outcome
        from autograder.sandbox.pool import NO_WORKER

        for sub in subs:
            failures = {p.name: f"{NO_WORKER[:-1]} (No space left on device)."
                        for p in self.real.assignment.problems}
            yield sub, self.real.judge(sub, None if sub.error else Outcome(failures=failures))


def test_a_worker_that_cannot_start_scores_nobody_0(tmp_path):
    """When the grader cannot start a worker, is the submission left out of grades.csv and without a
    results.json (so that the next run grades it), rather than scored 0, while the unreadable notebook
    beside it still gets its 0?"""
    from autograder.batch import _grade, make_key, previous_result
    from autograder.course import find_assignment
    from autograder.intake.loader import load
    from autograder.sandbox import Limits
    from tests.conftest import EXAMPLES

    assignment = find_assignment("custom-functions")
    key = make_key(assignment, 0, Limits())
    batch = _grade(NoWorkers(assignment), assignment, [EXAMPLES], tmp_path, False, False, key)
    assert batch.not_graded == ["alice", "bob", "carol"]
    rows = {row["submission"]: row for row in csv.DictReader((tmp_path / "grades.csv").open())}
    assert rows == {"erin": rows["erin"]} and rows["erin"]["score"] == "0"
    alice = next(s for s in load([EXAMPLES]) if s.id == "alice")
    assert previous_result(tmp_path, alice) is None
