"""Lesson 5's Predict questions (autograder/course/predictions/__init__.py says how they are read)."""

from autograder.course.predictions import Question

SQUARE = """\
from torch.autograd import Function


class Square(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**2

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * 2 * x


x = torch.tensor(1.0, requires_grad=True)
out = Square.apply(x)
grad_x, = torch.autograd.grad(out, x, create_graph=True)
"""

SINH = """\
from torch.autograd import Function


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
"""

QUESTIONS = [
    Question(
        id="5.square-grad-fn",
        form="values",
        choices=("SquareBackward", "MulBackward0", "PowBackward0", "None"),
        code=SQUARE + """\
(type(out.grad_fn).__name__, type(grad_x.grad_fn).__name__)
""",
        answer=("SquareBackward", "MulBackward0"),
        why="""`out.grad_fn` is `SquareBackward`: the one node autograd added for the whole of `forward`.
`grad_x.grad_fn` is `MulBackward0`. The gradient is the result of the last operation in `backward`, the
multiplication by `x`, which was recorded because `create_graph=True`. It is not `SquareBackward`: that
node says how `out` was made, while `grad_x` was made by the backward formula.""",
    ),
    Question(
        id="5.sinh-grad-fn",
        form="values",
        choices=("AddBackward0", "SubBackward0", "MulBackward0", "SinhBackward", "yes", "no"),
        code=SINH + """\
x = torch.rand(3, 3, requires_grad=True, dtype=torch.double)
out = Sinh.apply(x)[0]
grad_x, = torch.autograd.grad(out.sum(), x, create_graph=True)


def history(node, seen=()):
    # every node reachable from node, by name
    if node is None or node in seen:
        return set()
    names = {type(node).__name__}
    for parent, _ in node.next_functions:
        names |= history(parent, seen + (node,))
    return names


(type(grad_x.grad_fn).__name__, "yes" if "SinhBackward" in history(grad_x.grad_fn) else "no")
""",
        answer=("SubBackward0", "yes"),
        why="""`grad_x.grad_fn` is `SubBackward0`: the last operation in `backward` is the in-place
subtraction `grad_input -= ...`, recorded like `grad_input - ...`. And yes, `SinhBackward` is in the
history of `grad_x`: `backward` computed with `expx` and `expnegx`, which are outputs of `Sinh`, so every
path from `grad_x` to `x` runs through `SinhBackward`.""",
    ),
    Question(
        id="5.loud-sinh",
        form="numbers",
        code=SINH + """\
received = []


class LoudSinh(Sinh):
    @staticmethod
    def backward(ctx, grad_out, grad_exp, grad_negexp):
        received.extend(g.item() for g in (grad_out, grad_exp, grad_negexp))
        return Sinh.backward(ctx, grad_out, grad_exp, grad_negexp)


x = torch.tensor(0.5, requires_grad=True, dtype=torch.double)
grad_x, = torch.autograd.grad(LoudSinh.apply(x)[0], x, create_graph=True)
grad2_x, = torch.autograd.grad(grad_x, x)
tuple(received)
""",
        answer=(1.0, 0.0, 0.0, 0.0, 0.5, 0.5),
        why="""First call: `1, 0, 0`. Only the first output was used, so autograd passes zeros for the two
others.

Second call: `0, 0.5, 0.5`. Autograd now differentiates `grad_x = grad_out * (expx + expnegx) / 2 +
g1 * expx - g2 * expnegx`, with `grad_out` = 1 and `g1` = `g2` = 0. Its graph reaches `x` only through
`expx` and `expnegx`, outputs 1 and 2 of the Function, so their gradients are the ones that arrive:
1/2 + g1 = 0.5 and 1/2 - g2 = 0.5. Output 0 was not used by `grad_x`, so it gets 0. `backward` then
returns 0.5 exp(x) - 0.5 exp(-x) = sinh(x): the right second derivative, carried entirely by the two
terms one is tempted to drop.""",
    ),
    Question(
        id="5.sinhbad-history",
        form="bool",
        code="""\
from torch.autograd import Function


class SinhBad(Function):
    @staticmethod
    def forward(ctx, x):
        expx, expnegx = torch.exp(x), torch.exp(-x)
        ctx.expx, ctx.expnegx = expx, expnegx
        return (expx - expnegx) / 2

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out * (ctx.expx + ctx.expnegx) / 2


x = torch.rand(3, 3, requires_grad=True, dtype=torch.double)
out = SinhBad.apply(x)
grad_x, = torch.autograd.grad(out.sum(), x, create_graph=True)
grad_x.requires_grad
""",
        answer=False,
        why="""`grad_x` does not require grad, and its `grad_fn` is `None`: in the graph it is a constant,
connected to nothing. `backward` multiplied `grad_out`, a tensor of ones without history (it comes from
`out.sum()`), with `expx` and `expnegx`, which were computed in `forward` with grad mode off. None of the
factors had a history, so although `create_graph=True` recorded `backward`, there was nothing to connect
`grad_x` to.""",
    ),
    Question(
        id="5.cube-grad",
        form="numbers",
        code="""\
from torch.autograd import Function


class CubeBackward(Function):
    @staticmethod
    def forward(ctx, grad_out, x):
        ctx.save_for_backward(x, grad_out)
        return grad_out * 3 * x**2

    @staticmethod
    def backward(ctx, grad_out):
        x, saved_grad_out = ctx.saved_tensors
        return grad_out * 3 * x**2, grad_out * saved_grad_out * 6 * x


class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return CubeBackward.apply(grad_out, x)


x = torch.tensor(2.0, requires_grad=True, dtype=torch.double)
grad_x, = torch.autograd.grad(Cube.apply(x), x, create_graph=True)
grad2_x, = torch.autograd.grad(grad_x, x)
(grad_x.item(), grad2_x.item())
""",
        answer=(12.0, 12.0),
        why="""`grad_x` is 3x² = 12, and its `grad_fn` is `CubeBackwardBackward`: `grad_x` is the output of
`CubeBackward.apply`, and autograd names a Function's node after the class plus `Backward`. The second
derivative is 6x = 12, computed by `CubeBackward.backward`.""",
    ),
]
