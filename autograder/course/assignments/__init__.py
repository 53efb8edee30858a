"""The graded assignments, one module per graded lesson, and lookup by name.

Instructors extend them without touching this package (docs/authoring.md):

- a private Python file, passed to the command line with `--extra FILE.py` (and bundled into a
  Gradescope archive, where students cannot read it), calls `hide(...)`, `add_problem(...)` or
  `add_assignment(...)` below;
- an installed package declares an entry point in the group `autograder.assignments` naming an
  Assignment, a module holding ASSIGNMENT, or a function that calls the functions below: its
  assignments are there for every command and for check() in the notebooks;
- for check() in the notebooks, the environment variable AUTOGRADER_EXTRA names files (separated by
  the path separator, ":") that check() loads before looking a problem up.

Where each problem came from is kept (ORIGINS), so that a mistake in it is reported with its file.
"""

from __future__ import annotations

import dataclasses
import os
import runpy
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from autograder.course.problems import Problem


@dataclass(frozen=True)
class Assignment:
    name: str
    lesson: str
    problems: tuple[Problem, ...]
    # Modules the lesson's notebook imports beyond torch and numpy: the grader loads them once, so that
    # every worker it forks has them instead of importing them again for each submission.
    preload: tuple[str, ...] = ()

    @property
    def max_score(self) -> float:
        return sum(p.max_score for p in self.problems)

    def to_dict(self) -> dict:
        return {"name": self.name, "problems": [p.name for p in self.problems], "max_score": self.max_score}


ENTRY_POINTS = "autograder.assignments"
ORIGINS: dict[tuple[str, str], str] = {}  # (assignment, problem) -> the file or package that added it
BROKEN: list[str] = []  # installed entry points that failed to load, for the instructor
_SOURCE: list[str] = []  # what is being loaded now (an extra file, an entry point)


def _builtin() -> dict[str, Assignment]:
    from autograder.course.assignments import custom_functions, double_backward, gradcheck, modern_functions

    modules = [custom_functions, gradcheck, double_backward, modern_functions]
    return {m.ASSIGNMENT.name: m.ASSIGNMENT for m in modules}


def _note(assignment: Assignment, problems=None) -> None:
    if _SOURCE:
        for problem in problems if problems is not None else assignment.problems:
            ORIGINS[(assignment.name, problem.name)] = _SOURCE[-1]


def load_entry_points() -> None:
    """Assignments of installed packages (entry point group `autograder.assignments`)."""
    try:
        found = metadata.entry_points(group=ENTRY_POINTS)
    except Exception:  # noqa: BLE001 - broken package metadata must not stop the notebooks' check()
        return
    for entry in sorted(found, key=lambda e: e.name):
        label = f"the entry point {entry.name} = {entry.value} of an installed package"
        _SOURCE.append(label)
        try:
            value = entry.load()
            if isinstance(value, Assignment):
                add_assignment(value)
            elif isinstance(getattr(value, "ASSIGNMENT", None), Assignment):
                add_assignment(value.ASSIGNMENT)
            elif callable(value):
                value()
            else:
                raise TypeError(f"it names a {type(value).__name__}, not an Assignment, a module holding "
                                f"ASSIGNMENT or a function")
        except Exception as error:  # noqa: BLE001 - reported to the instructor, never fatal to check()
            BROKEN.append(f"{label} failed: {type(error).__name__}: {error}")
        finally:
            _SOURCE.pop()


ASSIGNMENTS = _builtin()


class UnknownProblem(LookupError):
    pass


def find_assignment(name: str) -> Assignment:
    try:
        return ASSIGNMENTS[name]
    except KeyError:
        known = ", ".join(sorted(ASSIGNMENTS))
        raise LookupError(f"There is no assignment called {name!r}. The assignments are: {known} "
                          f"(python -m autograder list shows them with their problems).") from None


