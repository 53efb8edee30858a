# Exp, a right answer. Above the marker: what the notebook's set-up cell imports.
import torch
from torch.autograd import Function


# -- the answer cell --
class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.exp()

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * torch.exp(x)
