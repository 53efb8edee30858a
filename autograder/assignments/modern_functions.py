"""Lesson 7, custom Functions in today's PyTorch: Tanh (forward mode), Softplus (vmap), softsign (custom op)."""

import torch
import torch.nn.functional as F

from autograder.assignments import Assignment
from autograder.problems import Case, Problem, TensorSpec

TANH = Problem(
    name="Tanh",
    summary="forward(x) + setup_context, with backward and a jvp for forward-mode AD",
    reference=torch.tanh,
    cases=(Case((TensorSpec((3, 4)),)), Case((TensorSpec((5,)),))),
    extra_checks=("forward mode",),
)
SOFTPLUS = Problem(
    name="Softplus",
    summary="log(1 + exp(x)) computed stably, with generate_vmap_rule = True",
    reference=F.softplus,
    cases=(Case((TensorSpec((3, 4), low=-3.0, high=3.0),)), Case((TensorSpec((6,), low=-3.0, high=3.0),))),
    extra_checks=("vmap",),
)
SOFTSIGN = Problem(
    name="softsign",
    summary="the custom op course::softsign, x / (1 + |x|), with register_fake and register_autograd",
    reference=lambda x: x / (1 + x.abs()),
    cases=(Case((TensorSpec((3, 4), avoid=(0.0,)),)), Case((TensorSpec((5,), avoid=(0.0,)),))),
    kind="callable",
    extra_checks=("opcheck",),
)

ASSIGNMENT = Assignment("modern-functions", "07-modern-functions", (TANH, SOFTPLUS, SOFTSIGN))
