"""Lesson 7, custom Functions in today's PyTorch: Tanh (forward mode), Softplus (vmap), softsign
(custom op)."""

import torch
import torch.nn.functional as F
from torch.autograd import Function

from autograder.course.assignments import Assignment
from autograder.course.problems import Case, FixedTensor, Mistake, Problem, TensorSpec, Term


class Tanh(Function):
    @staticmethod
    def forward(x):
        return torch.tanh(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)
        ctx.save_for_forward(output)

    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        return grad_output * (1 - y * y)

    @staticmethod
    def jvp(ctx, x_t):
        (y,) = ctx.saved_tensors
        return x_t * (1 - y * y)


class Softplus(Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x.clamp(min=0) + torch.log1p(torch.exp(-x.abs()))

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * torch.sigmoid(x)


def _as_if_output(x):
    """tanh's values with the gradient 1 - x ** 2: backward reading the input as if it were the output."""
    wrong = x - x ** 3 / 3
    return torch.tanh(x).detach() + wrong - wrong.detach()


TANH_OF_INPUT = Mistake("x, the input, stands where the output belongs: 1 - tanh(x) ** 2 is 1 - y * y with y "
                        "forward's output, so save the output (ctx.save_for_backward(output) in "
                        "setup_context).", backward=_as_if_output)


def _elementwise(reference, derivative):
    """A function with reference's values whose autograd gradient is `derivative`, entry by entry: the
    backward of a mistake (x times the derivative, detached, adds that slope and no value)."""
    def wrong(x):
        slope = x * derivative(x).detach()
        return reference(x).detach() + slope - slope.detach()
    return wrong


TANH_SQUARED_DIFFERENCE = Mistake(
    "the derivative is taken as (1 - y) ** 2, squaring 1 - y where it squares y alone: 1 - y ** 2 (y "
    "forward's output), that is 1 - y * y.",
    backward=_elementwise(torch.tanh, lambda x: (1 - torch.tanh(x)) ** 2))
SOFTPLUS_WITHOUT_DENOMINATOR = Mistake(
    "the derivative is taken as exp(x), that of the exponential alone: the chain rule through the log "
    "divides it by 1 + exp(x), which gives exp(x) / (1 + exp(x)) = sigmoid(x).",
    backward=_elementwise(F.softplus, torch.exp))

TANH = Problem(
    name="Tanh",
    summary="forward(x) + setup_context, with backward and a jvp for forward-mode AD",
    reference=torch.tanh,
    cases=(Case((TensorSpec((3, 4)),)), Case((TensorSpec((5,)),))),
    extra_checks=("forward mode",),
    saves=True,
    solution=Tanh,
    elementwise=True,
    derivative="1 - tanh(x) ** 2",
    terms=(Term("1", torch.ones_like), Term("-tanh(x) ** 2", lambda x: -torch.tanh(x) ** 2)),
    mistakes=(TANH_OF_INPUT, TANH_SQUARED_DIFFERENCE),
)

SOFTPLUS = Problem(
    name="Softplus",
    summary="log(1 + exp(x)) computed stably, with generate_vmap_rule = True",
    reference=F.softplus,
    cases=(Case((TensorSpec((3, 4), low=-3.0, high=3.0),)), Case((TensorSpec((6,), low=-3.0, high=3.0),)),
           # the lesson promises values as large as ±1000: exp overflows there unless the formula is stable;
           # at exactly 0 a derivative taken term by term of the stable formula (x > 0, x.sign()) loses 1/2
           Case((FixedTensor((-1000.0, -40.0, -2.5, 0.0, 0.5, 40.0, 1000.0)),))),
    extra_checks=("vmap",),
    saves=True,
    solution=Softplus,
    elementwise=True,
    derivative="sigmoid(x) = 1 / (1 + exp(-x))",
    mistakes=(SOFTPLUS_WITHOUT_DENOMINATOR,),
)
SOFTSIGN = Problem(
    name="softsign",
    summary="the custom op course::softsign, x / (1 + |x|), with register_fake and register_autograd",
    reference=lambda x: x / (1 + x.abs()),
    cases=(Case((TensorSpec((3, 4), avoid=(0.0,)),)), Case((TensorSpec((5,), avoid=(0.0,)),)),
           # differentiable at 0 (derivative 1), as the lesson tries: x / x.abs() for the sign is NaN there
           Case((FixedTensor((-3.0, -0.5, 0.0, -0.0, 0.5, 3.0)),))),
    kind="callable",
    extra_checks=("opcheck",),
    saves=True,  # setup_context keeps x with ctx.save_for_backward, as for a Function
    elementwise=True,
    derivative="1 / (1 + |x|) ** 2",
)

ASSIGNMENT = Assignment("modern-functions", "07-modern-functions", (TANH, SOFTPLUS, SOFTSIGN))
