"""Another torch than the pinned one: the tested range declared once, said once when left, and no private
torch name (measure/captured.PRIVATE) whose absence breaks check() or the grader."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import tomllib

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from autograder import torch_versions
from autograder.measure.captured import PRIVATE
from autograder.torch_versions import NEWEST, OLDEST, outside_range
from tests.conftest import EXAMPLES, ROOT
from tests.test_install import pinned
from tests.wrong_functions import HEADER, KILLHEAD

RIGHT_KILLHEAD = KILLHEAD.format(cols="0:ctx.n", returns="result, None")
WRONG_KILLHEAD = KILLHEAD.format(cols="1:ctx.n + 1", returns="result, None")  # the gradient one column off


def test_the_lower_bound_is_the_oldest_torch_tested_and_the_pin_lies_in_the_range():
    """Does pyproject.toml promise exactly the oldest torch that `make test-torch` tests, and does the
    pinned torch lie between the oldest and the newest tested?"""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    (torch,) = [Requirement(r) for r in project["dependencies"] if Requirement(r).name == "torch"]
    assert str(torch.specifier) == f">={OLDEST}"
    assert Version(OLDEST) <= Version(pinned()["torch"]) <= Version(NEWEST)


@pytest.mark.parametrize(("version", "side"), [("2.4.1", "older"), ("2.16.0", "newer"), ("3.0.0", "newer"),
                                               ("2.17.0.dev20261201+cpu", "newer")])
def test_a_torch_outside_the_range_is_named_with_the_range(version, side):
    line = outside_range(version)
    tested = torch_versions.tested_range()
    said = f"torch {version} is {side} than the releases this course is tested with ({tested})"
    assert said in line
    assert "\n" not in line


@pytest.mark.parametrize("version", [OLDEST, NEWEST, "2.13.0+cpu", "2.5.0", "2.15.2"])
def test_a_torch_inside_the_range_says_nothing(version):
    assert outside_range(version) == ""


def python(code: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          cwd=ROOT, timeout=timeout, check=False)


CHECKS = f"""
    from autograder import check
    namespace = {{"check": check}}
    exec({HEADER + RIGHT_KILLHEAD!r}, namespace)
    right = check(namespace["KillHead"])
    exec({HEADER + WRONG_KILLHEAD!r}, namespace)
    wrong = check(namespace["KillHead"])
    print("right", right.passed, right.score)
    print("wrong", wrong.passed, [r.check for r in wrong.results if not r.passed])
"""


def test_check_says_once_that_torch_is_outside_the_range():
    """A notebook on a torch newer than the newest tested: one line, at the first check() only, and the
    verdicts as usual."""
    done = python("import torch\ntorch.__version__ = '2.99.0'\n" + textwrap.dedent(CHECKS))
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stderr.count("torch 2.99.0 is newer than the releases this course is tested with") == 1
    assert "right True" in done.stdout
    assert "wrong False ['gradient'" in done.stdout


# torch renaming its private names: each is missing while measure/captured.py is imported, and back after
# (torch's own public functions, which captured's fallbacks call, keep working, as in a torch that renamed
# them).
WITHOUT_PRIVATE = f"""
import importlib, torch
hidden = {{}}
for name in {sorted(n for n in PRIVATE if n.startswith("torch."))!r}:
    owner, attribute = name.rsplit(".", 1)
    owner = importlib.import_module(owner) if owner in ("torch", "torch._C") else eval(owner)
    hidden[(owner, attribute)] = getattr(owner, attribute)
    delattr(owner, attribute)
import autograder.measure.captured
for (owner, attribute), value in hidden.items():
    setattr(owner, attribute, value)
"""
# "(the same)" as the line above, "(speed only)": no protection lost, nothing said
LOST = {what for name, what in PRIVATE.items() if name.startswith("torch.") and not what.startswith("(")}


def test_check_works_without_any_private_torch_name():
    """With every private torch name of measure/captured.PRIVATE missing (a torch that renamed them), does
    check() still give a right Function full marks and a wrong one its failure?"""
    done = python(WITHOUT_PRIVATE + textwrap.dedent(CHECKS))
    assert done.returncode == 0, done.stderr[-3000:]
    assert "right True" in done.stdout
    assert "wrong False ['gradient'" in done.stdout
    assert "lacks" not in done.stderr  # the protections are the grader's business: its log says it


@pytest.mark.slow
def test_the_grader_works_without_any_private_torch_name_and_says_what_is_lost_once(tmp_path):
    """The same for `python -m autograder grade`: the example class graded as usual, and each protection
    that is lost named once in the grader's log."""
    out = tmp_path / "out"
    done = python(WITHOUT_PRIVATE + textwrap.dedent(f"""
        import sys
        from autograder.cli import main
        sys.exit(main(["grade", "--assignment", "custom-functions", "--out", {str(out)!r}, "--quiet",
                       {str(EXAMPLES)!r}]))
    """))
    assert done.returncode == 0, done.stderr[-3000:]
    lost = [line for line in done.stderr.splitlines() if "lacks what gives a protection of the grader" in
            line]
    assert len(lost) == len(LOST), done.stderr
    assert all(any(what in line for line in lost) for what in LOST), lost
    alice = json.loads((out / "alice" / "results.json").read_text())
    assert all(t["status"] == "passed" for t in alice["tests"]), [t["name"] for t in alice["tests"]]
    assert json.loads((out / "bob" / "results.json").read_text())["score"] < alice["score"]
