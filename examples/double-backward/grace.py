# A subtly wrong submission for the double-backward assignment: Square missing its factor 2, Sinh keeping its
# outputs as attributes of ctx, and a Cube whose backward leaves PyTorch without using CubeBackward.
import numpy as np
import torch
from torch.autograd import Function


class Square(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**2

    @staticmethod
    def backward(ctx, grad_out):
        x, = ctx.saved_tensors
        return grad_out * x  # the factor 2 is missing


class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        result = torch.exp(x)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_out):
        result, = ctx.saved_tensors
        return result * grad_out


class Sinh(Function):
    @staticmethod
    def forward(ctx, x):
        expx, expnegx = torch.exp(x), torch.exp(-x)
        ctx.expx, ctx.expnegx = expx, expnegx  # kept on ctx, not with save_for_backward
        return (expx - expnegx) / 2, expx, expnegx

    @staticmethod
    def backward(ctx, grad_out, grad_out_exp, grad_out_negexp):
        expx, expnegx = ctx.expx, ctx.expnegx
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
        return torch.from_numpy(np.asarray(grad_out.detach().numpy() * 3 * x.detach().numpy() ** 2))


class CubeBackward(Function):
    @staticmethod
    def forward(ctx, grad_out, x):
        ctx.save_for_backward(x, grad_out)
        # computed in NumPy, which autograd cannot see: that is why CubeBackward has its own backward
        return torch.from_numpy(np.asarray(grad_out.numpy() * 3 * x.numpy() ** 2))

    @staticmethod
    def backward(ctx, grad_out):
        x, saved_grad_out = ctx.saved_tensors
        return grad_out * 3 * x**2, grad_out * saved_grad_out * 6 * x


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
