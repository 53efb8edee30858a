"""The record of a graded submission (Graded), and the result files of the contract: <id>/results.json
(Gradescope's format), <id>/feedback.html, grades.csv.

Every file is written to a temporary name and renamed into place, and results.json last, so a
submission counts as graded only when all its files are complete. Every file's text goes through
plain.valid (JSON documents through plain.valid_json): what a worker printed or raised, and file names,
may hold lone surrogates, which UTF-8 cannot hold.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from autograder.report.csvsafe import cell
from autograder.report.plain import valid, valid_json

if TYPE_CHECKING:  # only named here: reading grades back (the Canvas export) needs no torch
    from autograder.flags import Flag
    from autograder.judge.verdicts import CheckResult
    from autograder.term.standing import Standing


@dataclass
class Graded:
    """One graded submission, as every way of grading hands it on: the pipeline's verdicts, the batch's
    summary table, Gradescope's results (one per file of an upload), the Canvas export (read back from
    grades.csv, where only the id, the scores and the identity are known)."""

    submission: str  # its id (layouts.py); on Gradescope, the file as the student named it
    score: float
    max_score: float
    results: list[CheckResult] = field(default_factory=list)  # the verdicts, when graded in this run
    sha256: str = ""  # every byte graded (loader.Submission.sha256)
    cell_errors: list[dict] = field(default_factory=list)  # the cells that raised
    output: str = ""  # what the code printed
    timed_out: list[str] = field(default_factory=list)  # "load" (the cells) and the problems out of time
    seconds: float = 0.0  # in its worker
    skipped: bool = False  # already graded with the very same key (batch.Key): not graded again
    reason: str = ""  # why it was graded (again): "new", "its files changed", ...
    feedback: Path | None = None  # its feedback.html
    identity: dict = field(default_factory=dict)  # who handed it in: name, email, sid, canvas_user, submitted
    # Why the grader could not grade it in this run, by a fault of its own (no worker could be started,
    # e.g. its temporary disk was full): no score is written, and the next run grades it.
    not_graded: str = ""
    # The grade with grading.toml applied (adjustments, late penalty), where it was computed: export sets
    # it, and score to its score.
    standing: Standing | None = None
    flag: Flag | None = None  # it reaches into the grader (flags.py): where, and the points withheld


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(valid(text))
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


def results_json(results: list[CheckResult], summary: str, extra: dict,
                 max_score: float | None = None) -> dict:
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


def gradescope_results(results: list[CheckResult], outputs: list[str], problems: list[str], summary: str,
                       fmt: str, visibility: str, hidden_visibility: str, seconds: float,
                       extra: dict) -> dict:
    """Gradescope's results.json as run_autograder writes it: each test with its rendered output (in
    format fmt), numbered problem.check in the assignment's order and tagged with its problem, its
    visibility by whether it is hidden. No test, and not the total, may score above its maximum."""
    for r in results:
        assert_within(r.score, r.max_score, r.name)
    assert_within(sum(r.score for r in results), sum(r.max_score for r in results), "the submission")
    numbers = {name: i for i, name in enumerate(problems, 1)}
    counters: dict[str, int] = {}
    tests = []
    for r, output in zip(results, outputs, strict=True):
        counters[r.problem] = counters.get(r.problem, 0) + 1
        tests.append({
            "name": r.name,
            "number": f"{numbers[r.problem]}.{counters[r.problem]}",
            "score": r.score,
            "max_score": r.max_score,
            "status": "passed" if r.passed else "failed",
            "output": output,
            "output_format": fmt,
            "visibility": hidden_visibility if r.hidden else visibility,
            "tags": [r.problem],
        })
    return {
        "score": sum(r.score for r in results),
        "execution_time": round(seconds, 3),
        "output": summary,
        "output_format": fmt,
        "test_output_format": fmt,
        "stdout_visibility": "hidden",
        "tests": tests,
        "extra_data": extra,
    }


def gradescope_failure(reason: str, seconds: float) -> dict:
    """What students see when the grader itself failed: no score is invented for them."""
    return {"score": 0.0, "execution_time": round(seconds, 3), "output_format": "text",
            "stdout_visibility": "hidden",
            "output": "The autograder could not grade this submission because of a problem in the grader, "
                      "not in your code. Your instructors can see what went wrong; they will regrade it. ("
                      + reason + ")",
            "tests": []}


def write_results(path: Path, document: dict, indent: int = 2) -> None:
    """Writes a results.json (atomically): indent 2 for the batch's, 1 for Gradescope's, as each
    always was."""
    write_atomic(path, json.dumps(valid_json(document), indent=indent) + "\n")


def read_results(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


# after the problems' columns (docs/instructors.md, "Adjustments and late work")
APPENDED = ("graded", "adjustments", "late_penalty", "late", "flagged")
DIGEST = ".sha256"  # grades.csv.sha256 beside grades.csv, in sha256sum's format


def grades_csv(rows: list[tuple[str, dict]], problems: list[str], max_score: float,
               standings: dict | None = None) -> str:
    """One row per submission: submission,score,max_score,<Problem>,..., then graded, adjustments,
    late_penalty, late, flagged ("withheld", or "accepted" by grading.toml's [[accept]]: flags.py). score
    and the problems' columns are the standing (term/standing.py: the grade after grading.toml's
    adjustments, acceptances and late penalty); graded is the autograder's score. Text cells that a
    spreadsheet would read as a formula are neutralised (csvsafe)."""
    from autograder.term.standing import standings as compute

    standings = standings if standings is not None else compute(None, rows, problems, max_score)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["submission", "score", "max_score", *map(cell, problems), *APPENDED])
    for sid, result in rows:
        assert_within(result["score"], max_score, sid)
        s = standings[sid]
        assert_within(s.score, max_score, sid)
        writer.writerow([cell(sid), f"{s.score:g}", f"{max_score:g}",
                         *(f"{s.problems[p]:g}" for p in problems), f"{s.graded:g}", f"{s.adjustment:g}",
                         f"{s.penalty:g}", cell(s.late), s.flagged])
    return buffer.getvalue()


def sha256(text: str) -> str:
    return hashlib.sha256(valid(text).encode("utf-8")).hexdigest()


def write_grades(folder: Path, text: str, applied: str | None = None) -> Path | None:
    """Writes grades.csv and, beside it, the digest of what was written (and of the grading.toml text
    applied), so that a hand edit is caught by export. A grades.csv edited by hand since the grader
    wrote it is kept as grades.edited.csv (grades.edited-2.csv, ... when an earlier edit is kept there:
    returned), not lost; one that says what is about to be written
    (a folder of an earlier version, without a digest) is not."""
    path, kept = folder / "grades.csv", None
    if grades_edited(folder) and not _holds(path, text):
        kept = _free(folder, "grades.edited", ".csv")
        os.replace(path, kept)
    lines = [f"{sha256(text)}  grades.csv"]
    if applied is not None:
        lines.append(f"{sha256(applied)}  grading.toml")
    write_atomic(path, text)
    write_atomic(folder / ("grades.csv" + DIGEST), "\n".join(lines) + "\n")
    return kept


def _free(folder: Path, stem: str, suffix: str) -> Path:
    """folder/stem+suffix, or the first of stem-2, stem-3, ... that does not exist yet."""
    path, n = folder / f"{stem}{suffix}", 1
    while path.exists():
        n += 1
        path = folder / f"{stem}-{n}{suffix}"
    return path


def _holds(path: Path, text: str) -> bool:
    try:
        return path.read_bytes() == valid(text).encode("utf-8")
    except OSError:
        return False


def digests(folder: Path) -> dict[str, str]:
    """File name -> sha256 as grades.csv.sha256 records them ({} when there is none)."""
    try:
        text = (folder / ("grades.csv" + DIGEST)).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    return {name: digest for digest, _, name in (line.partition("  ") for line in text.splitlines()) if name}


def grades_edited(folder: Path) -> bool:
    """grades.csv is there and is not what the grader wrote (or has no digest beside it)."""
    try:
        data = (folder / "grades.csv").read_bytes()
    except OSError:
        return (folder / "grades.csv").exists()
    return digests(folder).get("grades.csv") != hashlib.sha256(data).hexdigest()
