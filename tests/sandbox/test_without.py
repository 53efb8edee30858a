"""Does the batch grader grade on a Linux machine that lacks one of the kernel's protections (an old
kernel, a slim container image, a container runtime that refuses Landlock), saying once in its log which
protection the workers go without, and never with a traceback?

The missing protection is simulated for the whole command (tests/sandbox/without/sitecustomize.py, read
by every Python it starts). The submission graded is alice.py, which then prints what its worker had: its
seccomp mode, and whether it could read a file outside its folder that Landlock keeps from it. Reading
/proc flags it (judge/reaching.py), so grading.toml accepts it, as an instructor would after reading why.
"""

import csv
import html
import json
import os
import shutil
import subprocess
import sys

import pytest

from autograder.sandbox import landlock_abi
from autograder.sandbox.confine import Limits, available, unavailable
from tests.conftest import ALICE, ROOT, autograder
from tests.gradescope.test_gradescope import gradescope_root

pytestmark = pytest.mark.slow

SIMULATION = ROOT / "tests" / "sandbox" / "without"
PROBE = """
with open("/proc/self/status") as f:
    print(*[line.strip() for line in f if line.startswith("Seccomp:")])
try:
    with open({secret!r}) as f:
        print("READ", f.read())
except OSError as error:
    print("DENIED", type(error).__name__)
"""


class Graded:
    def __init__(self, run, out):
        self.log = run.stdout + run.stderr
        self.out = out

    def score(self) -> tuple[str, str]:
        with open(self.out / "grades.csv", newline="") as f:
            (row,) = list(csv.DictReader(f))
        return row["score"], row["max_score"]

    def printed(self) -> str:
        return html.unescape((self.out / "probe" / "feedback.html").read_text()).replace("\t", " ")


def grade(base, missing: str, *options: str) -> Graded:
    """alice.py and the probe graded by the command line, with `missing` simulated ("" for nothing)."""
    secret = base / "secret.txt"
    secret.write_text("ANSWER = 42")
    secret.chmod(0o600)
    folder = base / "class"
    folder.mkdir()
    (folder / "probe.py").write_text(ALICE.read_text() + PROBE.format(secret=str(secret)))
    env = dict(os.environ, SIMULATE_WITHOUT=missing, PYTHONPATH=str(SIMULATION))
    out = base / "out"
    out.mkdir()
    (out / "grading.toml").write_text('[[accept]]\nstudent = "probe"\nreason = "reads /proc to report"\n')
    run = autograder("grade", "--assignment", "custom-functions", "--out", out, "--jobs", "1", *options,
                     folder, env=env)
    return Graded(run, out)


def assert_graded_in_full(graded: Graded) -> None:
    score, best = graded.score()
    assert float(best) > 0 and score == best, graded.log
    assert "Traceback" not in graded.log


def test_without_libseccomp_grades_and_says_so_once(tmp_path):
    """pyseccomp without its C library: imported, it raises RuntimeError. The grader used to take that for
    a refused container ("enable user namespaces") and grade nothing."""
    graded = grade(tmp_path, "libseccomp")
    assert_graded_in_full(graded)
    assert graded.log.count("seccomp is unavailable") == 1, graded.log
    assert "libseccomp2" in graded.log
    assert "Seccomp: 0" in graded.printed()  # the worker really ran without the filter


def test_gradescope_without_libseccomp_grades_and_says_so_once(tmp_path):
    """The same on Gradescope: run_autograder's log says it once, and the student gets full marks."""
    archive = tmp_path / "custom-functions.zip"
    autograder("gradescope", "--assignment", "custom-functions", "--out", archive)
    root = gradescope_root(archive, [ALICE])
    try:
        env = dict(os.environ, SIMULATE_WITHOUT="libseccomp", PYTHONPATH=str(SIMULATION))
        run = subprocess.run([sys.executable, "-m", "autograder.gradescope", "run", "--root", str(root)],
                             cwd=root, env=env, capture_output=True, text=True, timeout=600, check=False)
        log = run.stdout + run.stderr
        assert run.returncode == 0, log
        document = json.loads((root / "results" / "results.json").read_text())
        best = sum(t["max_score"] for t in document["tests"])
        assert best > 0 and document["score"] == best, log
        assert log.count("seccomp is unavailable") == 1 and "Traceback" not in log, log
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_without_pyseccomp_says_what_to_install(tmp_path):
    """The binding itself missing (an install with --no-deps) is a package to install, as any other the
    grader needs: one paragraph, before anything is graded."""
    env = dict(os.environ, SIMULATE_WITHOUT="pyseccomp", PYTHONPATH=str(SIMULATION))
    run = autograder("grade", "--assignment", "custom-functions", "--out", tmp_path / "out", ALICE.parent,
                     env=env, check=False)
    assert run.returncode != 0
    assert "lacks packages the autograder needs: pyseccomp" in run.stderr and "pip install" in run.stderr
    assert "Traceback" not in run.stderr + run.stdout
    assert not (tmp_path / "out" / "grades.csv").exists()


def test_without_landlock_grades_and_says_so_once(tmp_path):
    """No Landlock where the container cannot be made either (--no-isolation): graded all the same, the
    instructor told, and the worker reads a file Landlock would have kept from it."""
    graded = grade(tmp_path, "landlock", "--no-isolation")
    assert_graded_in_full(graded)
    assert graded.log.count("Landlock is unavailable") == 1, graded.log
    assert "READ ANSWER = 42" in graded.printed()


def test_with_landlock_nothing_is_said(tmp_path):
    """The same run where the kernel has Landlock: no warning about it, and the file stays closed (the
    probe above tells the two apart)."""
    if landlock_abi() < 1:
        pytest.skip("this kernel has no Landlock")
    graded = grade(tmp_path, "userns", "--no-isolation")
    assert_graded_in_full(graded)
    assert "Landlock is unavailable" not in graded.log and "seccomp is unavailable" not in graded.log
    assert "DENIED PermissionError" in graded.printed()


def test_nothing_is_missing_where_the_machine_has_everything():
    """Where this machine has seccomp and Landlock, the log names no missing protection, with or without
    a container."""
    if not all(available().values()):
        pytest.skip(f"this machine lacks some: {available()}")
    assert unavailable(True, Limits()) == [] and unavailable(False, Limits()) == []
