"""The one way from loaded submissions to verdicts: run (isolated workers) -> judge (here).

    with Pipeline(assignment, limits, workers, seed, server, Private([...])) as pipeline:  # warms up at once
        for sub, graded in pipeline.grade(submissions):  # as each worker finishes: measure, then judge
            ...

Used alike by the local batch (batch.py: resume, result files, class report), by Gradescope's
run_autograder (gradescope/run.py) and by tools/bench*.py. A failure of the grader's own while judging
one submission fails that submission with the cause, never the others.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Self

import autograder
from autograder import cells as cells_
from autograder import config
from autograder.course.assignments import Assignment
from autograder.flags import apply as apply_flag
from autograder.flags import flag_of
from autograder.intake.loader import Submission
from autograder.judge.checks import max_score, spec_of
from autograder.judge.plan import plan_in_full, with_measured_in_full
from autograder.judge.reference import encoded_cases, expectations, reference_seconds
from autograder.judge.source import read_source, tensor_arguments
from autograder.judge.verdicts import CheckResult, Verdicts, judge
from autograder.report.files import Graded
from autograder.sandbox import Limits, Measure, Outcome, Pool, Server, Task
from autograder.sandbox.budget import scaled
from autograder.sandbox.pool import NO_WORKER


def warm_up(assignment: Assignment, preload: tuple[str, ...] = ()) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What the workers' clean parent imports and warms up for this assignment: (modules, extra checks).
    preload: modules on top of the lesson's and config.PRELOAD (Gradescope's: config.GRADESCOPE_PRELOAD)."""
    extra = {check for problem in assignment.problems for check in problem.extra_checks}
    return tuple(assignment.preload) + config.PRELOAD + tuple(preload), tuple(sorted(extra))


class Pipeline:
    """Grades submissions of one assignment in a pool of workers whose clean parent is asked to warm up
    when the pipeline is made (the caller reads the class meanwhile). workers: None for the rule of
    config.WORKERS_PER_CORE; preload: see warm_up; prime: see sandbox.Pool."""

    def __init__(self, assignment: Assignment, limits: Limits | None = None, workers: int | None = None,
                 seed: int = config.SEED, server: Server | None = None, private: Private | None = None,
                 preload: tuple[str, ...] = (), prime: bool = True):
        self.assignment, self.seed = assignment, seed
        self.private = private or Private()
        self.pool = Pool(limits or Limits(), workers, *warm_up(assignment, preload), server, prime=prime)

    @property
    def isolation(self) -> str:
        """Where student code runs: "container", or "none: " and why (sandbox.Server.isolation)."""
        return self.pool.server.isolation

    @property
    def unavailable(self) -> list[str]:
        """The protections the workers go without on this machine, a sentence each, for the log."""
        return self.pool.unavailable()

    def grade(self, subs: list[Submission]) -> Iterator[tuple[Submission, Graded]]:
        """Each submission with its Graded record: those that could not be read first (failed everywhere,
        without a worker), then the others as their workers finish."""
        for sub, outcome in self.measure(subs):
            yield sub, self.judge(sub, outcome)

    def measure(self, subs: list[Submission]) -> Iterator[tuple[Submission, Outcome | None]]:
        """Each submission with what its worker measured, its cells' outcome as the student reads it
        (cells.cleaned): None for those that could not be read (first), then the others as their workers
        finish."""
        for sub in subs:
            if sub.error:
                yield sub, None
        jobs = problem_jobs(self.assignment, self.seed, self.pool.limits)
        by_id = {s.id: s for s in subs}
        tasks = [Task(s.id, s.cells, jobs, s.modules) for s in subs if not s.error]
        skipped: dict[str, list[dict]] = {}  # the notes of the cells left out (cells.to_skip)
        spent: dict[str, float] = {}  # seconds of the runs that stopped in a skipped cell
        while tasks:  # a cell that killed the worker, exited or ran too long: run again without it
            again, cells_of = [], {t.key: t.cells for t in tasks}
            for sid, outcome in self.pool.run(tasks, self.seed):
                sub, cells = by_id[sid], cells_of[sid]
                note = cells_.to_skip(sub, cells, outcome, len(skipped.get(sid, [])))
                if note is not None:
                    skipped.setdefault(sid, []).append(note)
                    spent[sid] = spent.get(sid, 0.0) + outcome.seconds
                    again.append(Task(sid, [c if i != note["index"] - 1 else "" for i, c in enumerate(cells)],
                                      jobs, sub.modules))
                    continue
                yield sub, cells_.cleaned(sub, outcome, skipped.get(sid, []), spent.get(sid, 0.0),
                                          self.private)
            tasks = again

    def judge(self, sub: Submission, outcome: Outcome | None) -> Graded:
        """The verdicts on what a worker measured (measure's outcome, its cells' part clean already),
        here, in the grader, without the grader's paths; the problems a reach into the grader may have
        touched score nothing (flags.py)."""
        results = _contained(self.assignment, sub, outcome, self.seed, self.private)
        flag = flag_of([p.name for p in self.assignment.problems], sub, outcome.reaches if outcome else [],
                       tuple(p.name for p in self.assignment.problems if p.hidden))
        results = apply_flag(results, flag)
        graded = Graded(sub.id, sum(r.score for r in results), max_score(self.assignment), results,
                        sub.sha256, flag=flag)
        if outcome is not None:
            graded.cell_errors, graded.output = outcome.cell_errors, outcome.output
            graded.timed_out, graded.seconds = list(outcome.timed_out), outcome.seconds
            graded.not_graded = next((why for why in outcome.failures.values()
                                      if why.startswith(NO_WORKER[:-1])), "")
        return graded

    def close(self) -> None:
        self.pool.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_) -> None:
        self.close()


