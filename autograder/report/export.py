"""Hands grades back to the gradebook, from a graded folder: Canvas's import layout, or a plain CSV.

    python -m autograder export --graded DIR (--canvas | --csv | --moodle) OUT.csv [--roster ROSTER.csv]
                                [--column NAME] [--id-column COLUMN] [--out-of POINTS] [--policy P]

The grades are the results as graded with the instructor's DIR/grading.toml applied on top
(term/standing.py: adjustments, late penalty), computed as `grade` computes them for grades.csv. A
grades.csv changed by hand since the grader wrote it (it no longer matches DIR/grades.csv.sha256) is
refused: its change would be lost at the next run and carries no reason; grading.toml is where it goes.

Canvas imports a CSV whose columns are `Student, ID, SIS User ID, SIS Login ID, Section`, then one
column per assignment named as in its gradebook ("Lab 2 (123456)" updates that assignment; a new name
creates one), and whose second row may give the points possible. It finds each student by ID, SIS
User ID or SIS Login ID. The plain CSV (`--csv`) has `id, name, email`, each problem's points, the
adjustments, the late penalty and the total: one row per student, for any other gradebook. Moodle's
(`--moodle`) has `ID number, Email address, Full name`, the grade and `Feedback` (the reasons of the
adjustments and the late work, in words), which its CSV import maps to a grade item and its feedback.

Who a submission belongs to, and how a roster is matched, is roster.py's. Every student gets one row,
whatever the layout: when a student has several submissions, `--policy` chooses whose score counts,
`best` (the default) or `latest` (the latest by Gradescope's submission time or Canvas's submission
number; where neither is known, the best), and the export says which. With a roster every student of
the roster gets a row (blank when they submitted nothing, so the gradebook keeps whatever grade is
there); submissions that match nobody are reported, not guessed; a roster that matches no submission
at all, or has no identifier column, is an error and nothing is written. Without a roster, the Canvas
ID, else the email or the id, is written as what the gradebook matches on.

Text cells that a spreadsheet would run as a formula (a name or id starting with =, +, -, @) get a
leading apostrophe (autograder/report/csvsafe.py); grades.csv is written the same way and read back exactly.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from pathlib import Path

from autograder import config
from autograder.report.csvsafe import cell, read_cell
from autograder.report.files import APPENDED, Graded, digests, grades_edited, sha256
from autograder.report.roster import (  # noqa: F401 - canvas_user_id: part of this module's interface
    EMAIL_COLUMNS,
    LOGIN_COLUMNS,
    NUMBER_COLUMNS,
    SECTION_COLUMNS,
    ExportError,
    canvas_user_id,
    full_name,
    id_columns,
    match,
    people_of,
    read_roster,
    student_key,
    value_of,
    when,
)

CANVAS_IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
POINTS_POSSIBLE = "    Points Possible"  # as Canvas writes it in its own export
FORMATS = ("canvas", "csv", "moodle")


def choose(submissions: list[Graded], policy: str) -> Graded:
    """The submission whose score counts for one student: the best, or the latest where the times are
    known (else the best)."""
    if policy == "latest" and all(when(g) != ("", -1) for g in submissions):
        return max(submissions, key=when)
    return max(submissions, key=lambda g: g.score)  # max keeps the first of equals


@dataclass
class Export:
    """What was written, and what could not be matched."""

    csv: str
    column: str
    rows: int
    unmatched: list[str] = field(default_factory=list)  # submissions that match no roster row
    missing: list[str] = field(default_factory=list)  # roster students without a submission
    duplicates: list[str] = field(default_factory=list)  # students matched by several submissions
    policy: str = config.POLICY
    format: str = "canvas"
    note: str = ""  # grading.toml changed since grades.csv was written


class Class(list):
    """The graded submissions of a folder (Graded, score = the standing's), its problems, and what the
    instructor should know about grading.toml."""

    problems: list[str]
    note: str = ""


def read_graded(folder: Path) -> tuple[Class, str]:
    """The rows of DIR/grades.csv with DIR/grading.toml applied, and the assignment's name."""
    from autograder.term.rules import FILE, RulesError, read_rules
    from autograder.term.standing import standings

    path = folder / "grades.csv"
    try:
        rows = list(csv.DictReader(path.read_text(encoding="utf-8").splitlines()))
        header = next(csv.reader([path.read_text(encoding="utf-8").split("\n", 1)[0]]))
    except (OSError, UnicodeDecodeError, StopIteration):
        raise ExportError(f"{folder} holds no grades.csv: grade first (python -m autograder grade --out "
                          f"{folder} ...), then export from that folder.") from None
    if digests(folder) and grades_edited(folder):
        raise ExportError(f"{path} was changed after the grader wrote it (it no longer matches "
                          f"{path}.sha256), so it is not exported: a grade changed there carries no reason "
                          f"and the next `grade` would write it over. Put each change in {folder / FILE} as "
                          f"an [[adjustment]] (student, problem or \"total\", points, reason: "
                          f"docs/instructors.md has an example), run the same `grade` command again (it "
                          f"grades nothing again and applies the file), then export. Nothing was written.")
    end = header.index(APPENDED[0]) if APPENDED[0] in header else len(header)
    graded = Class(Graded(read_cell(r["submission"]), float(r["score"]), float(r["max_score"])) for r in rows)
    graded.problems = [read_cell(p) for p in header[3:end]]
    assignment, results = "", []
    for g in graded:
        if not 0 <= g.score <= g.max_score:
            raise ExportError(f"{path} says {g.submission} scored {g.score:g} out of {g.max_score:g}, "
                              f"which no grade can be: grade the folder again "
                              f"(python -m autograder grade --out {folder} ...) before exporting.")
        try:
            result = json.loads((folder / g.submission / "results.json").read_text())
            extra = result["extra_data"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if isinstance(result.get("score"), (int, float)):
            results.append((g, result))
        if isinstance(extra, dict):
            assignment = assignment or str(extra.get("assignment", ""))
            if isinstance(extra.get("identity"), dict):
                g.identity = extra["identity"]
    try:
        rules = read_rules(folder)
        found = standings(rules, [(g.submission, r) for g, r in results], graded.problems,
                          max((g.max_score for g in graded), default=0.0))
    except RulesError as error:
        raise ExportError(f"{error} Nothing was written.") from None
    for g, _ in results:
        g.standing = found[g.submission]
        g.score = g.standing.score
    if _toml_changed(folder, rules):
        graded.note = (f"{folder / FILE} changed since grades.csv was written: this export applies it as "
                       f"it is now; run the same `grade` command again to bring grades.csv, the pages and "
                       f"report.html up to date.")
    return graded, assignment or folder.resolve().name


def _toml_changed(folder: Path, rules) -> bool:
    """grading.toml is not what grades.csv.sha256 says was applied (when it says anything)."""
    from autograder.term.rules import FILE

    recorded = digests(folder)
    return bool(recorded) and recorded.get(FILE) != (sha256(rules.text) if rules else None)


def _points(score: float, max_score: float, out_of: float | None) -> str:
    value = score if out_of is None or not max_score else score * out_of / max_score
    return f"{round(value, 4):g}"


def gather(graded: list[Graded], roster: Path | None, id_column: str | None,
           policy: str) -> tuple[list[tuple[dict, Graded | None]], Export, list[str], list[str]]:
    """One (person or roster row, the submission that counts or None) per student, what the export will
    report, and the roster's header and identifier columns."""
    if not graded:
        raise ExportError("There are no graded submissions to export.")
    if policy not in config.POLICIES:
        raise ExportError(f"The policy must be one of {', '.join(config.POLICIES)}, not {policy!r}.")
    out: list[tuple[dict, Graded | None]] = []
    if roster is None:
        people: dict[tuple[str, str, str], tuple[dict, list[Graded]]] = {}
        for g in graded:
            for person in people_of(g):
                people.setdefault(student_key(person), (person, []))[1].append(g)
        result = Export("", "", len(people), policy=policy)
        for person, mine in people.values():
            if len(mine) > 1:
                result.duplicates.append(f"{person.get('name') or person.get('id')}: "
                                         + ", ".join(g.submission for g in mine))
            out.append((person, choose(mine, policy)))
        return out, result, [], []
    header, students = read_roster(roster)
    columns = id_columns(roster, header, id_column)
    owners, unmatched = match(graded, header, students, columns)
    if not owners:
        shown = ", ".join(g.submission for g in graded[:5]) + (" ..." if len(graded) > 5 else "")
        raise ExportError(f"No submission matches a student of the roster {roster} ({len(students)} "
                          f"students, matched by {', '.join(columns)}): none of {len(graded)} submission(s) "
                          f"({shown}) is found there. Check that the roster is this class's, or name the "
                          f"column that holds what the submissions are named by with --id-column. Nothing "
                          f"was written.")
    result = Export("", "", len(students), unmatched=unmatched, policy=policy)
    for i, student in enumerate(students):
        mine = owners.get(i, [])
        if len(mine) > 1:
            result.duplicates.append(f"{full_name(student, header) or i + 1}: "
                                     + ", ".join(g.submission for g in mine))
        if not mine:
            result.missing.append(full_name(student, header) or student.get(header[0]) or str(i + 1))
        out.append((student, choose(mine, policy) if mine else None))
    return out, result, header, columns


def canvas_csv(graded: list[Graded], assignment: str, roster: Path | None = None, column: str | None = None,
               id_column: str | None = None, out_of: float | None = None,
               policy: str = config.POLICY) -> Export:
    """The Canvas gradebook import for these grades: one row per student (see the module's docstring)."""
    rows, result, header, _ = gather(graded, roster, id_column, policy)
    result.column = column or assignment
    max_score = max(g.max_score for g in graded)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([*CANVAS_IDENTITY, cell(result.column)])
    writer.writerow([POINTS_POSSIBLE, "", "", "", "", _points(max_score, max_score, out_of)])
    if roster is not None:
        _canvas_identities(rows, header, roster)
    for person, chosen in rows:
        points = _points(chosen.score, chosen.max_score, out_of) if chosen else ""
        if roster is not None:
            writer.writerow([cell(v) for v in _canvas_identity(person, header)] + [points])
            continue
        user, email = person.get("canvas_user", ""), person.get("email", "")
        login = "" if user else email or person.get("id") or person.get("name", "")
        name = person.get("name") or person.get("id", "")
        writer.writerow([cell(name), user, cell(person.get("sid", "")), cell(login), "", points])
    result.csv = buffer.getvalue()
    return result


def _canvas_identity(row: dict, header: list[str]) -> list[str]:
    """Student, ID, SIS User ID, SIS Login ID, Section of a roster row, from whatever columns it has."""
    return [row.get("Student") or full_name(row, header), row.get("ID", ""),
            value_of(row, header, NUMBER_COLUMNS), value_of(row, header, LOGIN_COLUMNS),
            value_of(row, header, SECTION_COLUMNS)]


def _canvas_identities(rows: list[tuple[dict, Graded | None]], header: list[str], roster: Path) -> None:
    """Every row can be matched by Canvas (an ID, SIS User ID or SIS Login ID), else an ExportError."""
    blind = [full_name(r, header) or "?" for r, _ in rows if not any(_canvas_identity(r, header)[1:4])]
    if blind:
        raise ExportError(
            f"Canvas finds a student by ID, SIS User ID or SIS Login ID, and the roster {roster} gives none "
            f"of them for {len(blind)} of its {len(rows)} students (e.g. {blind[0]}): its columns are "
            f"{', '.join(header)}. Give Canvas's own gradebook export as --roster (Grades > Export > Export "
            f"Entire Gradebook), which has them all; where Canvas logins are the students' emails, name the "
            f"roster's email column SIS Login ID. Nothing was written.")


def _moodle_identities(rows: list[tuple[dict, Graded | None]], header: list[str], roster: Path) -> None:
    """Every row can be matched by Moodle (an ID number or an email), else an ExportError."""
    blind = [full_name(r, header) or "?" for r, _ in rows
             if not (value_of(r, header, NUMBER_COLUMNS) or value_of(r, header, EMAIL_COLUMNS))]
    if blind:
        raise ExportError(
            f"Moodle finds a student by ID number or Email address, and the roster {roster} gives neither "
            f"for {len(blind)} of its {len(rows)} students (e.g. {blind[0]}): its columns are "
            f"{', '.join(header)}. "
            f"Give Moodle's own grade export as --roster (Grades > Export > Plain text file), which has "
            f"both. Nothing was written.")


def plain_csv(graded: Class, assignment: str, roster: Path | None = None, id_column: str | None = None,
              out_of: float | None = None, policy: str = config.POLICY) -> Export:
    """id, name, email, each problem's points, adjustments, late_penalty, total (scaled by out_of): one
    row per student, blank scores for a roster's student who submitted nothing."""
    rows, result, header, columns = gather(graded, roster, id_column, policy)
    result.column, result.format = "total", "csv"
    problems = list(getattr(graded, "problems", []))
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["id", "name", "email", *map(cell, problems), "adjustments", "late_penalty", "total"])
    for person, chosen in rows:
        ident = _identity(person, roster is not None, header, columns)
        standing = getattr(chosen, "standing", None)
        if chosen is None:
            scores = [""] * (len(problems) + 3)
        else:
            scores = [f"{standing.problems[p]:g}" if standing else "" for p in problems]
            scores += [f"{standing.adjustment:g}" if standing else "0",
                       f"{standing.penalty:g}" if standing else "0",
                       _points(chosen.score, chosen.max_score, out_of)]
        writer.writerow([*map(cell, ident), *scores])
    result.csv = buffer.getvalue()
    return result


def _identity(person: dict, from_roster: bool, header: list[str], columns: list[str]) -> list[str]:
    """[id, name, email] of a roster row (its student number, else its login, else its first identifier
    column; its name, or first and last names), or of a submission's student (the Canvas user id, else
    the student id, else the id)."""
    if from_roster:
        ident = value_of(person, header, NUMBER_COLUMNS) or value_of(person, header, LOGIN_COLUMNS) \
            or person.get(columns[0], "")
        return [ident, full_name(person, header), value_of(person, header, EMAIL_COLUMNS)]
    return [person.get("canvas_user") or person.get("sid") or person.get("id") or person.get("email", ""),
            person.get("name", ""), person.get("email", "")]


def moodle_csv(graded: Class, assignment: str, roster: Path | None = None, column: str | None = None,
               id_column: str | None = None, out_of: float | None = None,
               policy: str = config.POLICY) -> Export:
    """For Moodle's Grades > Import > CSV file: ID number, Email address, Full name, the grade (in a column
    named as the assignment, or column) and Feedback (grading.toml's reasons and late work, in words)."""
    rows, result, header, columns = gather(graded, roster, id_column, policy)
    result.column, result.format = column or assignment, "moodle"
    if roster is not None:
        _moodle_identities(rows, header, roster)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["ID number", "Email address", "Full name", cell(result.column), "Feedback"])
    for person, chosen in rows:
        ident, name, email = _identity(person, roster is not None, header, columns)
        if roster is not None:  # Moodle's ID number is the institution's, never an email or a login
            ident = value_of(person, header, NUMBER_COLUMNS)
        standing = getattr(chosen, "standing", None)
        grade = _points(chosen.score, chosen.max_score, out_of) if chosen else ""
        writer.writerow([cell(ident), cell(email), cell(name), grade,
                         cell("; ".join(standing.lines())) if standing else ""])
    result.csv = buffer.getvalue()
    return result


