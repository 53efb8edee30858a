"""Hidden tests for the custom-functions assignment: an example of an instructor's private file.

Keep a file like this out of the repository students clone. Pass it to the grader with `--extra`:

    python -m autograder grade --assignment custom-functions --extra hidden.py --out graded/ submissions/
    python -m autograder gradescope --assignment custom-functions --extra hidden.py --out custom-functions.zip

Hidden problems and checks are graded and count towards the score like any other, but the inline
check() in the notebooks never runs or mentions them, feedback.html leaves them out, and on Gradescope
they carry the visibility chosen with --hidden-visibility ("hidden" by default; "after_published" shows
them once you publish the grades). In a Gradescope archive this file sits in /autograder/source,
which students' code cannot read.
"""

from autograder.course import Case, Problem, TensorSpec, add_problem, hide
from autograder.course.assignments.custom_functions import linear

# 1. One check hidden: Exp's second derivatives are graded but not shown while students work.
hide("custom-functions", "Exp: gradgradcheck")

# 2. A hidden problem: the student's LinearFunction again (entry=...), on shapes the notebook never
#    tries, so a Function written for the notebook's shapes only does not pass.
add_problem("custom-functions", Problem(
    name="LinearFunction, other shapes",
    entry="LinearFunction",
    summary="LinearFunction on a wide batch and on 1 x 1 matrices, with and without bias",
    reference=linear,
    cases=(Case((TensorSpec((7, 5)), TensorSpec((6, 5)), TensorSpec((6,)))),
           Case((TensorSpec((1, 1)), TensorSpec((1, 1))))),
    hidden=True,
))
