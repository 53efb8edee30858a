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