def export(graded_folder: Path, out: Path, fmt: str = "canvas", roster: Path | None = None,
           column: str | None = None, id_column: str | None = None, out_of: float | None = None,
           policy: str = config.POLICY) -> Export:
    """Reads DIR (grades.csv, the results, grading.toml) and writes the import file (atomically);
    nothing is written when anything is wrong."""
    from autograder.report.files import write_atomic

    graded, assignment = read_graded(graded_folder)
    if fmt == "csv":
        result = plain_csv(graded, assignment, roster, id_column, out_of, policy)
    elif fmt == "moodle":
        result = moodle_csv(graded, assignment, roster, column, id_column, out_of, policy)
    else:
        result = canvas_csv(graded, assignment, roster, column, id_column, out_of, policy)
    result.note = graded.note
    try:
        write_atomic(out, result.csv)
    except OSError as error:
        raise ExportError(f"Cannot write {out} ({error.strerror}).") from None
    return result


def export_canvas(graded_folder: Path, out: Path, roster: Path | None = None, column: str | None = None,
                  id_column: str | None = None, out_of: float | None = None,
                  policy: str = config.POLICY) -> Export:
    return export(graded_folder, out, "canvas", roster, column, id_column, out_of, policy)


def describe(result: Export, out: Path) -> str:
    """A few lines for the instructor: what was written, and what needs a look."""
    policy = ("the best score counts" if result.policy == "best" else
              "the latest submission counts (the best where the times are not known)")
    several = f"when a student has several submissions {policy}: --policy"
    if result.format == "moodle":
        lines = [(f"Moodle import: {out} ({result.rows} students, one row each, grade column "
                  f"{result.column!r} and Feedback; {several}). In Moodle: Grades > Import > CSV file; "
                  f"identify users by Email address (or ID number), map {result.column!r} to the "
                  f"grade item and Feedback to its feedback.")]
    elif result.format == "csv":
        lines = [(f"Plain CSV: {out} ({result.rows} students, one row each: id, name, email, each problem, "
                 f"adjustments, late_penalty, total; {several}).")]
    else:
        lines = [(f"Canvas import: {out} ({result.rows} students, one row each, column {result.column!r}; "
                 f"{several}). In Canvas: Grades > Import, choose this file.")]
    if result.note:
        lines.append(result.note)
    if result.unmatched:
        lines.append(f"Not in the roster (left out): {', '.join(result.unmatched)}.")
    if result.duplicates:
        lines.append(f"Several submissions for one student ({policy}): {'; '.join(result.duplicates)}.")
    if result.missing:
        shown = ", ".join(result.missing[:10]) + (" ..." if len(result.missing) > 10 else "")
        lines.append(f"No submission from {len(result.missing)} student(s), left blank: {shown}.")
    return "\n".join(lines)
