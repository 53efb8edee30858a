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
from autograder.probe import explain_plan, with_explanation
from autograder.render import feedback_page
from autograder.report import grades_csv, read_results, results_json, write_atomic
from autograder.sandbox import Limits, Measure, Outcome, Pool, Server, Task


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


def problem_jobs(assignment: Assignment, seed: int) -> list[Measure]:
    """What a worker measures for each problem: how to find and call it, and its inputs. The reference's
    projections stay here, in the plan that decides which failures to measure in full."""
    def plan_for(problem, expected):
        return lambda data: explain_plan(problem, data, expected, seed)

    return [Measure(p.name, p.spec(), encoded_cases(p, seed), p.hidden, plan_for(p, expectations(p, seed)))
            for p in assignment.problems]


def pool_for(assignment: Assignment, limits: Limits, workers: int | None, server: Server | None = None) -> Pool:
    """A pool whose clean parent has the lesson's modules and checks warmed up (started at once, if the
    caller has not started it earlier: its interpreter loads while the grader reads the submissions and
    measures the references)."""
    extra = {check for problem in assignment.problems for check in problem.extra_checks}
    return Pool(limits, workers, assignment.preload, tuple(extra), server)


def drop_expected_errors(sub: Submission, outcome: Outcome) -> Outcome:
    """Leaves out the errors of the lesson's own raises-exception cells: they are meant to raise."""
    expected = set(sub.expected_errors)
    outcome.cell_errors = [c for c in outcome.cell_errors if c.get("index", 0) - 1 not in expected]
    return outcome


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
            data = with_explanation(outcome.data[problem.name], outcome.explanations.get(problem.name))
            found = _judged(problem, data, seed)
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


def _contained(assignment: Assignment, sub: Submission, outcome: Outcome | None, seed: int) -> list[CheckResult]:
    """The verdicts on one submission; a failure of the grader's own while judging it fails that
    submission with the cause, never the batch."""
    try:
        if outcome is None:
            return failed_everywhere(assignment, sub.error)
        return verdicts_for(assignment, outcome, seed)
    except Exception as error:  # noqa: BLE001 - one submission never stops a batch
        return failed_everywhere(assignment, f"The grader failed while judging this submission ({type(error).__name__}: "
                                             f"{str(error)[:200]}); it is scored 0. Tell your instructor.")


def _written(out: Path, assignment: Assignment, sub: Submission, results: list[CheckResult],
             outcome: Outcome | None) -> dict:
    """Writes one submission's files. Drawing its page may fail on what the submission produced (then
    the page says so, without pictures); writing may fail on a full disk (then the submission's row says
    so, and the batch goes on)."""
    try:
        return write_submission(out, assignment, sub, results, outcome)
    except OSError as error:
        score = sum(r.score for r in results)
        print(f"autograder: could not write the results of {sub.id} ({error.strerror or error}); its score "
              f"{score:g} is in grades.csv only. Free some space and run the same command again.", file=sys.stderr)
        return {"score": score, "tests": [{"name": r.name, "score": r.score} for r in results], "unwritten": True}
    except Exception as error:  # noqa: BLE001 - a page that cannot be drawn costs its pictures only
        for r in results:
            r.figures = []
        results[0].details += f"\n(The grader could not draw this page's pictures: {type(error).__name__}.)"
        return write_submission(out, assignment, sub, results, outcome)


def grade(assignment: Assignment, paths: list[Path], out: Path, force: bool = False, workers: int | None = None,
          limits: Limits | None = None, seed: int = 0, progress: bool = True,
          server: Server | None = None) -> list[Graded]:
    """Grades every submission found in paths and writes the result files under out."""
    prepare_out(out)
    pool = pool_for(assignment, limits or Limits(), workers, server)  # before anything about the class is read
    try:
        return _grade(pool, assignment, paths, out, force, seed, progress)
    finally:
        pool.close()


def _grade(pool: Pool, assignment: Assignment, paths: list[Path], out: Path, force: bool, seed: int,
           progress: bool) -> list[Graded]:
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
            rows[sub.id] = _written(out, assignment, sub, _contained(assignment, sub, None, seed), None)
            graded.append(Graded(sub.id, 0.0, assignment.max_score, 0.0, False, out / sub.id / "feedback.html"))
        else:
            todo.append(sub)
    jobs = problem_jobs(assignment, seed)
    tasks = [Task(s.id, s.cells, jobs) for s in todo]
    bar = _progress(len(tasks), progress)
    for sid, outcome in pool.run(tasks, seed):
        sub = by_id[sid]
        drop_expected_errors(sub, outcome)
        rows[sid] = _written(out, assignment, sub, _contained(assignment, sub, outcome, seed), outcome)
        graded.append(Graded(sid, rows[sid]["score"], assignment.max_score, outcome.seconds, False,
                             out / sid / "feedback.html"))
        bar.update(1)
    bar.close()
    ordered = [(s.id, rows[s.id]) for s in subs]
    try:
        write_atomic(out / "grades.csv", grades_csv(ordered, [p.name for p in assignment.problems],
                                                    assignment.max_score))
    except OSError as error:
        raise UsageError(f"Could not write {out / 'grades.csv'} ({error.strerror or error}). Every submission "
                         f"graded so far is saved: free some space and run the same command again.") from None
    order = {s.id: i for i, s in enumerate(subs)}
    return sorted(graded, key=lambda g: order[g.submission])


def _progress(total: int, enabled: bool):
    import tqdm

    tqdm.tqdm.monitor_interval = 0  # no monitor thread: workers are forked from this process
    return tqdm.tqdm(total=total, unit="submission", desc="grading", disable=not enabled or total == 0,
                     file=sys.stderr)
