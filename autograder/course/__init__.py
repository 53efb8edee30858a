"""The course's graded problems and assignments. Instructors' own files import from here only
(docs/authoring.md), so that moving a module inside the package never breaks them:

    from autograder.course import Assignment, Case, Problem, TensorSpec, add_assignment, add_problem, hide

Lazy, as the package's top level: importing one module of autograder.course (problems.py, say) must not
load the assignments (nor run installed packages' entry points) on the way. The checks themselves, their
points and `add_check`, are autograder.judge.checks: problems are data and never import the judgement.
"""

import importlib

_PUBLIC = {
    "Case": "autograder.course.problems",
    "Problem": "autograder.course.problems",
    "Mistake": "autograder.course.problems",
    "TensorSpec": "autograder.course.problems",
    "Assignment": "autograder.course.assignments",
    "add_assignment": "autograder.course.assignments.registry",
    "add_problem": "autograder.course.assignments.registry",
    "hide": "autograder.course.assignments.registry",
    "find_assignment": "autograder.course.assignments.registry",
}
__all__ = [
    "Assignment", "Case", "Mistake", "Problem", "TensorSpec", "add_assignment", "add_problem",
    "find_assignment", "hide",
]


def __getattr__(name: str):
    if name in _PUBLIC:
        return getattr(importlib.import_module(_PUBLIC[name]), name)
    raise AttributeError(f"module 'autograder.course' has no attribute {name!r}")
