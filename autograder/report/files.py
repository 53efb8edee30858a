"""Writes the result files of the contract: <id>/results.json (Gradescope), <id>/feedback.html, grades.csv.

Every file is written to a temporary name and renamed into place, and results.json last, so a
submission counts as graded only when all its files are complete.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import tempfile
from pathlib import Path

from autograder.judge.verdicts import CheckResult
from autograder.report.csvsafe import cell


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:  # a full disk, or Ctrl-C: no half-written file left behind
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def test_output(r: CheckResult) -> str:
    return "\n\n".join(part for part in (r.message or ("passed: " + r.check), r.details) if part)


class ScoreAboveMaximum(AssertionError):
    """A score above its maximum: a fault of the grader, never written."""


def assert_within(score: float, max_score: float, what: str) -> None:
    if not (0 <= score <= max_score + 1e-9):
        raise ScoreAboveMaximum(f"{what} scored {score:g} out of {max_score:g}.")


def results_json(results: list[CheckResult], summary: str, extra: dict, max_score: float | None = None) -> dict:
    """Gradescope's results format: top-level score and tests, each with name, score, max_score,
    status and output; hidden checks carry visibility "hidden". No test, and not the total, may score
    above its maximum (ScoreAboveMaximum)."""
    for r in results:
        assert_within(r.score, r.max_score, r.name)
    if max_score is not None:
        assert_within(sum(r.score for r in results), max_score, "the submission")
    tests = []
    for r in results:
        test = {"name": r.name, "score": r.score, "max_score": r.max_score,
                "status": "passed" if r.passed else "failed", "output": test_output(r)}
        if r.hidden:
            test["visibility"] = "hidden"
        tests.append(test)
    return {"score": sum(r.score for r in results), "output": summary, "tests": tests, "extra_data": extra}


def read_results(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def grades_csv(rows: list[tuple[str, dict]], problems: list[str], max_score: float) -> str:
    """One row per submission: submission,score,max_score,<Problem>,... (text cells that a spreadsheet
    would read as a formula neutralised, see csvsafe)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["submission", "score", "max_score", *map(cell, problems)])
    for sid, result in rows:
        assert_within(result["score"], max_score, sid)
        per_problem = {p: 0.0 for p in problems}
        for test in result.get("tests", []):
            problem = test["name"].split(": ", 1)[0]
            if problem in per_problem:
                per_problem[problem] += test["score"]
        writer.writerow([cell(sid), f"{result['score']:g}", f"{max_score:g}", *(f"{per_problem[p]:g}" for p in problems)])
    return buffer.getvalue()
