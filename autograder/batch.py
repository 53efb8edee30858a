"""Grades a class: load -> the pipeline (pipeline.py: run in isolated workers, judge here) -> report, with
resume on re-run.

Every result is keyed on everything that decides it (keys.py): a re-run grades again exactly the
submissions whose key changed, and says how many and why; one that would lose points graded before stops
before writing anything, unless --replace. Results never exceed their maximum (report/files.py asserts it
when writing). Each batch also writes report.html (classreport.py), from the very result files.
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections import Counter
from collections.abc import Collection
from functools import cache
from pathlib import Path

import autograder
from autograder import config
from autograder.cells import SKIPPED
from autograder.course.assignments import Assignment
from autograder.intake.loader import Submission, load
from autograder.judge.checks import max_score
from autograder.keys import Key, make_key, points_lost, staleness
from autograder.pipeline import Pipeline, Private, about, failed_everywhere
from autograder.report.files import (
    Graded,
    ScoreAboveMaximum,
    grades_csv,
    read_results,
    results_json,
    write_atomic,
    write_grades,
    write_results,
)
from autograder.report.pages import feedback_page, update_standing
from autograder.report.plain import say
from autograder.sandbox import Limits, Server
from autograder.selection import SelectionError, Shard, check_only, class_rows
from autograder.term.progress import Progress
from autograder.term.rules import FILE, Rules, RulesError, read_rules
from autograder.term.standing import describe_rules
from autograder.term.standing import standings as compute_standings


class UsageError(ValueError):
    """A mistake in how the grader was called: reported as one paragraph, exit status 2."""


class BatchResult(list):
    """What grade() returns: a Graded record per submission, and what the instructor should be told."""

    def __init__(self):
        super().__init__()
        self.plan = ""  # how many were graded and why
        self.unreadable: list[str] = []  # submissions whose files could not be read, "id (where: why)"
        self.warnings: list[str] = []  # zip entries refused, metadata that could not be read
        # ids the grader could not grade by a fault of its own (a full disk when writing their files, no
        # worker): no row in grades.csv, no results.json of this run, so the next run grades them
        self.not_graded: list[str] = []
        self.report: Path | None = None


def prepare_out(out: Path, shared: bool = False) -> None:
    """out made and writable; the litter of a killed run removed, unless other shards write there now."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as error:
        raise UsageError(f"Cannot write to the output folder {out} ({error.strerror}). Choose a folder you "
                         f"can write to with --out.") from None
    if not shared:
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


def previous_result(out: Path, sub: Submission) -> dict | None:
    """The submission's results.json in out, if there is a readable one."""
    result = read_results(out / sub.id / "results.json")
    return result if result is not None and isinstance(result.get("score"), (int, float)) else None


def extra_data(assignment: Assignment, sub: Submission, key: Key | None, graded: Graded) -> dict:
    """What the grader keeps about a result besides the tests: the key, who handed it in, how it went."""
    data: dict = {"submission": sub.id, "file": sub.file, "sha256": sub.sha256, "assignment": assignment.name,
                  "max_score": max_score(assignment)}
    if key is not None:
        data["key"] = key.of(sub)
        data["isolation"] = key.isolation
    if sub.identity:
        data["identity"] = sub.identity
    if sub.modules:
        data["modules"] = sorted(sub.modules)
    if sub.ignored:
        data["not_graded"] = sub.ignored
    if graded.flag is not None:
        data["flagged"] = graded.flag.to_dict()
    skipped = [c["error"] for c in graded.cell_errors if c.get("type") == SKIPPED]
    if skipped:
        data["skipped_cells"] = skipped
    if sub.error:
        data["status"] = "unreadable" if sub.unreadable else "not graded"
        data["error"] = sub.error
    elif graded.timed_out:
        data["status"] = "timed out"
        data["timed_out"] = list(graded.timed_out)
    else:
        data["status"] = "graded"
    return data


