"""Grades a class: load -> run (isolated workers) -> judge (here) -> report, with resume on re-run.

Every result is keyed on everything that decides it (`Key`): the submission's bytes (its file and its
helper modules), the assignment's full definition (validate.fingerprint), the extra files' bytes, the
seed, the limits and the grader's version. A re-run grades again exactly the submissions whose key
changed, and says how many and why (`Plan`); results never exceed their maximum (report.py asserts it
when writing). Each batch also writes report.html (classreport.py), from the very result files.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import autograder
from autograder.course.assignments import Assignment
from autograder.intake.loader import Submission, load
from autograder.judge.plan import explain_plan, with_explanation
from autograder.judge.reference import encoded_cases, expectations
from autograder.judge.verdicts import CheckResult, Verdicts, judge
from autograder.report.files import ScoreAboveMaximum, grades_csv, read_results, results_json, write_atomic
from autograder.report.pages import feedback_page
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
    reason: str = ""  # why it was graded (again): "new", "its files changed", ...


class Batch(list):
    """What grade() returns: the Graded rows, and what the instructor should be told."""

    def __init__(self):
        super().__init__()
        self.plan = ""  # how many were graded and why
        self.unreadable: list[str] = []  # submissions whose files could not be read, "id (where: why)"
        self.warnings: list[str] = []  # zip entries refused, metadata that could not be read
        self.report: Path | None = None


@dataclass(frozen=True)
class Key:
    """Everything that decides a result, except the submission itself (see the module's docstring)."""

    assignment: str
    definition: str
    extra_files: tuple[tuple[str, str], ...]  # (file name, sha256)
    seed: int
    limits: dict = field(hash=False)
    grader: str = autograder.__version__

    def of(self, sub: Submission) -> dict:
        return {"submission": sub.sha256, "assignment": self.assignment, "definition": self.definition,
                "extra_files": [list(e) for e in self.extra_files], "seed": self.seed, "limits": self.limits,
                "grader": self.grader}


def make_key(assignment: Assignment, seed: int, limits: Limits, extras: list[Path] = ()) -> Key:
    from autograder.course.validate import fingerprint

    files = tuple((Path(p).name, hashlib.sha256(Path(p).read_bytes()).hexdigest()) for p in extras)
    return Key(assignment.name, fingerprint(assignment, seed), files, seed, dataclasses.asdict(limits))


# Why a result is stale, in the order asked: the first component of the key that differs says why
# (the definition's fingerprint depends on the seed, so the seed is asked first).
STALE = (("submission", "its files changed"), ("assignment", "it was graded for another assignment"),
         ("grader", "the grader changed"), ("seed", "the seed changed"), ("limits", "the limits changed"),
         ("extra_files", "the extra files changed"), ("definition", "the assignment's definition changed"))


def staleness(previous: dict | None, key: dict) -> str:
    """"" when previous (a results.json) was graded with this very key, else why not."""
    if previous is None:
        return "new"
    old = (previous.get("extra_data") or {}).get("key")
    if not isinstance(old, dict):
        return "it was graded by an earlier version of the grader"
    for name, why in STALE:
        if old.get(name) != key[name]:
            return f"{why} ({old.get(name)} -> {key[name]})" if name in ("grader", "seed") else why
    return ""


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


def already_graded(out: Path, key: Key, sub: Submission) -> tuple[dict | None, str]:
    """(the previous result, "") when it was graded with this key, else (None, why it is graded now)."""
    result = read_results(out / sub.id / "results.json")
    if result is not None and not isinstance(result.get("score"), (int, float)):
        result = None
    why = staleness(result, key.of(sub))
    return (result, "") if not why else (None, why)


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


def warm_up(assignment: Assignment) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What the workers' clean parent imports and warms up for this assignment: (modules, extra checks)."""
    extra = {check for problem in assignment.problems for check in problem.extra_checks}
    return tuple(assignment.preload), tuple(sorted(extra))


def pool_for(assignment: Assignment, limits: Limits, workers: int | None, server: Server | None = None) -> Pool:
    """A pool whose clean parent has the lesson's modules and checks warmed up (asked at once, if the
    caller has not asked earlier: it warms up while the grader reads the submissions)."""
    return Pool(limits, workers, *warm_up(assignment), server)


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


# -- nothing of the instructor's machine on a student's page ------------------------------------------

_TEMPORARY = re.compile(r"(?:/[^/\s'\"<>]+)*/autograder-\d+-[A-Za-z0-9_-]+/")  # workers' and zips' folders


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
        text = _TEMPORARY.sub("", text)
        for prefix, replacement in self.prefixes:
            if prefix in text:
                text = text.replace(prefix, replacement)
        return text

    def results(self, results: list[CheckResult]) -> list[CheckResult]:
        for r in results:
            r.message, r.details = self(r.message), self(r.details)
        return results

    def outcome(self, outcome: Outcome | None) -> Outcome | None:
        if outcome is not None:
            outcome.output = self(outcome.output)
            for cell in outcome.cell_errors:
                cell["error"] = self(str(cell.get("error", "")))
        return outcome


def extra_data(assignment: Assignment, sub: Submission, key: Key | None, outcome: Outcome | None) -> dict:
    """What the grader keeps about a result besides the tests: the key, who handed it in, how it went."""
    data: dict = {"submission": sub.id, "file": sub.file, "sha256": sub.sha256, "assignment": assignment.name,
                  "max_score": assignment.max_score}
    if key is not None:
        data["key"] = key.of(sub)
    if sub.identity:
        data["identity"] = sub.identity
    if sub.modules:
        data["modules"] = sorted(sub.modules)
    if sub.ignored:
        data["not_graded"] = sub.ignored
    if sub.error:
        data["status"] = "unreadable" if sub.unreadable else "not graded"
        data["error"] = sub.error
    elif outcome is not None and outcome.timed_out:
        data["status"] = "timed out"
        data["timed_out"] = list(outcome.timed_out)
    else:
        data["status"] = "graded"
    return data


def write_submission(out: Path, assignment: Assignment, sub: Submission, results: list[CheckResult],
                     outcome: Outcome | None, key: Key | None = None) -> dict:
    cells = outcome.cell_errors if outcome else []
    output = outcome.output if outcome else ""
    folder = out / sub.id
    score = sum(r.score for r in results)
    summary = f"{assignment.name}: {score:g}/{assignment.max_score:g}. Open feedback.html for the pictures."
    result = results_json(results, summary, extra_data(assignment, sub, key, outcome), assignment.max_score)
    write_atomic(folder / "feedback.html", feedback_page(sub.id, assignment.name, results, cells, output))
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
             outcome: Outcome | None, key: Key | None = None) -> dict:
    """Writes one submission's files. Drawing its page may fail on what the submission produced (then
    the page says so, without pictures); writing may fail on a full disk (then the submission's row says
    so, and the batch goes on); a score above its maximum, a fault of the grader's, is never written."""
    try:
        return write_submission(out, assignment, sub, results, outcome, key)
    except ScoreAboveMaximum as error:
        print(f"autograder: {sub.id}: {error} This is a fault of the grader; the submission is scored 0 until it "
              f"is fixed.", file=sys.stderr)
        failed = failed_everywhere(assignment, "The grader failed while scoring this submission; it is scored 0. "
                                               "Tell your instructor.")
        return write_submission(out, assignment, sub, failed, None, key)
    except OSError as error:
        score = sum(r.score for r in results)
        print(f"autograder: could not write the results of {sub.id} ({error.strerror or error}); its score "
              f"{score:g} is in grades.csv only. Free some space and run the same command again.", file=sys.stderr)
        return {"score": score, "tests": [{"name": r.name, "score": r.score} for r in results], "unwritten": True}
    except Exception as error:  # noqa: BLE001 - a page that cannot be drawn costs its pictures only
        for r in results:
            r.figures = []
        results[0].details += f"\n(The grader could not draw this page's pictures: {type(error).__name__}.)"
        return write_submission(out, assignment, sub, results, outcome, key)


