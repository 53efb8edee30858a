"""nbgrader's course folder: `submitted/<student>/<assignment>/<notebook>.ipynb` (and `autograded/`, the
same tree after nbgrader's own autograding), each student's folder holding one folder per assignment,
with nbgrader's `timestamp.txt` beside the notebooks.

nbgrader's exchange (`inbound/`, where `nbgrader submit` puts submissions before `nbgrader collect`):
a folder per submission named `<student>+<assignment>+<timestamp>[+<random>]` (in `inbound/<student>/`
when the exchange is personalized). Each student's latest submission of the assignment is graded, by its
timestamp (as `nbgrader collect` takes it), the time kept for the late policy and the number of
submissions noted; the earlier ones are not graded.

The assignment graded is the same for the whole class: the assignment folder named like the assignment
or its lesson, else the one whose notebooks are named like the lesson's notebook. When no such folder,
or several, can be told apart, the instructor is asked to name it before anything is graded.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import zoneinfo
from pathlib import Path

from autograder.intake.files import SUFFIXES, Unreadable, is_dir, is_link, listing, read_file
from autograder.intake.found import Found, NoSubmissions, unreadable_folder

# nbgrader's ExchangeSubmit: student_id, assignment_id, timestamp ("%Y-%m-%d %H:%M:%S.%f %Z"), and a
# random string (urlsafe base64, no "+") unless add_random_string is off
EXCHANGE = re.compile(r"^(?P<student>[^+]+)\+(?P<assignment>[^+]+)\+(?P<time>\d{4}-\d\d-\d\d[ T][\d:.]+"
                      r"(?: [^+]+)?)(?:\+[A-Za-z0-9_=-]+)?$")

NBGRADER_ROOTS = ("submitted", "autograded")
MAX_TIMESTAMP_BYTES = 200


def pick_assignment(folder: Path, students: dict[str, dict[str, Path]], prefer: tuple[str, ...],
                    where: str) -> tuple[str, str]:
    """(the name of the assignment folder to grade in every student's folder, ""), or ("", what the
    instructor should do) when it cannot be told."""
    names = sorted({name for assignments in students.values() for name in assignments})
    if len(names) == 1:
        return names[0], ""
    named = [n for n in names if n.casefold() in prefer]
    if len(named) != 1:
        named = [n for n in names if any(_holds_lesson(a[n], prefer) for a in students.values() if n in a)]
    if len(named) == 1:
        return named[0], ""
    lesson = prefer[0] + ".ipynb" if prefer else "the lesson's notebook"
    which = "none of them" if not named else f"each of {', '.join(named)}"
    example = f"{folder}/*/{names[-1] if names else 'ps1'}"
    if where == "exchange":
        return "", (f"nbgrader's exchange in {folder} holds submissions of {', '.join(names)}, and "
                    f"{'none' if not named else 'several'} of them can be told to be this assignment "
                    f"(named like it, or holding {prefer[0] + '.ipynb' if prefer else 'its notebook'}). Name "
                    f"one assignment's submissions instead, e.g. {folder}/*+{names[-1]}+*.")
    return "", (f"{where or folder} is laid out as nbgrader's {folder.name}/<student>/<assignment>/, "
                f"with the assignments {', '.join(names) or 'none'}, and {which} holds {lesson}, so the "
                f"grader cannot tell which one to grade. Name the assignment's folders instead, e.g. "
                f"{example} (each is then graded as the submission of the student named by the folder above "
                f"it).")


def _holds_lesson(folder: Path, prefer: tuple[str, ...]) -> bool:
    try:
        return any(Path(e.name).suffix in SUFFIXES and Path(e.name).stem.casefold() in prefer
                   for e in listing(folder))
    except OSError:
        return False


def timestamp(folder: Path) -> dict:
    """When nbgrader says the student submitted (its timestamp.txt), as {"submitted": text}, or {}."""
    try:
        text = read_file(folder / "timestamp.txt")[:MAX_TIMESTAMP_BYTES].decode("utf-8", "replace").strip()
    except (Unreadable, OSError):
        return {}
    return {"submitted": text} if text and text.isprintable() else {}


def exchange_folders(folder: Path, entries: list[os.DirEntry]) -> list[Path]:
    """The submissions of nbgrader's exchange among a folder's entries (in a personalized inbound/, in
    each student's folder too; in the inbound/ of a course's exchange folder, beside outbound/ and
    feedback/, which are not students); [] when it is not an exchange."""
    inbound = [e for e in entries if e.name == "inbound" and is_dir(e)]
    if inbound and folder.name != "inbound":
        try:
            found = exchange_folders(Path(inbound[0].path), listing(Path(inbound[0].path)))
        except OSError:
            found = []
        if found:
            return found
    found = [Path(e.path) for e in entries if is_dir(e) and EXCHANGE.match(e.name)]
    if folder.name == "inbound":
        for entry in (e for e in entries if is_dir(e) and not EXCHANGE.match(e.name)):
            try:
                inside = listing(Path(entry.path))
            except OSError:
                continue
            found += [Path(e.path) for e in inside if is_dir(e) and EXCHANGE.match(e.name)]
    return found


def submitted_at(text: str) -> tuple[dt.datetime, str]:
    """What orders one student's submissions: the time (aware where its zone is known), then the text."""
    head, _, zone = text.rpartition(" ")
    for candidate, name in ((text, ""), (head, zone)):
        try:
            when = dt.datetime.fromisoformat(candidate)
            if when.tzinfo is None:
                when = when.replace(tzinfo=zoneinfo.ZoneInfo(name) if name else dt.UTC)
            return when, text
        except (ValueError, zoneinfo.ZoneInfoNotFoundError):
            continue
    return dt.datetime.min.replace(tzinfo=dt.UTC), text


