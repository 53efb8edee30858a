"""Hands grades back to the gradebook: a CSV in Canvas's import layout, from a graded folder.

    python -m autograder export --graded DIR --canvas OUT.csv [--roster ROSTER.csv] [--column NAME]
                                [--id-column COLUMN] [--out-of POINTS]

Canvas imports a CSV whose columns are `Student, ID, SIS User ID, SIS Login ID, Section`, then one
column per assignment named as in its gradebook ("Lab 2 (123456)" updates that assignment; a new name
creates one), and whose second row may give the points possible. It finds each student by ID, SIS
User ID or SIS Login ID. Who a submission belongs to comes from what the grader kept about it (its
results.json) and from its id:

- a file from Canvas's "Download Submissions" is named `<name>_[LATE_]<user id>_<submission id>_<file>`,
  so its Canvas user ID is read from the name;
- a submission of Gradescope's export carries its students' names, emails and student ids (from its
  submission_metadata.yml); a group submission counts for each of its students;
- otherwise the id (a file's name, a student's folder) is the student.

Every student gets one row, whatever the layout: when a student has several submissions, `--policy`
chooses whose score counts, `best` (the default) or `latest` (the latest by Gradescope's submission
time or Canvas's submission number; where neither is known, the best), and the export says which.
With a roster (`--roster`, e.g. the CSV Canvas exports from its gradebook, or any CSV with a header),
each submission is matched by the Canvas ID, then by the student's email, student id and id in the
column `--id-column` or else in any identifier column (ID, SIS User ID, SIS Login ID, email,
login...), an email also matching by the part before the @; every student of the roster gets a row
(blank when they submitted nothing, so Canvas keeps whatever grade is there); submissions that match
nobody are reported, not guessed. Without a roster, the Canvas ID, else the email or the id, is
written as what Canvas matches on.

Text cells that a spreadsheet would run as a formula (a name or id starting with =, +, -, @) get a
leading apostrophe (autograder/report/csvsafe.py); grades.csv is written the same way and read back exactly.
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from autograder import config
from autograder.report.csvsafe import cell, read_cell
from autograder.report.files import Graded

CANVAS_IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
POINTS_POSSIBLE = "    Points Possible"  # as Canvas writes it in its own export
# Canvas's "Download Submissions" names: sortable name (no spaces), LATE when late, user id, submission id.
CANVAS_DOWNLOAD = re.compile(r"^(?P<name>[^_]+)_(?:LATE_)?(?P<user>\d+)_(?P<submission>\d+)(?:_|$)")
ID_COLUMNS = ("ID", "SIS User ID", "SIS Login ID", "Email", "Email Address", "Login ID", "Login", "Username",
              "User", "Student ID", "Student Number", "Matriculation Number")


class ExportError(ValueError):
    """A usage mistake: no grades to export, an unreadable roster, an unknown column."""


def people_of(g: Graded) -> list[dict]:
    """The students a submission counts for: one each for a group submission."""
    submitters = g.identity.get("submitters")
    if isinstance(submitters, list) and submitters:
        return [p for p in submitters if isinstance(p, dict)]
    user = g.identity.get("canvas_user") or canvas_user_id(g.submission)
    if user:
        return [{"canvas_user": str(user), "name": g.identity.get("name") or _canvas_name(g.submission)}]
    return [{"id": g.submission}]


def when(g: Graded) -> tuple:
    """What orders one student's submissions in time, where the layout says (else nothing)."""
    submitted = g.identity.get("submitted")
    number = g.identity.get("canvas_submission") or _canvas_submission(g.submission)
    return (str(submitted or ""), int(number) if str(number or "").isdigit() else -1)


def _canvas_name(submission: str) -> str:
    match = CANVAS_DOWNLOAD.match(submission)
    return match["name"] if match else submission


def _canvas_submission(submission: str) -> str | None:
    match = CANVAS_DOWNLOAD.match(submission)
    return match["submission"] if match else None


