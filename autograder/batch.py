"""Grades a class: load -> run (isolated workers) -> judge (here) -> report, with resume on re-run."""

from __future__ import annotations

import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from autograder.assignments import Assignment
from autograder.judge import CheckResult, Verdicts, encoded_cases, expectations, judge
from autograder.loader import Submission, load
from autograder.render import feedback_page
from autograder.report import grades_csv, read_results, results_json, write_atomic
from autograder.sandbox import Limits, Outcome, run_all


class UsageError(ValueError):
    """A mistake in how the grader was called: reported as one paragraph, exit status 2."""


@dataclass
class Graded:
    submission: str
    score: float
    max_score: float
    seconds: float
    skipped: bool
    feedback: Path


def prepare_out(out: Path) -> None:
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as error:
        raise UsageError(f"Cannot write to the output folder {out} ({error.strerror}). Choose a folder you "
                         f"can write to with --out.") from None
    remove_partial_files(out)


def remove_partial_files(out: Path) -> None:
    """Temporary files of a run that was killed while writing (write_atomic's .<name>.*.tmp): the
    files they were meant to become are written again, so they are only litter."""
    for pattern in (".*.tmp", "*/.*.tmp"):
        for path in out.glob(pattern):
            try:
                path.unlink()
            except OSError:
                pass


def already_graded(out: Path, assignment: Assignment, sub: Submission) -> dict | None:
    result = read_results(out / sub.id / "results.json")
    extra = (result or {}).get("extra_data", {})
    if extra.get("sha256") == sub.sha256 and extra.get("assignment") == assignment.name:
        return result
    return None


def failed_everywhere(assignment: Assignment, reason: str) -> list[CheckResult]:
    results = []
    for problem in assignment.problems:
        verdicts = Verdicts(problem)
        verdicts.fail_all(reason)
        results.extend(verdicts.results({}))
    return results


def problem_jobs(assignment: Assignment, seed: int) -> list[tuple]:
    """What a worker measures for each problem: (problem, encoded inputs, the reference's projections)."""
    return [(p, encoded_cases(p, seed), expectations(p, seed)) for p in assignment.problems]


def cell_hint(error: dict) -> str:
    """Why the code after a failing cell never ran, in a sentence naming the cause."""
    cell, kind, text = error.get("index"), str(error.get("type", "")), str(error.get("error", ""))
    if kind == "SystemExit":
        return (f" Cell {cell} called sys.exit() or exit() (SystemExit), which ends the program: nothing after "
                f"it in that cell ran. Remove the call.")
    if kind == "MemoryError":
        return (f" Cell {cell} ran out of memory (MemoryError: it reached the grader's memory limit), so nothing "
                f"after that point ran.")
    if kind == "RecursionError":
        return (f" Cell {cell} recursed without end (RecursionError: maximum recursion depth exceeded), so "
                f"nothing after that point ran.")
    if kind == "BlockingIOError" and "Resource temporarily unavailable" in text:
        return (f" Cell {cell} could not start another process (BlockingIOError): it reached the grader's limit "
                f"on processes, e.g. by forking without end, so nothing after that point ran.")
    return f" Cell {cell} raised an error ({kind or 'see below'}; see below), which may be why."


def _judged(problem, data: dict, seed: int) -> list[CheckResult]:
    """The judge's verdicts on data from a worker, which is untrusted: anything malformed, or not one
    measurement per case, fails the problem instead of stopping the batch (or passing unmeasured checks)."""
    try:
        if "cases" in data and (not isinstance(data["cases"], list) or len(data["cases"]) != len(problem.cases)):
            raise ValueError(f"{len(data['cases']) if isinstance(data['cases'], list) else 'no'} measured cases "
                             f"for {len(problem.cases)}")
        return judge(problem, data, seed)
    except Exception as error:  # noqa: BLE001 - judge() catches the usual errors; this is the backstop
        verdicts = Verdicts(problem)
        verdicts.fail_all(f"The grader could not read what {problem.lookup} produced ({type(error).__name__}: "
                          f"{str(error)[:200]}); it is treated as wrong.")
        return verdicts.results({})


