"""The graded assignments: one module per graded lesson, each holding its ASSIGNMENT.

What an assignment is lives here; which assignments a command knows (the built-in ones, an installed
package's, an instructor's extra files) is a Registry (registry.py), built by each command.
"""

from __future__ import annotations

from dataclasses import dataclass

from autograder.course.problems import Problem


@dataclass(frozen=True)
class Assignment:
    name: str
    lesson: str
    problems: tuple[Problem, ...]
    # Modules the lesson's notebook imports beyond torch and numpy: the grader loads them once, so that
    # every worker it forks has them instead of importing them again for each submission.
    preload: tuple[str, ...] = ()
