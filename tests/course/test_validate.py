"""Is a broken extra file refused before anything is done with it, by `list`, `grade`, `gradescope` and the
archive's setup.sh check, naming the problem and the cause; and are the options checked the same way?"""

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from autograder.cli import COMMANDS
from tests.conftest import EXAMPLES, autograder

BROKEN = """
from autograder.course import Case, Problem, TensorSpec, add_problem

add_problem("custom-functions", Problem(name="Reciprocal", summary="1 / x", reference=lambda x: 1 / 0,
                                         cases=(Case((TensorSpec((3,)),)),), hidden=True))
"""
CAUSE = ("Problem 'Reciprocal' of custom-functions (from {path}, line 4): its reference raised "
         "ZeroDivisionError: division by zero on case 1 (tensor(3,)).")


def said(result) -> str:
    return result.stderr.replace("\n  ", " ")


@pytest.fixture()
def broken(tmp_path) -> Path:
    path = tmp_path / "hidden.py"
    path.write_text(BROKEN)
    return path


@pytest.mark.parametrize("command", ["list", "grade", "gradescope"])
def test_a_broken_extra_file_is_refused(tmp_path, broken, command):
    """Does each command refuse an extra file whose reference raises, with one paragraph naming the problem,
    the file and the cause, writing nothing?"""
    out = tmp_path / ("archive.zip" if command == "gradescope" else "graded")
    args = {"list": ["list", "--extra", broken],
            "grade": ["grade", "--assignment", "custom-functions", "--extra", broken, "--out", out,
                      EXAMPLES],
            "gradescope": ["gradescope", "--assignment", "custom-functions", "--extra", broken, "--out", out],
            }[command]
    result = autograder(*args, check=False, timeout=600)
    assert result.returncode == 2
    assert CAUSE.format(path=broken) in said(result) and "Traceback" not in result.stderr
    assert not out.exists()


def test_the_archives_setup_check_refuses_a_broken_extra_file(tmp_path, broken):
    """Does setup.sh's last step (gradescope check) fail, naming the cause, on an archive whose extra file
    is broken (here: replaced after the build), so that Gradescope's image is never ready?"""
    archive = tmp_path / "archive.zip"
    good = tmp_path / "good.py"
    good.write_text(BROKEN.replace("1 / 0", "1 / x").replace("TensorSpec((3,))", "TensorSpec((3,), low=1.0, "
                                                                                 "high=2.0)"))
    autograder("gradescope", "--assignment", "custom-functions", "--extra", good, "--out", archive,
               timeout=600)
    root = tmp_path / "root"
    with zipfile.ZipFile(archive) as z:
        z.extractall(root / "source")
    (extra,) = (root / "source" / "extra").iterdir()
    shutil.copy(broken, extra)
    result = subprocess.run([sys.executable, "-m", "autograder.gradescope", "check", "--root", str(root)],
                            capture_output=True, text=True, timeout=600, check=False,
                            env=dict(os.environ, PYTHONPATH=str(root / "source")))
    assert result.returncode == 1
    assert "NOT ready to grade" in result.stderr and "its reference raised ZeroDivisionError" in result.stderr
    assert "ready to grade custom-functions" not in result.stdout


@pytest.mark.parametrize(("args", "phrase"), [
    (["--problem-timeout", "-1"], "--problem-timeout must be a number of seconds greater than 0, not -1"),
    (["--load-timeout", "0"], "--load-timeout must be a number of seconds greater than 0, not 0"),
    (["--load-timeout", "nan"], "--load-timeout must be a number of seconds greater than 0"),
    (["--seed", "-1"], "--seed must be a whole number from 0 to 2147483647"),
    (["--jobs", "0"], "--jobs must be from 1 to 256"),
    (["--extra", "notes.txt"], "--extra takes a Python file (.py)"),
    (["--roster", "missing.csv", "--canvas", "c.csv"], "--roster missing.csv is not a file"),
])
def test_options_are_checked_before_grading(tmp_path, args, phrase):
    """Is each option that would make every student score 0 (or crash later) refused at once?"""
    result = autograder("grade", "--assignment", "gradcheck", "--out", tmp_path / "out", *args,
                        EXAMPLES, cwd=tmp_path, check=False, timeout=600)
    assert result.returncode == 2 and phrase in said(result) and "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists()