def find_problem(name: str, include_hidden: bool = True) -> Problem:
    """A problem by name; a name shared by two assignments is one and the same problem. The inline
    check() asks with include_hidden=False: a hidden problem is then unknown, and not listed."""
    for assignment in ASSIGNMENTS.values():
        for problem in assignment.problems:
            if name in (problem.name, problem.lookup) and (include_hidden or not problem.hidden):
                return problem
    known = ", ".join(sorted({p.name for a in ASSIGNMENTS.values() for p in a.problems
                              if include_hidden or not p.hidden}))
    raise UnknownProblem(f"No graded problem is called {name!r}. The graded names are: {known}. "
                         f"Pass the class (or the function) itself, e.g. check(KillHead), or name the "
                         f"problem with check(obj, problem='KillHead').")


# -- extending the assignments from an instructor's private file ------------------------------------

def _replace_problem(assignment: str, old: Problem, new: Problem) -> None:
    a = find_assignment(assignment)
    ASSIGNMENTS[a.name] = dataclasses.replace(a, problems=tuple(new if p is old else p for p in a.problems))
    _note(a, [new])


def hide(assignment: str, *targets: str) -> None:
    """Marks whole problems ("Exp") or single checks ("Exp: gradgradcheck") of an assignment hidden:
    still graded and scored, never shown by check(), shown on Gradescope as the instructor chooses."""
    for target in targets:
        name, _, check = (part.strip() for part in target.partition(":"))
        problems = {p.name: p for p in find_assignment(assignment).problems}
        if name not in problems:
            raise LookupError(f"hide({assignment!r}, {target!r}): {assignment} has no problem {name!r}; its "
                              f"problems are {', '.join(problems)}.")
        problem = problems[name]
        if not check:
            _replace_problem(assignment, problem, dataclasses.replace(problem, hidden=True))
        elif check in problem.checks:
            hidden = problem.hidden_checks | {check}
            _replace_problem(assignment, problem, dataclasses.replace(problem, hidden_checks=frozenset(hidden)))
        else:
            raise LookupError(f"hide({assignment!r}, {target!r}): {name} has no check {check!r}; its checks are "
                              f"{', '.join(problem.checks)}.")


def add_problem(assignment: str, problem: Problem) -> None:
    """Adds a problem to an assignment (pass hidden=True to Problem to grade it without showing it)."""
    a = find_assignment(assignment)
    if not isinstance(problem, Problem):
        raise TypeError(f"add_problem({assignment!r}, ...) takes a Problem, not a {type(problem).__name__}.")
    if any(p.name == problem.name for p in a.problems):
        raise ValueError(f"add_problem: {a.name} already has a problem called {problem.name!r}.")
    ASSIGNMENTS[a.name] = dataclasses.replace(a, problems=(*a.problems, problem))
    _note(a, [problem])


def add_assignment(assignment: Assignment) -> None:
    """Adds a whole assignment (a new name, or one that replaces the built-in of the same name)."""
    if not isinstance(assignment, Assignment) or not all(isinstance(p, Problem) for p in assignment.problems):
        raise TypeError("add_assignment takes an Assignment(name, lesson, (Problem(...), ...)).")
    ASSIGNMENTS[assignment.name] = assignment
    _note(assignment)


def load_extra(path: Path | str) -> None:
    """Runs an instructor's extension file, which calls hide / add_problem / add_assignment."""
    path = Path(path)
    if not path.is_file():
        raise LookupError(f"The extra assignments file {path} does not exist.")
    _SOURCE.append(str(path))
    try:
        runpy.run_path(str(path), run_name="autograder_extra")
    except LookupError as error:
        raise LookupError(f"The extra assignments file {path} failed: {error}") from None
    except Exception as error:  # noqa: BLE001 - reported as a usage error with its cause
        raise LookupError(f"The extra assignments file {path} failed: {type(error).__name__}: {error}") from None
    finally:
        _SOURCE.pop()


def from_outside() -> list[Assignment]:
    """The assignments an extra file or an installed package added or changed."""
    names = {a for a, _ in ORIGINS}
    return [a for a in ASSIGNMENTS.values() if a.name in names]


_ENV_LOADED: list[str] = []


def load_environment_extras() -> None:
    """The files named by AUTOGRADER_EXTRA (for check() in the notebooks), each loaded once."""
    for name in filter(None, os.environ.get("AUTOGRADER_EXTRA", "").split(os.pathsep)):
        if name not in _ENV_LOADED:
            _ENV_LOADED.append(name)
            load_extra(name)


load_entry_points()
