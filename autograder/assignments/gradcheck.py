"""Lesson 4, gradcheck: Something, (u, v) -> |u v| elementwise."""

from autograder.assignments import Assignment
from autograder.problems import Case, Problem, TensorSpec

# |uv| has a kink where u or v is 0: inputs keep away from it, as a careful gradcheck must.
AWAY = dict(avoid=(0.0,), margin=0.1)

SOMETHING = Problem(
    name="Something",
    summary="forward(ctx, input1, input2) = |input1 * input2| elementwise, with both gradients",
    reference=lambda u, v: (u * v).abs(),
    cases=(Case((TensorSpec((3, 4), **AWAY), TensorSpec((3, 4), **AWAY))),
           Case((TensorSpec((5,), **AWAY), TensorSpec((5,), **AWAY)))),
)

ASSIGNMENT = Assignment("gradcheck", "04-gradcheck", (SOMETHING,), preload=("matplotlib.pyplot",))
