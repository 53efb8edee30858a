"""Does a submission whose backward builds a graph Graphviz takes many minutes to lay out, within the grader's
caps (tests/report/slow_graph.py), cost its own pictures only, graded among honest classmates?

One batch of the double-backward assignment through the command line, as an instructor runs it: the
example class (frank right, grace subtly wrong, her Cube graphed) and the forged submission. Only what
happened is checked, never times: the forged page says its graphs were not drawn and shows the
reference's, the honest pages have their graphs, every verdict is what the code deserves, and no `dot`
is left running (tests/sandbox/survivors.py)."""

from __future__ import annotations

import html
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder import config
from autograder.course import find_assignment
from autograder.judge.checks import max_score
from tests.conftest import ROOT

pytestmark = pytest.mark.slow

EXAMPLES = ROOT / "examples" / "double-backward"
NOT_DRAWN = f"This graph was not drawn: Graphviz took more than {config.DRAW_SECONDS:g} s to lay it out."
DRAWN = 'class="graph"'  # in every SVG Graphviz draws, once


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot is not installed")
    base = tmp_path_factory.mktemp("slow-graph")
    submissions = base / "class"
    submissions.mkdir()
    for path in [*EXAMPLES.glob("*.py"), ROOT / "tests" / "report" / "slow_graph.py"]:
        shutil.copy(path, submissions)
    out = base / "out"
    command = [sys.executable, ROOT / "tests" / "sandbox" / "survivors.py", base / "survivors.json",
               sys.executable, "-m", "autograder", "grade", "--assignment", "double-backward", "--out", out,
               "--jobs", "2", "--quiet", submissions]
    run = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=1200, check=False)
    assert run.returncode == 0, run.stderr[-3000:]
    return out, json.loads((base / "survivors.json").read_text())


def page(out: Path, sid: str) -> str:
    return html.unescape((out / sid / "feedback.html").read_text())


def failed(out: Path, sid: str) -> list[str]:
    results = json.loads((out / sid / "results.json").read_text())
    assert results["tests"], sid
    return sorted(t["name"] for t in results["tests"] if t["status"] != "passed")


def test_the_forged_graphs_are_not_drawn_and_the_page_says_so(batch):
    out, _ = batch
    text = page(out, "slow_graph")
    assert text.count(NOT_DRAWN) == 2  # Square's and Cube's (one graph is drawn once on a page)
    assert text.count(DRAWN) == 2  # the reference's graphs beside them
    assert "AFunctionWhoseNameIsLongEnough" in text  # the verdict names the Functions it goes through


def test_the_forged_submission_gets_the_verdicts_its_code_deserves(batch):
    """Right first derivatives, wrong second ones, Cube not through CubeBackward; Sinh right."""
    out, _ = batch
    assert failed(out, "slow_graph") == ["Cube: companion used", "Cube: gradgradcheck",
                                         "Square: gradgradcheck"]


def test_the_honest_pages_have_their_graphs_and_their_verdicts(batch):
    out, _ = batch
    assert failed(out, "frank") == []
    assert json.loads((out / "frank" / "results.json").read_text())["score"] == \
        max_score(find_assignment("double-backward"))
    assert failed(out, "grace") == ["Cube: companion used", "Cube: gradgradcheck", "Sinh: save_for_backward",
                                    "Square: gradcheck", "Square: gradgradcheck", "Square: gradient"]
    grace = page(out, "grace")
    assert grace.count(DRAWN) >= 2 and "not drawn" not in grace  # hers and the reference's


def test_no_dot_is_left_running(batch):
    _, survivors = batch
    assert survivors == []