def student_key(person: dict) -> tuple[str, str]:
    for field_name in ("canvas_user", "email", "sid", "id", "name"):
        if person.get(field_name):
            value = str(person[field_name])
            return field_name, value.casefold() if field_name in ("email", "id", "name") else value
    return "id", ""


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


def read_graded(folder: Path) -> tuple[list[Graded], str]:
    """The rows of DIR/grades.csv, and the assignment's name from the results."""
    path = folder / "grades.csv"
    try:
        rows = list(csv.DictReader(path.read_text(encoding="utf-8").splitlines()))
    except OSError:
        raise ExportError(f"{folder} holds no grades.csv: grade first (python -m autograder grade --out "
                          f"{folder} ...), then export from that folder.") from None
    graded = [Graded(read_cell(r["submission"]), float(r["score"]), float(r["max_score"])) for r in rows]
    assignment = ""
    for g in graded:
        if not 0 <= g.score <= g.max_score:
            raise ExportError(f"{path} says {g.submission} scored {g.score:g} out of {g.max_score:g}, "
                              f"which no grade can be: grade the folder again "
                              f"(python -m autograder grade --out {folder} ...) before exporting.")
        try:
            extra = json.loads((folder / g.submission / "results.json").read_text())["extra_data"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if isinstance(extra, dict):
            assignment = assignment or str(extra.get("assignment", ""))
            if isinstance(extra.get("identity"), dict):
                g.identity = extra["identity"]
    return graded, assignment or folder.resolve().name


def canvas_user_id(submission: str) -> str | None:
    """The Canvas user ID in a file name from Canvas's "Download Submissions", else None."""
    match = CANVAS_DOWNLOAD.match(submission)
    return match["user"] if match else None


def _norm(value: str) -> str:
    return value.strip().casefold()


def read_roster(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    """The roster's header and students (Canvas's "Points Possible" and blank rows skipped)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as error:
        raise ExportError(f"Cannot read the roster {path} ({error.strerror}).") from None
    reader = csv.DictReader(io.StringIO(text))
    if not reader.fieldnames:
        raise ExportError(f"The roster {path} is empty: it needs a header row naming its columns.")
    header = [h.strip() for h in reader.fieldnames]
    students = []
    for row in reader:
        row = {(k or "").strip(): (v or "").strip() for k, v in row.items() if k is not None}
        if not any(row.values()) or row.get("Student", "").strip() == "Points Possible":
            continue
        students.append(row)
    return header, students


def _matches(value: str, key: str) -> bool:
    value, key = _norm(value), _norm(key)
    return bool(value) and (value == key or ("@" in value and value.split("@", 1)[0] == key))


def match(graded: list[Graded], header: list[str], students: list[dict[str, str]],
          id_column: str | None) -> tuple[dict[int, list[Graded]], list[str]]:
    """Roster row index -> the submissions that belong to it; and the submissions that match nobody
    (or more than one student). A group submission belongs to each of its students."""
    if id_column and id_column not in header:
        raise ExportError(f"The roster has no column {id_column!r}; its columns are {', '.join(header)}.")
    columns = [id_column] if id_column else [c for c in ID_COLUMNS if c in header] + \
        [c for c in header if c not in ID_COLUMNS and c not in ("Student", "Section", "Name")]
    owners: dict[int, list[Graded]] = {}
    unmatched = []
    for g in graded:
        for person in people_of(g):
            keys = [(("ID",), person.get("canvas_user"))] + [(tuple(columns), person.get(k))
                                                              for k in ("email", "sid", "id")]
            found = None
            for cols, key in keys:
                if not key:
                    continue
                for col in cols:
                    if col not in header:
                        continue
                    hits = [i for i, s in enumerate(students) if _matches(s.get(col, ""), str(key))]
                    if len(hits) == 1:
                        found = hits[0]
                        break
                if found is not None:
                    break
            if found is None:
                unmatched.append(g.submission if len(people_of(g)) == 1
                                 else f"{g.submission} ({person.get('name')})")
            elif g not in owners.get(found, []):
                owners.setdefault(found, []).append(g)
    return owners, unmatched


def _points(score: float, max_score: float, out_of: float | None) -> str:
    value = score if out_of is None or not max_score else score * out_of / max_score
    return f"{round(value, 4):g}"


def canvas_csv(graded: list[Graded], assignment: str, roster: Path | None = None, column: str | None = None,
               id_column: str | None = None, out_of: float | None = None,
               policy: str = config.POLICY) -> Export:
    """The Canvas gradebook import for these grades: one row per student (see the module's docstring)."""
    if not graded:
        raise ExportError("There are no graded submissions to export.")
    if policy not in config.POLICIES:
        raise ExportError(f"The policy must be one of {', '.join(config.POLICIES)}, not {policy!r}.")
    column = column or assignment
    max_score = max(g.max_score for g in graded)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([*CANVAS_IDENTITY, cell(column)])
    writer.writerow([POINTS_POSSIBLE, "", "", "", "", _points(max_score, max_score, out_of)])
    if roster is None:
        people: dict[tuple[str, str], tuple[dict, list[Graded]]] = {}
        for g in graded:
            for person in people_of(g):
                people.setdefault(student_key(person), (person, []))[1].append(g)
        result = Export("", column, len(people), policy=policy)
        for person, mine in people.values():
            if len(mine) > 1:
                result.duplicates.append(f"{person.get('name') or person.get('id')}: "
                                         + ", ".join(g.submission for g in mine))
            chosen = choose(mine, policy)
            user, email = person.get("canvas_user", ""), person.get("email", "")
            login = "" if user else email or person.get("id") or person.get("name", "")
            name = person.get("name") or person.get("id", "")
            writer.writerow([cell(name), user, cell(person.get("sid", "")), cell(login), "",
                             _points(chosen.score, chosen.max_score, out_of)])
        result.csv = buffer.getvalue()
        return result
    header, students = read_roster(roster)
    owners, unmatched = match(graded, header, students, id_column)
    result = Export("", column, len(students), unmatched=unmatched, policy=policy)
    for i, student in enumerate(students):
        mine = owners.get(i, [])
        if len(mine) > 1:
            result.duplicates.append(f"{student.get('Student') or i + 1}: "
                                     + ", ".join(g.submission for g in mine))
        if not mine:
            result.missing.append(student.get("Student") or student.get(header[0], str(i + 1)))
        chosen = choose(mine, policy) if mine else None
        writer.writerow([cell(student.get(c, "")) for c in CANVAS_IDENTITY]
                        + [_points(chosen.score, chosen.max_score, out_of) if chosen else ""])
    result.csv = buffer.getvalue()
    return result


def export_canvas(graded_folder: Path, out: Path, roster: Path | None = None, column: str | None = None,
                  id_column: str | None = None, out_of: float | None = None,
                  policy: str = config.POLICY) -> Export:
    """Reads DIR/grades.csv and writes the Canvas import file (atomically)."""
    from autograder.report.files import write_atomic

    graded, assignment = read_graded(graded_folder)
    result = canvas_csv(graded, assignment, roster, column, id_column, out_of, policy)
    try:
        write_atomic(out, result.csv)
    except OSError as error:
        raise ExportError(f"Cannot write {out} ({error.strerror}).") from None
    return result


def describe(result: Export, out: Path) -> str:
    """A few lines for the instructor: what was written, and what needs a look."""
    policy = ("the best score counts" if result.policy == "best" else
              "the latest submission counts (the best where the times are not known)")
    lines = [(f"Canvas import: {out} ({result.rows} students, one row each, column {result.column!r}; "
              f"when a student has several submissions {policy}: --policy). "
              f"In Canvas: Grades > Import, choose this file.")]
    if result.unmatched:
        lines.append(f"Not in the roster (left out): {', '.join(result.unmatched)}.")
    if result.duplicates:
        lines.append(f"Several submissions for one student ({policy}): {'; '.join(result.duplicates)}.")
    if result.missing:
        shown = ", ".join(result.missing[:10]) + (" ..." if len(result.missing) > 10 else "")
        lines.append(f"No submission from {len(result.missing)} student(s), left blank: {shown}.")
    return "\n".join(lines)
