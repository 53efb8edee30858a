"""Lesson 2, writing a custom Function: KillHead, MyReLU, Exp, LinearFunction.

Each problem's values are judged against `reference` (PyTorch's own operations); the classes below are
the exercises written as the lesson asks, whose graphs are drawn beside a student's.
"""

import torch
from torch.autograd import Function

from autograder.course.assignments import Assignment
from autograder.course.problems import Case, FixedTensor, Kink, Mistake, Problem, TensorSpec


def kill_head(x, n):
    keep = torch.ones_like(x)
    keep[:, :n] = 0
    return x * keep


def _rows_killed(x, n):
    keep = torch.ones_like(x)
    keep[:n] = 0
    return x * keep


def _killed_by_value(x, n):
    """kill_head's values, with the gradient of a backward that zeroes it wherever the output is 0."""
    return x * (kill_head(x, n) != 0).to(x.dtype)


def linear(input, weight, bias=None):
    out = input @ weight.t()
    return out if bias is None else out + bias


class KillHead(Function):
    @staticmethod
    def forward(ctx, input, n):
        ctx.n = n
        result = input.clone()
        result[:, 0:n] = 0
        return result

    @staticmethod
    def backward(ctx, grad_output):
        result = grad_output.clone()
        result[:, 0:ctx.n] = 0
        return result, None


class MyReLU(Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input < 0] = 0
        return grad_input


class Exp(Function):
    @staticmethod
    def forward(ctx, input):
        result = input.exp()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        return grad_output * result


class LinearFunction(Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        output = input @ weight.t()
        return output if bias is None else output + bias

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output @ weight
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t() @ input
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias


KILLHEAD = Problem(
    name="KillHead",
    summary="forward(ctx, input, n) sets the first n columns to zero; backward kills the same columns",
    reference=kill_head,
    cases=(Case((TensorSpec((3, 8)), 2)), Case((TensorSpec((4, 5)), 0)), Case((TensorSpec((2, 6)), 5)),
           Case((TensorSpec((5, 4)), 1)),
           # Exact zeros (and a negative zero) in the columns kept as well as in those killed: a backward
           # that kills by value (where the output or the input is 0) instead of by position is wrong there.
           Case((FixedTensor((0.0, 0.0, 0.5, -0.7, 0.3, -0.0, 0.8, -0.4, 0.0,
                              0.6, 0.2, -0.9, 0.4, 0.0, -0.6, 0.0, 0.7, -0.3), (3, 6)), 2))),
    solution=KillHead,
    elementwise=True,
    derivative="1 in the columns kept and 0 in the first n columns",
    mistakes=(Mistake("the first n rows are zeroed instead of the first n columns: x[:n] indexes rows, and "
                      "the columns are x[:, :n].", lambda x, n: _rows_killed(x, n)),
              Mistake("the gradient is zeroed wherever a value is 0 (forward's output, or its input), which "
                      "takes in the entries of the kept columns whose input is 0: KillHead kills the first n "
                      "columns by their position, whatever their values, grad_input[:, :ctx.n] = 0 (with "
                      "ctx.n = n in forward).", backward=_killed_by_value)),
)
MYRELU = Problem(
    name="MyReLU",
    summary="max(x, 0) elementwise",
    reference=lambda x: x.clamp(min=0),
    # Random inputs keep away from the kink at 0; the last case sits on it, where the exercise allows any
    # derivative from 0 (torch.relu) to 1 (grad_output kept, as the exercise does).
    cases=(Case((TensorSpec((3, 5), avoid=(0.0,)),)), Case((TensorSpec((7,), avoid=(0.0,)),)),
           Case((FixedTensor((0.0, 0.6, -0.4, 0.0, 0.9, -0.8, 0.0)),))),
    kinks=(Kink(0.0, 0.0, 1.0, "any value from 0 to 1 (0 as torch.relu does, or 1: grad_output kept, as the "
                               "exercise does)"),),
    saves=True,
    solution=MyReLU,
    elementwise=True,
    derivative="1 where the input is positive and 0 where it is negative",
)
EXP = Problem(
    name="Exp",
    summary="exp(x), saving its output for backward; twice differentiable",
    reference=torch.exp,
    cases=(Case((TensorSpec((3, 3)),)), Case((TensorSpec((4,)),)), Case((TensorSpec(()),))),
    double_backward=True,
    saves=True,
    solution=Exp,
    elementwise=True,
    derivative="exp(x), which is forward's output itself, the result you saved",
)
LINEAR = Problem(
    name="LinearFunction",
    summary="forward(ctx, input, weight, bias=None) = input @ weight.t() + bias",
    reference=linear,
    cases=(Case((TensorSpec((4, 3)), TensorSpec((2, 3)), TensorSpec((2,)))),
           Case((TensorSpec((4, 3)), TensorSpec((2, 3)))),
           Case((TensorSpec((1, 5)), TensorSpec((3, 5)), TensorSpec((3,)))),
           Case((TensorSpec((3, 3)), TensorSpec((3, 3)), None))),
    saves=True,
    skips_unneeded=True,
    solution=LinearFunction,
)

ASSIGNMENT = Assignment("custom-functions", "02-custom-functions", (KILLHEAD, MYRELU, EXP, LINEAR))