def verdicts_for(assignment: Assignment, outcome: Outcome, seed: int) -> list[CheckResult]:
    results = []
    hint = cell_hint(outcome.cell_errors[0]) if outcome.cell_errors else ""
    for problem in assignment.problems:
        if problem.name in outcome.data:
            found = _judged(problem, outcome.data[problem.name], seed)
            for r in found:
                if "is not defined in the submission" in r.message:
                    r.message += hint
            results.extend(found)
        else:
            verdicts = Verdicts(problem)
            verdicts.fail_all(outcome.failures.get(problem.name, "No result came back for this problem."))
            results.extend(verdicts.results({}))
    return results


def write_submission(out: Path, assignment: Assignment, sub: Submission, results: list[CheckResult],
                     outcome: Outcome | None) -> dict:
    cells = outcome.cell_errors if outcome else []
    output = outcome.output if outcome else ""
    folder = out / sub.id
    write_atomic(folder / "feedback.html", feedback_page(sub.id, assignment.name, results, cells, output))
    score = sum(r.score for r in results)
    summary = f"{assignment.name}: {score:g}/{assignment.max_score:g}. Open feedback.html for the pictures."
    result = results_json(results, summary, {"submission": sub.id, "file": sub.path.name, "sha256": sub.sha256,
                                             "assignment": assignment.name})
    # No execution_time here: a batch killed and run again must end with the very files of an
    # uninterrupted run, so nothing that varies from run to run goes into them (the CLI prints times).
    write_atomic(folder / "results.json", json.dumps(result, indent=2) + "\n")
    return result


def grade(assignment: Assignment, paths: list[Path], out: Path, force: bool = False, workers: int | None = None,
          limits: Limits = Limits(), seed: int = 0, progress: bool = True) -> list[Graded]:
    """Grades every submission found in paths and writes the result files under out."""
    prepare_out(out)
    subs = load(paths)
    by_id = {s.id: s for s in subs}
    rows: dict[str, dict] = {}
    graded: list[Graded] = []
    todo = []
    for sub in subs:
        previous = None if force else already_graded(out, assignment, sub)
        if previous is not None:
            rows[sub.id] = previous
            graded.append(Graded(sub.id, previous["score"], assignment.max_score, 0.0, True, out / sub.id / "feedback.html"))
        elif sub.error:
            rows[sub.id] = write_submission(out, assignment, sub, failed_everywhere(assignment, sub.error), None)
            graded.append(Graded(sub.id, 0.0, assignment.max_score, 0.0, False, out / sub.id / "feedback.html"))
        else:
            todo.append(sub)
    tasks = [(s.id, s.cells, problem_jobs(assignment, seed)) for s in todo]
    bar = _progress(len(tasks), progress)
    for sid, outcome in run_all(tasks, limits, workers, seed):
        sub = by_id[sid]
        rows[sid] = write_submission(out, assignment, sub, verdicts_for(assignment, outcome, seed), outcome)
        graded.append(Graded(sid, rows[sid]["score"], assignment.max_score, outcome.seconds, False,
                             out / sid / "feedback.html"))
        bar.update(1)
    bar.close()
    ordered = [(s.id, rows[s.id]) for s in subs]
    write_atomic(out / "grades.csv", grades_csv(ordered, [p.name for p in assignment.problems], assignment.max_score))
    order = {s.id: i for i, s in enumerate(subs)}
    return sorted(graded, key=lambda g: order[g.submission])


def _progress(total: int, enabled: bool):
    import tqdm

    tqdm.tqdm.monitor_interval = 0  # no monitor thread: workers are forked from this process
    return tqdm.tqdm(total=total, unit="submission", desc="grading", disable=not enabled or total == 0,
                     file=sys.stderr)
