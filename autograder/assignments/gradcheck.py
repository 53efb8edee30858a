"""Lesson 4, gradcheck: Something, (u, v) -> |u v| elementwise."""

from torch.autograd import Function

from autograder.assignments import Assignment
from autograder.problems import Case, Problem, TensorSpec

# |uv| has a kink where u or v is 0: inputs keep away from it, as a careful gradcheck must.
AWAY = {"avoid": (0.0,), "margin": 0.1}


class Something(Function):
    @staticmethod
    def forward(ctx, input1, input2):
        ctx.save_for_backward(input1, input2)
        return (input1 * input2).abs()

    @staticmethod
    def backward(ctx, grad_output):
        input1, input2 = ctx.saved_tensors
        sign = (input1 * input2).sign()
        return grad_output * sign * input2, grad_output * sign * input1


SOMETHING = Problem(
    name="Something",
    summary="forward(ctx, input1, input2) = |input1 * input2| elementwise, with both gradients",
    reference=lambda u, v: (u * v).abs(),
    cases=(Case((TensorSpec((3, 4), **AWAY), TensorSpec((3, 4), **AWAY))),
           Case((TensorSpec((5,), **AWAY), TensorSpec((5,), **AWAY)))),
    saves=True,
    solution=Something,
    elementwise=True,
    derivative="the sign of input1 * input2 times the other input",
)

ASSIGNMENT = Assignment("gradcheck", "04-gradcheck", (SOMETHING,), preload=("matplotlib.pyplot",))
