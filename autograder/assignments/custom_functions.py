"""Lesson 2, writing a custom Function: KillHead, MyReLU, Exp, LinearFunction."""

import torch

from autograder.assignments import Assignment
from autograder.problems import Case, Problem, TensorSpec


def kill_head(x, n):
    keep = torch.ones_like(x)
    keep[:, :n] = 0
    return x * keep


def linear(input, weight, bias=None):
    out = input @ weight.t()
    return out if bias is None else out + bias


KILLHEAD = Problem(
    name="KillHead",
    summary="forward(ctx, input, n) sets the first n columns to zero; backward kills the same columns",
    reference=kill_head,
    cases=(Case((TensorSpec((3, 8)), 2)), Case((TensorSpec((4, 5)), 0)), Case((TensorSpec((2, 6)), 5)),
           Case((TensorSpec((5, 4)), 1))),
)
MYRELU = Problem(
    name="MyReLU",
    summary="max(x, 0) elementwise",
    reference=lambda x: x.clamp(min=0),
    cases=(Case((TensorSpec((3, 5), avoid=(0.0,)),)), Case((TensorSpec((7,), avoid=(0.0,)),))),
)
EXP = Problem(
    name="Exp",
    summary="exp(x), saving its output for backward; twice differentiable",
    reference=torch.exp,
    cases=(Case((TensorSpec((3, 3)),)), Case((TensorSpec((4,)),)), Case((TensorSpec(()),))),
    double_backward=True,
)
LINEAR = Problem(
    name="LinearFunction",
    summary="forward(ctx, input, weight, bias=None) = input @ weight.t() + bias",
    reference=linear,
    cases=(Case((TensorSpec((4, 3)), TensorSpec((2, 3)), TensorSpec((2,)))),
           Case((TensorSpec((4, 3)), TensorSpec((2, 3)))),
           Case((TensorSpec((1, 5)), TensorSpec((3, 5)), TensorSpec((3,)))),
           Case((TensorSpec((3, 3)), TensorSpec((3, 3)), None))),
)

ASSIGNMENT = Assignment("custom-functions", "02-custom-functions", (KILLHEAD, MYRELU, EXP, LINEAR))