def latest_submissions(folders: list[Path],
                       prefer: tuple[str, ...]) -> tuple[dict[str, tuple[Path, dict]], str]:
    """Each student's latest submission of the assignment graded, with its identity, by student; or
    ({}, what the instructor should do) when the assignment cannot be told."""
    by_student: dict[str, dict[str, list[tuple[tuple, Path]]]] = {}
    for path in folders:
        if path.is_symlink():  # refused as anywhere else: never followed
            continue
        match = EXCHANGE.match(path.name)
        by_student.setdefault(match["student"], {}).setdefault(match["assignment"], []).append(
            (submitted_at(match["time"]), path))
    students = {s: {a: max(subs)[1] for a, subs in mine.items()} for s, mine in by_student.items()}
    assignment, refusal = pick_assignment(folders[0].parent, students, prefer, "exchange")
    if refusal:
        return {}, refusal
    chosen = {}
    for student, mine in sorted(by_student.items()):
        if assignment not in mine:
            continue
        (_when, text), path = max(mine[assignment])
        identity = {"name": student, "nbgrader_assignment": assignment, "submitted": text}
        if len(mine[assignment]) > 1:
            identity["submissions"] = len(mine[assignment])
        chosen[student] = (path, identity)
    return chosen, ""


def course_folder(walker, folder: Path, entries: list[os.DirEntry], where: str) -> None:
    """submitted/ or autograded/: each subfolder is a student (its name the id), each of theirs an
    assignment: the one being graded is chosen for the whole class, and a student without it gets a row
    that says so. walker: layouts._Walker, whose findings this adds to."""
    students = {}
    for entry in entries:
        if is_link(entry):
            walker.discovery.found.append(Found(entry.name, Path(entry.path), found_at=where + entry.name))
        elif is_dir(entry):
            try:
                inside = listing(Path(entry.path))
                students[entry.name] = {e.name: Path(e.path) for e in inside if is_dir(e)}
            except OSError as error:
                walker.discovery.found.append(unreadable_folder(entry.name, error, where + entry.name + "/"))
    assignment, refusal = pick_assignment(folder, students, walker.prefer, where)
    if refusal:
        raise NoSubmissions(refusal)
    for student, assignments in sorted(students.items()):
        inside = where + f"{student}/"
        if assignment not in assignments:
            handed = ", ".join(sorted(assignments)) or "nothing"
            missing = Found(student, found_at=inside, identity={"name": student}, error=(
                f"No {assignment} folder was found among your submissions (you handed in: {handed}), "
                f"so there was nothing to grade for this assignment."))
            walker.discovery.found.append(missing)
            continue
        identity = {"name": student, "nbgrader_assignment": assignment}
        identity.update(timestamp(assignments[assignment]))
        walker.discovery.found.append(walker.student(student, assignments[assignment],
                                                     inside + f"{assignment}/", identity))
