"""nbgrader's course folder: `submitted/<student>/<assignment>/<notebook>.ipynb` (and `autograded/`, the
same tree after nbgrader's own autograding), each student's folder holding one folder per assignment,
with nbgrader's `timestamp.txt` beside the notebooks.

The assignment graded is the same for the whole class: the assignment folder named like the assignment
or its lesson, else the one whose notebooks are named like the lesson's notebook. When no such folder,
or several, can be told apart, the instructor is asked to name it before anything is graded.
"""

from __future__ import annotations

from pathlib import Path

from autograder.intake.files import SUFFIXES, Unreadable, listing, read_file

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
