"""Lesson 5, double backward: Square, Sinh (graded through sinh), Cube with CubeBackward, and second
derivatives in practice: GradientPenalty (graded through gradient_penalty, with Sigmoid) and
HessianVectorProduct (graded through hvp, with LogCosh).

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



# -- Second derivatives in practice: a gradient penalty and a Hessian-vector product ---------------------


class Sigmoid(Function):
    @staticmethod
    def forward(ctx, z):
        s = torch.sigmoid(z)
        ctx.save_for_backward(s)
        return s

    @staticmethod
    def backward(ctx, grad_out):
        (s,) = ctx.saved_tensors
        return grad_out * s * (1 - s)  # PyTorch operations on the saved output: differentiable again


def gradient_penalty(x, w):
    scores = Sigmoid.apply(x @ w)  # the critic's score of each row of x
    (grad_x,) = torch.autograd.grad(scores.sum(), x, create_graph=True)
    return ((grad_x.norm(dim=1) - 1) ** 2).mean()


def _penalty(x, w, slope=None, norms=None):
    """The penalty written out: row i of dD/dx is s_i (1 - s_i) w, of norm s_i (1 - s_i) ||w||."""
    s = torch.sigmoid(x @ w)
    slope = s * (1 - s) if slope is None else slope(s)
    norm = slope * w.norm() if norms is None else norms(slope, w)
    return ((norm - 1) ** 2).mean()


GRADIENT_PENALTY = Problem(
    name="GradientPenalty",
    entry="gradient_penalty",
    summary="gradient_penalty(x, w): mean over the rows of (||d critic / d x_i|| - 1) ** 2, the critic "
            "Sigmoid.apply(x @ w), differentiable with respect to x and w",
    reference=_penalty,
    cases=(Case((TensorSpec((4, 3)), TensorSpec((3,)))), Case((TensorSpec((6, 2), -2, 2), TensorSpec((2,))))),
    kind="callable",
    also_functions=("Sigmoid",),
    # Graded as functions of their inputs: the backward of the Function inside answers for other inputs
    # (backward returns), the inputs must require grad (needs_input_grad), and finite differences run
    # under no_grad, where torch.autograd.grad has no graph (gradcheck); the gradient check compares
    # the gradients with the reference's exactly.
    skip=("backward returns", "needs_input_grad", "gradcheck"),
    solution=gradient_penalty,
    mistakes=(
        Mistake("the penalty uses the squared norm of each row's gradient, (grad_x ** 2).sum(dim=1): "
                "WGAN-GP's penalty is on the norm itself, grad_x.norm(dim=1), which is 1 for a critic "
                "that is 1-Lipschitz along the rows.",
                forward=lambda x, w: _penalty(x, w, norms=lambda slope, w: slope**2 * (w**2).sum())),
        Mistake("the norm is taken over the whole batch's gradient at once, grad_x.norm(): each row x_i "
                "is one sample, with its own gradient and its own norm, grad_x.norm(dim=1).",
                forward=lambda x, w: (((torch.sigmoid(x @ w) * (1 - torch.sigmoid(x @ w))) ** 2).sum().sqrt()
                                      * w.norm() - 1) ** 2),
        Mistake("the critic's scores are averaged before torch.autograd.grad, scores.mean(): that divides "
                "every row's gradient by the batch size. Each row's gradient is that of its own score: "
                "differentiate scores.sum().",
                forward=lambda x, w: _penalty(x, w, slope=lambda s: s * (1 - s) / x.shape[0])),
        Mistake("the derivative in Sigmoid.backward has no autograd history (computed from a detached "
                "tensor, in NumPy or under @once_differentiable), so the penalty's gradient misses the path "
                "through it: write backward in PyTorch operations on the saved tensors, without detaching.",
                backward=lambda x, w: _penalty(x, w, slope=lambda s: (s * (1 - s)).detach())),
    ),
)


class LogCosh(Function):
    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        return z.abs() + torch.log1p(torch.exp(-2 * z.abs())) - torch.log(torch.tensor(2.0, dtype=z.dtype))

    @staticmethod
    def backward(ctx, grad_out):
        (z,) = ctx.saved_tensors
        return grad_out * torch.tanh(z)


def hvp(A, x, v):
    loss = LogCosh.apply(A @ x).sum()
    (g,) = torch.autograd.grad(loss, x, create_graph=True)
    (hv,) = torch.autograd.grad(g, x, grad_outputs=v, create_graph=True)
    return hv


def _hvp(A, x, v, curvature=None, direction=None):
    """H v written out: the Hessian of sum(log cosh(A x)) is A^T diag(1 - tanh(A x) ** 2) A."""
    z = A @ x
    c = 1 - torch.tanh(z) ** 2 if curvature is None else curvature(z)
    return A.t() @ (c * (A @ (v if direction is None else direction)))


HESSIAN_VECTOR_PRODUCT = Problem(
    name="HessianVectorProduct",
    entry="hvp",
    summary="hvp(A, x, v): the Hessian of LogCosh.apply(A @ x).sum() with respect to x, times v, by "
            "double backward; itself differentiable",
    reference=_hvp,
    cases=(Case((TensorSpec((4, 3)), TensorSpec((3,)), TensorSpec((3,)))),
           Case((TensorSpec((5, 5)), TensorSpec((5,), -2, 2), TensorSpec((5,))))),
    kind="callable",
    also_functions=("LogCosh",),
    # As GRADIENT_PENALTY of their inputs: the backward of the Function inside answers for other inputs
    skip=("backward returns", "needs_input_grad", "gradcheck"),
    solution=hvp,
    mistakes=(
        Mistake("the second torch.autograd.grad differentiates g.sum(), which gives H times a vector of "
                "ones: pass grad_outputs=v (or differentiate (g * v).sum()) to get H v.",
                forward=lambda A, x, v: _hvp(A, x, v, direction=torch.ones_like(v))),
        Mistake("LogCosh.backward multiplies grad_out by 1 - tanh(z) ** 2, the second derivative of "
                "log(cosh(z)): backward needs the first, d/dz log(cosh(z)).",
                forward=lambda A, x, v: _hvp(A, x, v, curvature=lambda z: -2 * torch.tanh(z)
                                             * (1 - torch.tanh(z) ** 2))),
        Mistake("LogCosh.backward multiplies grad_out by sinh(z), the derivative of cosh(z) without the "
                "chain rule through the logarithm, 1 / cosh(z).",
                forward=lambda A, x, v: _hvp(A, x, v, curvature=torch.cosh)),
        Mistake("the returned H v has no history through the first derivative (the second "
                "torch.autograd.grad without create_graph=True, or a detached result): pass "
                "create_graph=True to both calls, so that H v can itself be differentiated.",
                backward=lambda A, x, v: _hvp(A, x, v).detach() + 0 * (A.sum() + x.sum() + v.sum())),
    ),
    hints={"forward": "If torch.autograd.grad says a tensor 'does not require grad', the first call must "
                      "keep the graph of its result: create_graph=True."},
)

ASSIGNMENT = Assignment("double-backward", "05-double-backward",
                        (SQUARE, SINH, CUBE, GRADIENT_PENALTY, HESSIAN_VECTOR_PRODUCT))