def grade(assignment: Assignment, paths: list[Path], out: Path, force: bool = False, workers: int | None = None,
          limits: Limits | None = None, seed: int = 0, progress: bool = True,
          server: Server | None = None, extras: list[Path] = ()) -> Batch:
    """Grades every submission found in paths and writes the result files under out: results.json and
    feedback.html per submission, grades.csv and report.html for the class."""
    prepare_out(out)
    limits = limits or Limits()
    pool = pool_for(assignment, limits, workers, server)  # before anything about the class is read
    try:
        return _grade(pool, assignment, paths, out, force, seed, progress, make_key(assignment, seed, limits, extras))
    finally:
        pool.close()


def say(text: str) -> None:
    print("autograder: " + text, file=sys.stderr)


def describe_plan(total: int, reasons: list[str], force: bool) -> str:
    """"40 submissions: 37 already graded, 3 to grade (2 new, 1 whose files changed)."""
    if force:
        return f"{total} submission(s), all graded again (--force)."
    if not reasons:
        return f"{total} submission(s), all already graded with this very assignment, seed, limits and grader: " \
               f"nothing to grade (--force grades them again)."
    counts = Counter(reasons)
    parts = [f"{n} {why}" if why == "new" else f"{n} because {why}" for why, n in counts.most_common()]
    done = total - len(reasons)
    return (f"{total} submission(s): {done} already graded, {len(reasons)} to grade ({'; '.join(parts)}).")