def write_submission(out: Path, assignment: Assignment, sub: Submission, graded: Graded,
                     key: Key | None = None) -> dict:
    results = graded.results
    folder = out / sub.id
    score = sum(r.score for r in results)
    summary = f"{assignment.name}: {score:g}/{max_score(assignment):g}. Open feedback.html for the pictures."
    result = results_json(results, summary, extra_data(assignment, sub, key, graded), max_score(assignment))
    write_atomic(folder / "feedback.html", feedback_page(sub.identity.get("name") or sub.id, assignment.name,
                                                         results, graded.cell_errors, graded.output,
                                                         about=about(sub), flag=graded.flag))
    # No execution_time here: a batch killed and run again must end with the very files of an
    # uninterrupted run, so nothing that varies from run to run goes into them (the CLI prints times).
    write_results(folder / "results.json", result)
    return result


def _written(out: Path, assignment: Assignment, sub: Submission, graded: Graded,
             key: Key | None = None) -> dict | None:
    """Writes one submission's files and returns its results.json. Drawing its page may fail on what
    the submission produced (then the page says so, without pictures); a score above its maximum, a
    fault of the grader's, is never written. Writing may fail on a full disk: then None, and the
    submission is not graded in this run (no row in grades.csv; the next run grades it, as its
    results.json was never written)."""
    try:
        try:
            return write_submission(out, assignment, sub, graded, key)
        except OSError:
            raise
        except ScoreAboveMaximum as error:
            say(f"{sub.id}: {error} This is a fault of the grader; the submission is scored 0 until it is "
                f"fixed.")
            failed = failed_everywhere(assignment, "The grader failed while scoring this submission; "
                                                   "it is scored 0. Tell your instructor.")
            return write_submission(out, assignment, sub, Graded(sub.id, 0.0, max_score(assignment), failed),
                                    key)
        except Exception as error:  # noqa: BLE001 - a page that cannot be drawn costs its pictures only
            for r in graded.results:
                r.figures = []
            graded.results[0].details += (f"\n(The grader could not draw this page's pictures: "
                                          f"{type(error).__name__}.)")
            return write_submission(out, assignment, sub, graded, key)
    except OSError as error:
        say(f"could not write the results of {sub.id} ({error.strerror or error}): it is not graded in this "
            f"run and not in grades.csv. Free some space and run the same command again.")
        return None


def grade(assignment: Assignment, paths: list[Path], out: Path, force: bool = False,
          workers: int | None = None, limits: Limits | None = None, seed: int = config.SEED,
          progress: bool = True, server: Server | None = None, extras: list[Path] = (),
          replace: bool = False, only: Collection[str] = (), shard: Shard | None = None) -> BatchResult:
    """Grades every submission found in paths (those only names, or shard's share: selection.py) and
    writes the result files under out: results.json and feedback.html per submission, grades.csv and
    report.html for the whole class in out (not with a shard). Results already there that this run would
    grade again and lose points graded before stop it first (UsageError), unless replace."""
    prepare_out(out, shared=shard is not None)
    limits = limits or Limits()
    # Made before anything about the class is read (grading.toml included): the clean parent warms up
    # meanwhile.
    with Pipeline(assignment, limits, workers, seed, server, Private([*paths, out])) as pipeline:
        rules = read_term(out)
        key = make_key(assignment, seed, limits, extras, pipeline.isolation)
        if pipeline.isolation != "container":
            say(f"warning: {NOT_ISOLATED} ({pipeline.isolation})")
        for missing in pipeline.unavailable:
            say(f"warning: {missing}")
        return _grade(pipeline, assignment, paths, out, force, progress, key, rules, replace, only, shard)


NOT_ISOLATED = ("student code ran WITHOUT a container, under your own account (--no-isolation): it could "
                "read every file you can read")