def about(sub: Submission) -> list[str]:
    """What the student's page says about what was graded: the file, the files not graded and why, and
    what the layout says of the submission (late, a resubmission, when)."""
    lines = []
    if sub.file:
        modules = f", with {', '.join(sorted(sub.modules))} beside it" if sub.modules else ""
        lines.append(f"Graded: {sub.file}{modules}.")
    lines += [f"{why}." for why in sub.ignored]
    if sub.identity.get("late"):
        lines.append("Canvas marks this submission late.")
    if sub.identity.get("resubmission"):
        lines.append(f"Canvas numbers this file as upload -{sub.identity['resubmission']}: the latest one is "
                     f"graded.")
    if sub.identity.get("submitted"):
        lines.append(f"Submitted: {sub.identity['submitted']}.")
    return lines


def failed_everywhere(assignment: Assignment, reason: str) -> list[CheckResult]:
    results = []
    for problem in assignment.problems:
        verdicts = Verdicts(problem)
        verdicts.fail_all(reason)
        results.extend(verdicts.results({}))
    return results


def problem_jobs(assignment: Assignment, seed: int, limits: Limits | None = None) -> list[Measure]:
    """What a worker measures for each problem: how to find and call it, its inputs and its CPU budget
    (scaled to its reference's time unless the limits fix one for all). The reference's projections stay
    here, in the plan that decides which failures to measure in full."""
    limits = limits or Limits()

    def plan_for(problem, expected):
        return lambda data: plan_in_full(problem, data, expected, seed)

    def seconds(problem) -> float | None:
        return (scaled(reference_seconds(problem, seed), limits.problem_seconds)
                if limits.scale_to_reference else None)

    return [Measure(p.name, spec_of(p).to_dict(), encoded_cases(p, seed), p.hidden,
                    plan_for(p, expectations(p, seed)), seconds(p))
            for p in assignment.problems]


def _judged(problem, data: dict, seed: int, sub: Submission | None = None) -> list[CheckResult]:
    """The judge's verdicts on data from a worker, which is untrusted: anything malformed, or not one
    measurement per case, fails the problem instead of stopping the batch (or passing unmeasured checks).
    The rules are read in the submission's source too (judge/source.py)."""
    try:
        source = (read_source(problem, sub.cells, sub.modules, tensor_arguments(problem, seed))
                  if sub is not None else None)
        if "cases" in data and (not isinstance(data["cases"], list)
                                or len(data["cases"]) != len(problem.cases)):
            raise ValueError(f"{len(data['cases']) if isinstance(data['cases'], list) else 'no'} "
                             f"measured cases for {len(problem.cases)}")
        return judge(problem, data, seed, source)
    except Exception as error:  # noqa: BLE001 - judge() catches the usual errors; this is the backstop
        verdicts = Verdicts(problem)
        verdicts.fail_all(f"The grader could not read what {problem.lookup} produced "
                          f"({type(error).__name__}: {str(error)[:200]}); it is treated as wrong.")
        return verdicts.results({})


