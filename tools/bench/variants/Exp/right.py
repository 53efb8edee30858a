# Exp, a right answer. Above the marker: what the notebook's set-up cell imports.
import torch
from torch.autograd import Function


# -- the answer cell --
class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        result = torch.exp(x)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        result, = ctx.saved_tensors
        return grad_output * result