def _grade(pool: Pool, assignment: Assignment, paths: list[Path], out: Path, force: bool, seed: int,
           progress: bool, key: Key) -> Batch:
    warnings: list[str] = []
    subs = load(paths, (assignment.lesson, assignment.name), warnings)
    private = Private([*paths, out])
    by_id = {s.id: s for s in subs}
    rows: dict[str, dict] = {}
    graded = Batch()
    todo, reasons = [], []
    for sub in subs:
        previous, why = (None, "--force") if force else already_graded(out, key, sub)
        if previous is not None:
            rows[sub.id] = previous
            graded.append(Graded(sub.id, previous["score"], assignment.max_score, 0.0, True, out / sub.id / "feedback.html"))
            continue
        reasons.append(why)
        if sub.error:
            results = private.results(_contained(assignment, sub, None, seed))
            rows[sub.id] = _written(out, assignment, sub, results, None, key)
            graded.append(Graded(sub.id, 0.0, assignment.max_score, 0.0, False, out / sub.id / "feedback.html", why))
        else:
            todo.append((sub, why))
    graded.plan = describe_plan(len(subs), [] if force else reasons, force)
    say(graded.plan)
    jobs = problem_jobs(assignment, seed)
    tasks = [Task(s.id, s.cells, jobs, s.modules) for s, _ in todo]
    why_of = {s.id: why for s, why in todo}
    bar = _progress(len(tasks), progress)
    for sid, outcome in pool.run(tasks, seed):
        sub = by_id[sid]
        drop_expected_errors(sub, outcome)
        results = private.results(_contained(assignment, sub, outcome, seed))
        rows[sid] = _written(out, assignment, sub, results, private.outcome(outcome), key)
        graded.append(Graded(sid, rows[sid]["score"], assignment.max_score, outcome.seconds, False,
                             out / sid / "feedback.html", why_of[sid]))
        bar.update(1)
    bar.close()
    ordered = [(s.id, rows[s.id]) for s in subs]
    try:
        write_atomic(out / "grades.csv", grades_csv(ordered, [p.name for p in assignment.problems],
                                                    assignment.max_score))
    except OSError as error:
        raise UsageError(f"Could not write {out / 'grades.csv'} ({error.strerror or error}). Every submission "
                         f"graded so far is saved: free some space and run the same command again.") from None
    graded.report = _class_report(out, assignment, ordered)
    graded.unreadable = [f"{s.id} ({s.where}: {s.error})" for s in subs if s.unreadable]
    graded.warnings = warnings
    order = {s.id: i for i, s in enumerate(subs)}
    graded.sort(key=lambda g: order[g.submission])
    return graded


def _class_report(out: Path, assignment: Assignment, ordered: list[tuple[str, dict]]) -> Path | None:
    from autograder.report.classreport import class_report

    try:
        write_atomic(out / "report.html", class_report(assignment, ordered))
    except OSError as error:
        say(f"could not write {out / 'report.html'} ({error.strerror or error}); the grades are written.")
        return None
    return out / "report.html"


def _progress(total: int, enabled: bool):
    import tqdm

    tqdm.tqdm.monitor_interval = 0  # no monitor thread: workers are forked from this process
    return tqdm.tqdm(total=total, unit="submission", desc="grading", disable=not enabled or total == 0,
                     file=sys.stderr)