def verdicts_for(assignment: Assignment, outcome: Outcome, seed: int,
                 sub: Submission | None = None) -> list[CheckResult]:
    results = []
    for problem in assignment.problems:
        if problem.name in outcome.data:
            data = with_measured_in_full(outcome.data[problem.name], outcome.explanations.get(problem.name))
            results.extend(_judged(problem, data, seed, sub))
        else:
            verdicts = Verdicts(problem)
            verdicts.fail_all(outcome.failures.get(problem.name, "No result came back for this problem."))
            results.extend(verdicts.results({}))
    return results


def _contained(assignment: Assignment, sub: Submission, outcome: Outcome | None, seed: int,
               private: Private) -> list[CheckResult]:
    """The verdicts on one submission, without the grader's paths, a problem not defined told why the
    code may not have run (cells.hint: the cells' outcome is clean already); a failure of the grader's
    own while judging it fails that submission with the cause, never the batch."""
    try:
        if outcome is None:
            return private.results(failed_everywhere(assignment, sub.error))
        results = private.results(verdicts_for(assignment, outcome, seed, sub))
        hint = cells_.hint(sub, outcome.cell_errors[0]) if outcome.cell_errors else ""
        for r in results:
            if r.problem in outcome.data and "is not defined in the submission" in r.message:
                r.message += hint
        return results
    except Exception as error:  # noqa: BLE001 - one submission never stops a batch
        return private.results(failed_everywhere(assignment, f"The grader failed while judging this "
                                                             f"submission ({type(error).__name__}: "
                                                             f"{str(error)[:200]}); it is scored 0. Tell "
                                                             f"your instructor."))


# -- nothing of the instructor's machine on a student's page ------------------------------------------

_PATH = re.compile(r"(?:/[^/\s'\"<>]+)+/?")  # a path's folders, each after its "/"
_FOLDER = re.compile(r"(?=(/autograder-\d+-[A-Za-z0-9_-]+/))")  # a worker's or a zip's folder (overlapping)


def without_temporary(text: str) -> str:
    """text without the workers' and zips' temporary folders and the folders above them
    (/tmp/autograder-12-x/), in time linear in its length: each path is read once. (One regular
    expression for a whole path, tried at every "/", read a run of folders to its end from each one: a
    submission printing "/a" 32,768 times cost 63 s.)"""
    def cut(path: re.Match) -> str:
        ends = [found.start() + len(found[1]) for found in _FOLDER.finditer(path[0])]
        return path[0][ends[-1]:] if ends else path[0]

    return _PATH.sub(cut, text)


class Private:
    """Takes the paths of the grader's machine out of what a student reads: the folders named on the
    command line, the output folder, Python's installation, the home folder, and the temporary folders
    of workers and zips (a traceback through a helper module names the worker's folder)."""

    def __init__(self, folders: list[Path] = ()):
        prefixes = {}
        for folder in folders:
            for form in {str(folder), str(Path(folder).resolve()), os.path.abspath(folder)}:
                if len(form) > 1:
                    prefixes[form.rstrip("/") + "/"] = ""
        for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix}:
            prefixes[prefix.rstrip("/") + "/"] = "<python>/"
        prefixes[str(Path(autograder.__file__).resolve().parent.parent) + "/"] = ""
        home = os.path.expanduser("~")
        if len(home) > 1:
            prefixes[home.rstrip("/") + "/"] = "~/"
        self.prefixes = sorted(prefixes.items(), key=lambda item: -len(item[0]))

    def __call__(self, text: str) -> str:
        if not text:
            return text
        text = without_temporary(text)
        for prefix, replacement in self.prefixes:
            if prefix in text:
                text = text.replace(prefix, replacement)
        return text

    def results(self, results: list[CheckResult]) -> list[CheckResult]:
        for r in results:
            r.message, r.details = self(r.message), self(r.details)
        return results
