# Exp, a wrong answer. Above the marker: what the notebook's set-up cell imports.
import torch
from torch.autograd import Function


# -- the answer cell --
class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        result = torch.exp(x).view(-1, 2)  # raises unless x has an even number of entries
        ctx.save_for_backward(result)
        return result.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        result, = ctx.saved_tensors
        return grad_output * result.view_as(grad_output)
