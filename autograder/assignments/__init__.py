"""The graded assignments, one module per graded lesson, and lookup by name."""

from __future__ import annotations

from dataclasses import dataclass

from autograder.problems import Problem


@dataclass(frozen=True)
class Assignment:
    name: str
    lesson: str
    problems: tuple[Problem, ...]

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


def find_problem(name: str) -> Problem:
    """A problem by name; a name shared by two assignments is one and the same problem."""
    for assignment in ASSIGNMENTS.values():
        for problem in assignment.problems:
            if name in (problem.name, problem.lookup):
                return problem
    known = ", ".join(sorted({p.name for a in ASSIGNMENTS.values() for p in a.problems}))
    raise UnknownProblem(f"No graded problem is called {name!r}. The graded names are: {known}. "
                         f"Pass the class (or the function) itself, e.g. check(KillHead), or name the "
                         f"problem with check(obj, problem='KillHead').")
