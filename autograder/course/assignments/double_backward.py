"""Lesson 5, double backward: Square, Sinh (graded through sinh), Cube with CubeBackward.

Exp is graded, twice differentiable, in lesson 2's assignment; lesson 5 gives it as a worked example.
"""

import torch
from torch.autograd import Function

from autograder.course.assignments import Assignment
from autograder.course.problems import Case, FixedTensor, Mistake, Problem, TensorSpec, Term


class Square(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**2

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * 2 * x


class Sinh(Function):
    @staticmethod
    def forward(ctx, x):
        expx, expnegx = torch.exp(x), torch.exp(-x)
        ctx.save_for_backward(expx, expnegx)
        return (expx - expnegx) / 2, expx, expnegx

    @staticmethod
    def backward(ctx, grad_out, _grad_out_exp, _grad_out_negexp):
        expx, expnegx = ctx.saved_tensors
        grad_input = grad_out * (expx + expnegx) / 2
        grad_input += _grad_out_exp * expx
        grad_input -= _grad_out_negexp * expnegx
        return grad_input


def sinh(x):
    return Sinh.apply(x)[0]


class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return CubeBackward.apply(grad_out, x)


class CubeBackward(Function):
    @staticmethod
    def forward(ctx, grad_out, x):
        ctx.save_for_backward(x, grad_out)
        return grad_out * 3 * x**2

    @staticmethod
    def backward(ctx, grad_out):
        x, saved_grad_out = ctx.saved_tensors
        return grad_out * 3 * x**2, grad_out * saved_grad_out * 6 * x


SQUARE = Problem(
    name="Square",
    summary="x ** 2, saving its input; twice differentiable",
    reference=lambda x: x**2,
    # exact zeros: a derivative read from the output (2 * y / x) is NaN there
    cases=(Case((TensorSpec((3, 3)),)), Case((TensorSpec(()),)), Case((TensorSpec((5,)),)),
           Case((FixedTensor((0.0, -0.7, -0.0, 1.2)),))),
    double_backward=True,
    saves=True,
    solution=Square,
    elementwise=True,
    derivative="2 * x",
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
    saves=True,
    all_outputs="Sinh",
    solution=sinh,
    elementwise=True,
    derivative="cosh(x) = (exp(x) + exp(-x)) / 2",
    terms=(Term("exp(x) / 2", lambda x: x.exp() / 2), Term("exp(-x) / 2", lambda x: (-x).exp() / 2)),
    mistakes=tuple(Mistake(f"sinh returns output {k} of Sinh.apply(x), {what}: sinh(x) is output 0, "
                           f"Sinh.apply(x)[0] (the others are the extra outputs exp(x) and exp(-x)).",
                           forward)
                   for k, what, forward in ((1, "exp(x)", torch.exp), (2, "exp(-x)", lambda x: (-x).exp()))),
)
CUBE = Problem(
    name="Cube",
    summary="x ** 3 whose backward is itself a Function, CubeBackward",
    reference=lambda x: x**3,
    cases=(Case((TensorSpec(()),)), Case((TensorSpec((2, 3)),)),
           Case((FixedTensor((0.0, -0.8, -0.0, 1.1)),))),  # exact zeros: 3 * y / x is NaN there
    double_backward=True,
    also_functions=("CubeBackward",),
    saves=True,
    companion="CubeBackward",
    solution=Cube,
    elementwise=True,
    derivative="3 * x ** 2",
)

ASSIGNMENT = Assignment("double-backward", "05-double-backward", (SQUARE, SINH, CUBE))