def describe_plan(total: int, reasons: list[str], force: bool) -> str:
    """"40 submissions: 37 already graded, 3 to grade (2 new, 1 whose files changed)."""
    if force:
        return f"{total} submission(s), all graded again (--force)."
    if not reasons:
        return f"{total} submission(s), all already graded with this very assignment, seed, limits and " \
               f"grader: nothing to grade (--force grades them again)."
    counts = Counter(reasons)
    parts = [f"{n} {why}" if why == "new" else f"{n} because {why}" for why, n in counts.most_common()]
    done = total - len(reasons)
    return (f"{total} submission(s): {done} already graded, {len(reasons)} to grade ({'; '.join(parts)}).")


def _grade(pipeline: Pipeline, assignment: Assignment, paths: list[Path], out: Path, force: bool,
           progress: bool, key: Key, rules: Rules | None = None, replace: bool = False,
           only: Collection[str] = (), shard: Shard | None = None) -> BatchResult:
    from autograder.judge.fingerprint import fingerprint

    warnings: list[str] = []
    subs = load(paths, (assignment.lesson, assignment.name), warnings,
                tuple(p.lookup for p in assignment.problems))
    rows: dict[str, dict] = {}
    batch = BatchResult()
    todo, reasons, replaced = [], {}, []
    fingerprint_at = cache(lambda seed: fingerprint(assignment, seed))
    try:
        check_only(list(only), [s.id for s in subs], " ".join(map(str, paths)))
    except SelectionError as error:
        raise UsageError(str(error)) from None
    subs = [s for i, s in enumerate(subs) if shard is None or shard.takes(i)]
    for sub in subs:
        previous = previous_result(out, sub)
        if only and sub.id not in only and previous is None:
            continue
        why = "--force" if force else "--only names it" if sub.id in only else \
            "" if only else staleness(previous, key.of(sub), fingerprint_at)
        if not why:
            rows[sub.id] = previous
            batch.append(Graded(sub.id, previous["score"], max_score(assignment), skipped=True,
                                feedback=out / sub.id / "feedback.html"))
            continue
        if previous is not None:
            replaced.append(previous)
        reasons[sub.id] = why
        todo.append(sub)
    lost = "" if replace else points_lost(out, replaced, assignment, key)
    if lost:
        raise UsageError(lost)
    batch.plan = describe_plan(len(subs), [] if force else list(reasons.values()), force)
    if only:
        batch.plan = (f"{len(reasons)} of the {len(subs)} submission(s) found graded again (--only); the "
                      f"others' results in {out} are kept as they are.")
    if shard is not None:
        batch.plan = f"Shard {shard}: " + batch.plan[0].lower() + batch.plan[1:]
    say(batch.plan)
    bar = Progress(sum(not s.error for s in todo), progress)
    for sub, graded in pipeline.grade(todo):
        if not sub.error:
            bar.update(1)
        if graded.not_graded:  # the grader's fault, not the student's: no score, graded next run
            say(f"{sub.id} was not graded: {graded.not_graded} It is not in grades.csv; run the same "
                f"command again to grade it.")
        result = None if graded.not_graded else _written(out, assignment, sub, graded, key)
        if result is None:
            batch.not_graded.append(sub.id)
            continue
        rows[sub.id] = result
        # The verdicts are in the files now: a class's worth of figures is not kept in memory.
        batch.append(dataclasses.replace(graded, score=result["score"], results=[], cell_errors=[],
                                         output="", reason=reasons[sub.id],
                                         feedback=out / sub.id / "feedback.html"))
    bar.close()
    if shard is not None:  # the class files are the final plain run's: other shards are writing now
        return _shard_done(batch, subs, warnings, out, shard)
    this_run = len(rows)
    rows = class_rows(out, assignment.name, rows)
    if len(rows) > this_run:
        say(f"The class files hold {len(rows)} submissions: {this_run} of this run and "
            f"{len(rows) - this_run} graded earlier into {out} (kept: delete a student's folder there "
            f"to drop them).")
    # by id, case aside: the same files whatever each run graded
    ordered = sorted(rows.items(), key=lambda row: (row[0].casefold(), row[0]))
    standings = _standings(out, assignment, ordered, rules)
    try:
        text = grades_csv(ordered, [p.name for p in assignment.problems], max_score(assignment), standings)
        kept = write_grades(out, text, rules.text if rules else None)
    except OSError as error:
        raise UsageError(f"Could not write {out / 'grades.csv'} ({error.strerror or error}). Every "
                         f"submission graded so far is saved: free some space and run the same command "
                         f"again.") from None
    if kept:
        say(f"warning: {out / 'grades.csv'} was changed since the grader wrote it (by hand, or by an earlier "
            f"version); it is kept as {kept} and grades.csv is written again from the results. A grade "
            f"changed by hand belongs in {out / FILE} as an [[adjustment]] (docs/instructors.md), which "
            f"every run applies.")
    for sid, standing in standings.items():
        update_standing(out / sid / "feedback.html", standing)
    for g in batch:
        g.standing = standings.get(g.submission)
    codes = {s.id: [*s.cells, *s.modules.values()] for s in subs if s.id in rows and not s.error}
    batch.report = _class_report(out, assignment, ordered, standings, codes)
    batch.unreadable = [f"{s.id} ({s.found_at}: {s.error})" for s in subs if s.unreadable]
    batch.warnings = warnings
    order = {s.id: i for i, s in enumerate(subs)}
    batch.sort(key=lambda g: order[g.submission])
    return batch


