# Hostile: a double-backward submission whose backwards give the right gradients through graphs built to keep
# Graphviz laying them out for many minutes, within the grader's caps on a graph (200 nodes, 800 edges): a
# chain of Functions with long names whose last quarter each take a dozen inputs from its first quarter,
# edges across the whole chain. Their second derivatives are wrong (one factor is detached), so that the
# grader shows the graphs. Sinh is right.
import random

import torch
from torch.autograd import Function


class AFunctionWhoseNameIsLongEnoughToMakeEveryNodeOfTheGraphWide(Function):
    @staticmethod
    def forward(ctx, first, *others):
        ctx.others = len(others)
        return first.clone()

    @staticmethod
    def backward(ctx, grad):
        return (grad, *(None for _ in range(ctx.others)))


LINK, CHAIN, FAR = AFunctionWhoseNameIsLongEnoughToMakeEveryNodeOfTheGraphWide, 150, 12


def slow_to_draw(start):
    rnd = random.Random(0)
    chain = [start]
    for i in range(1, CHAIN):
        far = [chain[rnd.randrange(CHAIN // 4)] for _ in range(FAR)] if i >= 3 * CHAIN // 4 else []
        chain.append(LINK.apply(chain[-1], *far))
    return chain[-1]


class Square(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**2

    @staticmethod
    def backward(ctx, grad_out):
        x, = ctx.saved_tensors
        return slow_to_draw(grad_out * (x + x.detach()))


class Sinh(Function):
    @staticmethod
    def forward(ctx, x):
        expx, expnegx = torch.exp(x), torch.exp(-x)
        ctx.save_for_backward(expx, expnegx)
        return (expx - expnegx) / 2, expx, expnegx

    @staticmethod
    def backward(ctx, grad_out, grad_out_exp, grad_out_negexp):
        expx, expnegx = ctx.saved_tensors
        grad_input = grad_out * (expx + expnegx) / 2
        grad_input += grad_out_exp * expx
        grad_input -= grad_out_negexp * expnegx
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
        x, = ctx.saved_tensors
        return slow_to_draw(grad_out * 3 * x * x.detach())


class CubeBackward(Function):
    @staticmethod
    def forward(ctx, grad_out, x):
        ctx.save_for_backward(x, grad_out)
        return grad_out * 3 * x**2

    @staticmethod
    def backward(ctx, grad_out):
        x, saved_grad_out = ctx.saved_tensors
        return grad_out * 3 * x**2, grad_out * saved_grad_out * 6 * x


# Lesson 5's second derivatives in practice, written honestly

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


class LogCosh(Function):
    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        return torch.log(torch.cosh(z))

    @staticmethod
    def backward(ctx, grad_out):
        (z,) = ctx.saved_tensors
        return grad_out * torch.tanh(z)


def hvp(A, x, v):
    loss = LogCosh.apply(A @ x).sum()
    (g,) = torch.autograd.grad(loss, x, create_graph=True)
    (hv,) = torch.autograd.grad(g, x, grad_outputs=v, create_graph=True)
    return hv