def test_results_folder_inside_the_submissions_is_refused(tmp_path):
    """Is --out inside a folder of submissions refused (its result folders would be read as students next
    time), and a submissions folder inside --out?"""
    subs = tmp_path / "class"
    subs.mkdir()
    (subs / "alice.py").write_text("x = 1\n")
    result = autograder("grade", "--assignment", "gradcheck", "--out", subs / "graded", subs, check=False,
                        timeout=600)
    assert result.returncode == 2 and "is inside the submissions folder" in said(result)
    result = autograder("grade", "--assignment", "gradcheck", "--out", tmp_path, subs, check=False,
                        timeout=600)
    assert result.returncode == 2 and "is inside --out" in said(result)


def test_gradescope_options_are_checked(tmp_path):
    """Does the archive's build refuse a time limit or a seed that would fail every student?"""
    result = autograder("gradescope", "--assignment", "gradcheck", "--out", tmp_path / "a.zip",
                        "--problem-timeout", "0", check=False, timeout=600)
    assert result.returncode == 2 and "--problem-timeout must be" in said(result)
    result = autograder("gradescope", "--assignment", "gradcheck", "--out", tmp_path / "a.zip", "--seed",
                        "-5", check=False, timeout=600)
    assert result.returncode == 2 and "--seed must be" in said(result)


def test_every_assignments_fingerprint_is_the_same_in_two_fresh_interpreters():
    """A result's key holds the assignment's fingerprint: if it changed from one run to the next (a memory
    address in a definition, e.g. a lambda's repr), every re-run would grade everything again."""
    code = ("from autograder.course.assignments.registry import load\n"
            "from autograder.judge.fingerprint import fingerprint\n"
            "registry = load([])\n"
            "print(sorted((a.name, fingerprint(a)) for a in registry.assignments.values()))")
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env=dict(os.environ, PYTHONHASHSEED=str(seed))).stdout for seed in (1, 2)]
    assert runs[0] == runs[1]
    assert "double-backward" in runs[0] and "modern-functions" in runs[0]


@pytest.mark.parametrize(("args", "said"), [
    ([], f"autograder: give a command: {', '.join(COMMANDS)}. Run `python -m autograder --help`"),
    (["grade"], "Run `python -m autograder grade --help` for the usage."),
])
def test_a_command_line_without_a_command_says_what_to_run(args, said):
    """Does `python -m autograder` alone name the commands and the help to run (it once said `python -m
    autograder autograder --help`), and a command without its arguments its own help?"""
    result = autograder(*args, check=False, timeout=120)
    assert result.returncode == 2 and said in " ".join(result.stderr.split())
    assert "autograder autograder" not in result.stderr


def test_a_missing_package_is_named_before_anything_runs():
    """After an install with --no-deps, does every command name the missing packages and the pip install
    that gets them, with exit status 2, no traceback, and before torch is imported (whose warning about a
    missing NumPy every command once printed)? (A module set to None in sys.modules cannot be imported.)"""
    code = ("import sys\n"
            "sys.modules['yaml'] = sys.modules['numpy'] = None\n"
            "from autograder.cli import main\n"
            "try:\n"
            "    main(['list'])\n"
            "finally:\n"
            "    print('torch imported' if 'torch' in sys.modules else 'torch not imported')\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                            check=False)
    said = " ".join(result.stderr.split())
    assert result.returncode == 2 and "Traceback" not in said, said
    assert (f"This Python ({sys.executable}) lacks packages the autograder needs: numpy, pyyaml (an install "
            f"with --no-deps leaves them out). Install them with `{sys.executable} -m pip install numpy "
            f"pyyaml`") in said
    assert result.stdout.strip() == "torch not imported"


def test_every_run_time_package_is_found_here():
    """Does the check find every run-time package of the environment the tests run in (so that the module
    each distribution provides is named right in config.RUNTIME)?"""
    from autograder.packages import missing_packages

    assert missing_packages() == []


@pytest.mark.parametrize("name", ["custom-functions", "gradcheck", "double-backward", "modern-functions",
                                  "conv-bn-fusion"])
def test_every_problem_of_the_package_validates(name):
    """`grade` takes the package's own problems as they are (validate's outside_only): here each one is
    validated, the self-test included (a Function computing the reference passes, a wrong one fails)."""
    from autograder.course.assignments.registry import load
    from autograder.judge.validate import validate

    registry = load([])
    validate(registry.find_assignment(name), 0, registry.origins)


def test_every_assignment_of_the_package_is_validated_here():
    from autograder.course.assignments.registry import load

    names = set(load([]).assignments)
    tested = {"custom-functions", "gradcheck", "double-backward", "modern-functions", "conv-bn-fusion"}
    assert names == tested
