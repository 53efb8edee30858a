"""tools/torch_matrix.py without installing a torch: room checked before an install, pip's failure said in
one paragraph, and `--discard` (what .ci/run uses) leaving no environment behind, passed or not."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tools import torch_matrix


@pytest.fixture
def matrix(tmp_path, monkeypatch):
    """The matrix in a project of its own under tmp_path, with subprocess.run answering for pip and pytest:
    `answers` maps the program's first word after `-m` to its return code."""
    (tmp_path / "requirements.txt").write_text("torch==2.13.0\nnumpy==2.1.0\n")
    monkeypatch.setattr(torch_matrix, "ROOT", tmp_path)
    monkeypatch.setattr(torch_matrix, "VENVS", tmp_path / ".venv-torch")
    answers = {"venv": 0, "pip": 0, "pytest": 0}
    calls = []

    def run(command, **_):
        module = command[command.index("-m") + 1]
        calls.append(module)
        if module == "venv":
            (tmp_path / ".venv-torch" / command[-1].rsplit("/", 1)[-1] / "bin").mkdir(parents=True)
        return subprocess.CompletedProcess(command, answers[module])

    monkeypatch.setattr(torch_matrix.subprocess, "run", run)
    monkeypatch.setattr(torch_matrix, "room_problem", lambda where: "")
    return tmp_path, answers, calls


def main(monkeypatch, *argv: str) -> int:
    monkeypatch.setattr(sys, "argv", ["torch_matrix", *argv])
    return torch_matrix.main()


@pytest.mark.parametrize("discard", [True, False])
def test_discard_removes_each_environment_once_its_tests_ran(matrix, monkeypatch, discard):
    root, _, calls = matrix
    assert main(monkeypatch, "2.5.1", "2.15.0", *(["--discard"] if discard else [])) == 0
    assert calls == ["venv", "pip", "pytest"] * 2
    left = sorted(p.name for p in (root / ".venv-torch").iterdir())
    assert left == ([] if discard else ["2.15.0", "2.5.1"])


def test_a_failed_test_run_is_still_discarded_and_said(matrix, monkeypatch, capsys):
    root, answers, _ = matrix
    answers["pytest"] = 1
    assert main(monkeypatch, "2.5.1", "--discard") == 1
    assert not (root / ".venv-torch" / "2.5.1").exists()
    assert "tests failed on torch 2.5.1" in capsys.readouterr().err


def test_pip_failing_is_one_paragraph_that_says_what_to_do(matrix, monkeypatch, capsys):
    root, answers, calls = matrix
    answers["pip"] = 1
    assert main(monkeypatch, "2.5.1", "2.15.0", "--discard") == 2
    err = capsys.readouterr().err
    assert "pip could not install torch 2.5.1" in err and "free some and run it again" in err
    assert "Traceback" not in err and err.count("\n") == 1
    assert calls == ["venv", "pip"], "the matrix stops at the first version it cannot install"
    assert not (root / ".venv-torch" / "2.5.1").exists(), "a half-installed environment is discarded too"


def test_too_little_room_stops_before_pip_runs(matrix, monkeypatch, capsys):
    _, _, calls = matrix
    monkeypatch.setattr(torch_matrix, "room_problem", lambda where: torch_matrix.Stop.__doc__)
    assert main(monkeypatch, "2.5.1") == 2
    assert calls == []


def test_room_problem_names_the_free_room_and_the_remedy(tmp_path):
    assert torch_matrix.room_problem(tmp_path / "not" / "yet", needed_gb=0) == ""
    problem = torch_matrix.room_problem(tmp_path / "not" / "yet", needed_gb=1e9)
    assert "GB free where" in problem and str(tmp_path) in problem and "make clean" in problem
