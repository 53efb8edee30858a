"""A submission as the layouts find it, before it is read (layouts.py, nbgrader.py), and the error of a
run that finds none."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


class NoSubmissions(ValueError):
    pass


@dataclass
class Found:
    """One submission before it is read: its id's base, the file graded, its modules (name in the
    worker's folder -> file), who handed it in, and why it cannot be graded when that is already known."""

    name: str
    graded: Path | None = None
    modules: dict[str, Path] = field(default_factory=dict)
    identity: dict = field(default_factory=dict)
    error: str = ""
    found_at: str = ""  # for the instructor: where it was found
    ignored: list[str] = field(default_factory=list)  # other notebooks beside the graded one: "file: why"
    tiebreak: str = ""  # what tells two students of the same name apart (an email, a student id)
    unreadable: bool = False  # a folder the grader could not open: the instructor is told


def unreadable_folder(name: str, error: OSError, where: str) -> Found:
    why = (f"The grader could not open your submission's folder ({error.strerror}), so nothing in it could "
           f"be graded. Tell your instructor.")
    return Found(name, error=why, found_at=where, unreadable=True)
