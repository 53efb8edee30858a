"""Can several assignments be graded in one grader start (`grade ... --and --assignment B --out DIR_B
...`), each part a whole `grade` command line of the contract, with the files separate runs write?"""

import csv

import pytest

from autograder.several import parts
from tests.conftest import ROOT, autograder

EXAMPLES = ROOT / "examples"


def test_parts_are_whole_grade_command_lines():
    argv = ["grade", "--assignment", "a", "--out", "x", "s1", "--and",
            "--assignment", "b", "--out", "y", "s2"]
    assert parts(argv) == [["grade", "--assignment", "a", "--out", "x", "s1"],
                           ["grade", "--assignment", "b", "--out", "y", "s2"]]
    assert parts(["grade", "--assignment", "a", "--out", "x", "s1"]) == [argv[:6]]
    assert parts(["list", "--and"]) == [["list", "--and"]]


def test_parts_sharing_an_out_are_refused_before_grading(tmp_path):
    result = autograder("grade", "--assignment", "custom-functions", "--out", tmp_path / "out",
                        EXAMPLES / "custom-functions", "--and", "--assignment", "double-backward", "--out",
                        tmp_path / "out", EXAMPLES / "double-backward", check=False)
    message = result.stderr.replace("\n  ", " ")
    assert result.returncode == 2 and "needs its own --out" in message and "Traceback" not in message
    assert not (tmp_path / "out").exists()


def grades(path) -> dict[str, str]:
    with open(path, newline="") as f:
        return {r["submission"]: r["score"] for r in csv.DictReader(f)}


@pytest.mark.slow
def test_two_assignments_in_one_start(tmp_path):
    """Is each part graded into its own --out as its own command would grade it?"""
    first, second = tmp_path / "cf", tmp_path / "db"
    result = autograder("grade", "--assignment", "custom-functions", "--out", first, "--quiet",
                        EXAMPLES / "custom-functions", "--and", "--assignment", "double-backward", "--out",
                        second, "--quiet", EXAMPLES / "double-backward")
    assert "custom-functions -> " in result.stderr and "double-backward -> " in result.stderr
    assert grades(first / "grades.csv") == {"alice": "50", "bob": "29", "carol": "25", "erin": "0"}
    assert set(grades(second / "grades.csv")) == {"frank", "grace"}
    separate = tmp_path / "db-alone"
    autograder("grade", "--assignment", "double-backward", "--out", separate, "--quiet",
               EXAMPLES / "double-backward")
    assert (separate / "grades.csv").read_bytes() == (second / "grades.csv").read_bytes()
    for sid in ("frank", "grace"):
        assert (separate / sid / "results.json").read_bytes() == (second / sid / "results.json").read_bytes()
