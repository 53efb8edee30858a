"""The graded assignments, one module per graded lesson, and lookup by name.

Instructors extend them without touching this package: a private Python file, passed to the command
line with `--extra FILE.py` (and bundled into a Gradescope archive, where students cannot read it),
calls `hide(...)`, `add_problem(...)` or `add_assignment(...)` below. See docs/instructors.md.
"""

from __future__ import annotations

import dataclasses
import runpy
from dataclasses import dataclass
from pathlib import Path

from autograder.problems import Problem


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


def _load() -> dict[str, Assignment]:
    from autograder.assignments import custom_functions, double_backward, gradcheck, modern_functions

    modules = [custom_functions, gradcheck, double_backward, modern_functions]
    return {m.ASSIGNMENT.name: m.ASSIGNMENT for m in modules}


ASSIGNMENTS = _load()


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
    if any(p.name == problem.name for p in a.problems):
        raise ValueError(f"add_problem: {a.name} already has a problem called {problem.name!r}.")
    ASSIGNMENTS[a.name] = dataclasses.replace(a, problems=(*a.problems, problem))


def add_assignment(assignment: Assignment) -> None:
    """Adds a whole assignment (a new name, or one that replaces the built-in of the same name)."""
    ASSIGNMENTS[assignment.name] = assignment


def load_extra(path: Path | str) -> None:
    """Runs an instructor's extension file, which calls hide / add_problem / add_assignment."""
    path = Path(path)
    if not path.is_file():
        raise LookupError(f"The extra assignments file {path} does not exist.")
    try:
        runpy.run_path(str(path), run_name="autograder_extra")
    except LookupError:
        raise
    except Exception as error:  # noqa: BLE001 - reported as a usage error with its cause
        raise LookupError(f"The extra assignments file {path} failed: {type(error).__name__}: {error}") from None
