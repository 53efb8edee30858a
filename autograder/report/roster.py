"""Who a graded submission belongs to, and which student of a class list (a roster) that is: what every
gradebook export (export.py) asks before it writes a row.

A submission's students come from what the grader kept about it (its results.json's identity) and from
its id: Canvas's "Download Submissions" names carry the Canvas user ID, Gradescope's export names,
emails and student ids (a group counts for each of its students); otherwise the id is the student.

A roster is any CSV with a header (Canvas's gradebook export, a plain class list). Its identifier
columns are named (case aside) as in ID_COLUMNS, or chosen with --id-column; a roster with none, or one
that matches no submission, is an ExportError: written into the gradebook, it would give nobody a grade.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from autograder.report.files import Graded

# Canvas's "Download Submissions" names: sortable name (no spaces), LATE when late, user id, submission id.
CANVAS_DOWNLOAD = re.compile(r"^(?P<name>[^_]+)_(?:LATE_)?(?P<user>\d+)_(?P<submission>\d+)(?:_|$)")
ID_COLUMNS = ("ID", "SIS User ID", "SIS Login ID", "Email", "Email Address", "Login ID", "Login", "Username",
              "User", "Student ID", "Student Number", "Matriculation Number", "ID number", "Identifier",
              "SID")
NAME_COLUMNS = ("Student", "Name", "Full Name", "Student Name")
EMAIL_COLUMNS = ("Email", "Email Address", "E-mail", "Mail")
# What else a gradebook's columns are filled from, by the names LMSs give them in their exports
# (Canvas's gradebook, Moodle's grades, Blackboard's Grade Center, Gradescope's roster): never an email
# where a number is asked.
FIRST_NAMES, LAST_NAMES = ("First name", "Given name", "Forename"), ("Last name", "Surname", "Family name")
NUMBER_COLUMNS = ("SIS User ID", "ID number", "Student ID", "SID", "Student Number", "Matriculation Number")
LOGIN_COLUMNS = ("SIS Login ID", "Login ID", "Username", "Login", "User")
SECTION_COLUMNS = ("Section", "Sections")


class ExportError(ValueError):
    """A usage mistake: no grades to export, an unreadable roster, an unknown column."""


def people_of(g: Graded) -> list[dict]:
    """The students a submission counts for: one each for a group submission."""
    submitters = g.identity.get("submitters")
    if isinstance(submitters, list) and submitters:
        return [p for p in submitters if isinstance(p, dict)]
    user = g.identity.get("canvas_user") or canvas_user_id(g.submission)
    if user:
        name = g.identity.get("name") or _canvas_part(g.submission, "name")
        return [{"canvas_user": str(user), "name": name}]
    return [{"id": g.submission}]


def canvas_user_id(submission: str) -> str | None:
    """The Canvas user ID in a file name from Canvas's "Download Submissions", else None."""
    return _canvas_part(submission, "user", None)


def _canvas_part(submission: str, part: str, default: str | None = ""):
    match = CANVAS_DOWNLOAD.match(submission)
    return match[part] if match else (submission if default == "" else default)


def when(g: Graded) -> tuple:
    """What orders one student's submissions in time, where the layout says (else nothing)."""
    submitted = g.identity.get("submitted")
    number = g.identity.get("canvas_submission") or _canvas_part(g.submission, "submission", None)
    return (str(submitted or ""), int(number) if str(number or "").isdigit() else -1)


def student_key(person: dict) -> tuple[str, str, str]:
    """What tells one student's submissions from another's. An email is the students' data (Gradescope's
    metadata): two people who give one email but different student ids are two students."""
    for field_name in ("canvas_user", "email", "sid", "id", "name"):
        if person.get(field_name):
            value = str(person[field_name])
            return (field_name, value.casefold() if field_name in ("email", "id", "name") else value,
                    str(person.get("sid") or "") if field_name == "email" else "")
    return "id", "", ""


def _norm(value: str) -> str:
    return value.strip().casefold()


def column(header: list[str], names: tuple[str, ...]) -> str | None:
    """The first column of header named (case aside) as one of names."""
    folded = {_norm(h): h for h in reversed(header)}
    return next((folded[_norm(n)] for n in names if _norm(n) in folded), None)


def value_of(row: dict[str, str], header: list[str], names: tuple[str, ...]) -> str:
    """The row's value in the first column of header named as one of names that it fills, or ""."""
    folded = {_norm(h): h for h in reversed(header)}
    return next((row.get(folded[_norm(n)], "") for n in names
                 if _norm(n) in folded and row.get(folded[_norm(n)], "")), "")


def full_name(row: dict[str, str], header: list[str]) -> str:
    """The student's name: the roster's name column, else its first and last names joined."""
    return value_of(row, header, NAME_COLUMNS) or " ".join(
        part for part in (value_of(row, header, FIRST_NAMES), value_of(row, header, LAST_NAMES)) if part)


def read_roster(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    """The roster's header and students (Canvas's "Points Possible" and blank rows skipped)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise ExportError(f"Cannot read the roster {path} ({getattr(error, 'strerror', None) or error}): "
                          f"give a CSV file saved as UTF-8.") from None
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


def id_columns(path: Path, header: list[str], id_column: str | None) -> list[str]:
    """The roster's columns a submission is matched against: --id-column, else its identifier columns."""
    if id_column:
        if id_column not in header:
            raise ExportError(f"The roster has no column {id_column!r}; its columns are {', '.join(header)}.")
        return [id_column]
    found = [h for h in header if _norm(h) in {_norm(c) for c in ID_COLUMNS}]
    if not found:
        raise ExportError(f"The roster {path} has no column that identifies a student: its columns are "
                          f"{', '.join(header)}, and a name alone is not enough to give a grade to. Use a "
                          f"class list with one of {', '.join(ID_COLUMNS)} (Canvas's gradebook export has "
                          f"them), or name the column that holds what the submissions are named by with "
                          f"--id-column. Nothing was written.")
    return found


def _matches(value: str, key: str) -> bool:
    value, key = _norm(value), _norm(key)
    return bool(value) and (value == key or ("@" in value and value.split("@", 1)[0] == key))


def match(graded: list[Graded], header: list[str], students: list[dict[str, str]],
          columns: list[str]) -> tuple[dict[int, list[Graded]], list[str]]:
    """Roster row index -> the submissions that belong to it; and the submissions that match nobody
    (or more than one student). A group submission belongs to each of its students."""
    canvas = column(header, ("ID",))
    owners: dict[int, list[Graded]] = {}
    unmatched = []
    for g in graded:
        for person in people_of(g):
            keys = [((canvas,) if canvas else (), person.get("canvas_user"))] + \
                [(tuple(columns), person.get(k)) for k in ("email", "sid", "id")]
            found = None
            for cols, key in keys:
                if not key:
                    continue
                for col in cols:
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
