"""An assignment of one's own, from docs/authoring.md: three problems no built-in assignment has.

    python -m autograder list --extra docs/authoring_example.py
    python -m autograder grade --assignment indexing --extra docs/authoring_example.py --out graded/ submissions/
    python -m autograder gradescope --assignment indexing --extra docs/authoring_example.py --out indexing.zip

- Gather: an integer index tensor (passed as it is, never differentiated) and a keyword argument;
- RoundSTE: a straight-through estimator, whose gradient is not the derivative of its forward, so
  gradcheck is not asked, and the gradient is worth more points;
- SmoothMax (log-sum-exp): a tolerance of its own, for answers computed through another, equivalent formula.

Each check may carry a sentence of the instructor's own (hints), added to what a student reads when
that check fails.
"""

import torch

from autograder.course import Assignment, Case, Problem, TensorSpec, add_assignment


def gather(x, index, dim=1):
    return x.gather(dim, index)


GATHER = Problem(
    name="Gather",
    summary="forward(ctx, x, index, dim=1) = x.gather(dim, index); index is a tensor of integers",
    reference=gather,
    cases=(
        # index holds integers from 0 to 4: valid positions along dim 1 of a (3, 5) x
        Case((TensorSpec((3, 5)), TensorSpec((3, 4), low=0, high=5, dtype="int64"))),
        Case((TensorSpec((4, 2)), TensorSpec((2, 2), low=0, high=4, dtype="int64")), {"dim": 0}),
    ),
    hints={"gradient": "Each entry of x receives the sum of the gradients of every output gathered from it: "
                       "scatter_add_ does exactly that."},
)


def round_ste(x):
    return x + (x.round() - x).detach()  # the value of round(x), the gradient of x


ROUND_STE = Problem(
    name="RoundSTE",
    summary="forward rounds to the nearest integer; backward passes the gradient straight through",
    reference=round_ste,
    cases=(Case((TensorSpec((4, 4), low=-3.0, high=3.0, avoid=(-2.5, -1.5, -0.5, 0.5, 1.5, 2.5)),)),),
    skip=("gradcheck",),  # backward is deliberately not the derivative of forward
    points={"gradient": 4},
    hints={"gradient": "A straight-through estimator returns grad_output unchanged."},
)


def logsumexp(x, dim=-1):
    return torch.logsumexp(x, dim=dim)


SMOOTH_MAX = Problem(
    name="SmoothMax",
    summary="forward(ctx, x, dim=-1) = log(sum(exp(x), dim)), computed stably",
    reference=logsumexp,
    cases=(Case((TensorSpec((3, 4), low=-5.0, high=5.0),)), Case((TensorSpec((2, 6), low=-5.0, high=5.0),), {"dim": 0})),
    tolerance=(1e-7, 1e-10),  # max + log(sum(exp(x - max))) and the library's own differ in the last bits
    hints={"forward": "Subtract the largest entry before exp, then add it back after log."},
)

add_assignment(Assignment("indexing", "08-indexing", (GATHER, ROUND_STE, SMOOTH_MAX)))
