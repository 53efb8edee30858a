"""Lesson 5, double backward: Square, Sinh (graded through sinh), Cube with CubeBackward.

Exp is graded, twice differentiable, in lesson 2's assignment; lesson 5 gives it as a worked example.
"""

import torch

from autograder.assignments import Assignment
from autograder.problems import Case, Problem, TensorSpec

SQUARE = Problem(
    name="Square",
    summary="x ** 2, saving its input; twice differentiable",
    reference=lambda x: x**2,
    cases=(Case((TensorSpec((3, 3)),)), Case((TensorSpec(()),)), Case((TensorSpec((5,)),))),
    double_backward=True,
)
SINH = Problem(
    name="Sinh",
    entry="sinh",
    summary="sinh(x) = Sinh.apply(x)[0], Sinh returning exp(x) and exp(-x) as extra outputs",
    reference=torch.sinh,
    cases=(Case((TensorSpec((3, 3)),)), Case((TensorSpec((4,)),))),
    kind="callable",
    also_functions=("Sinh",),
    double_backward=True,
    )
CUBE = Problem(
    name="Cube",
    summary="x ** 3 whose backward is itself a Function, CubeBackward",
    reference=lambda x: x**3,
    cases=(Case((TensorSpec(()),)), Case((TensorSpec((2, 3)),))),
    double_backward=True,
    also_functions=("CubeBackward",),
)

ASSIGNMENT = Assignment("double-backward", "05-double-backward", (SQUARE, SINH, CUBE))
