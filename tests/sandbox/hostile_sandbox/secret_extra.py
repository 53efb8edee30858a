"""An instructor's private file for the sandbox's hostile batch: a hidden problem and a secret string that
no submission may ever see (in memory, on disk or in what it prints)."""

from autograder.course import Case, Problem, TensorSpec, add_problem
from autograder.course.assignments.custom_functions import linear

SECRET = "SECRET-EXTRA-4242"

add_problem("custom-functions", Problem(
    name="Hidden linear",
    entry="LinearFunction",
    summary=f"LinearFunction on other shapes ({SECRET})",
    reference=linear,
    cases=(Case((TensorSpec((3, 2)), TensorSpec((4, 2)), TensorSpec((4,)))),),
    hidden=True,
))