def _shard_done(batch: BatchResult, subs: list[Submission], warnings: list[str], out: Path,
                shard: Shard) -> BatchResult:
    say(f"Shard {shard} is done; grades.csv and report.html are not written by a shard. When every shard "
        f"is done, run the same command without --shard: it grades nothing again and writes the class's "
        f"files in {out}.")
    batch.unreadable = [f"{s.id} ({s.found_at}: {s.error})" for s in subs if s.unreadable]
    batch.warnings = warnings
    return batch


def read_term(out: Path) -> Rules | None:
    """out/grading.toml (term/rules.py), read before anything is graded: a mistake in it stops the run."""
    try:
        return read_rules(out)
    except RulesError as error:
        raise UsageError(f"{error} Nothing was graded.") from None


def _standings(out: Path, assignment: Assignment, ordered: list[tuple[str, dict]], rules: Rules | None):
    """Each submission's grade with grading.toml applied; an entry that names no student or problem stops
    the run before grades.csv is written (every result is saved)."""
    try:
        standings = compute_standings(rules, ordered, [p.name for p in assignment.problems],
                                      max_score(assignment))
    except RulesError as error:
        raise UsageError(f"{error} Every submission graded is saved: the next run grades nothing again "
                         f"and applies the file.") from None
    if rules is not None:
        say(describe_rules(rules, standings))
    return standings


def starter_notebooks(assignment: Assignment) -> list[Path]:
    """The lesson's notebooks every student could start from, where the grader runs from the course's
    repository: its student version (course/) and its published answers (solutions/, on the site)."""
    root = Path(autograder.__file__).resolve().parent.parent
    paths = [root / folder / f"{assignment.lesson}.ipynb" for folder in ("course", "solutions")]
    return [path for path in paths if path.is_file()]


def _class_report(out: Path, assignment: Assignment, ordered: list[tuple[str, dict]],
                  standings: dict, codes: dict[str, list[str]]) -> Path | None:
    from autograder.intake.loader import read_cells
    from autograder.report.classreport import class_files

    starter, names = [], []
    for notebook in starter_notebooks(assignment):
        try:
            starter += read_cells(notebook)
        except (ValueError, OSError):
            continue
        names.append(f"{notebook.parent.name}/{notebook.name}")
    name = " and ".join(names)
    try:  # causes.csv first: report.html names it
        for file, text in reversed(class_files(assignment, ordered, standings, codes, starter, name).items()):
            write_atomic(out / file, text)
    except OSError as error:
        say(f"could not write {out / file} ({error.strerror or error}); the grades are written.")
        return None
    return out / "report.html"
