"""A right answer to docs/authoring_example.py's assignment "indexing", as a student would hand it in."""

import torch
from torch.autograd import Function


class Gather(Function):
    @staticmethod
    def forward(ctx, x, index, dim=1):
        ctx.save_for_backward(index)
        ctx.dim, ctx.shape = dim, x.shape
        return x.gather(dim, index)

    @staticmethod
    def backward(ctx, grad_output):
        (index,) = ctx.saved_tensors
        grad = torch.zeros(ctx.shape, dtype=grad_output.dtype).scatter_add_(ctx.dim, index, grad_output)
        return grad, None, None


class RoundSTE(Function):
    @staticmethod
    def forward(ctx, x):
        return x.round()

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


class SmoothMax(Function):
    @staticmethod
    def forward(ctx, x, dim=-1):
        top = x.max(dim=dim, keepdim=True).values
        out = top.squeeze(dim) + (x - top).exp().sum(dim).log()
        ctx.save_for_backward(x, out)
        ctx.dim = dim
        return out

    @staticmethod
    def backward(ctx, grad_output):
        x, out = ctx.saved_tensors
        return grad_output.unsqueeze(ctx.dim) * (x - out.unsqueeze(ctx.dim)).exp(), None
