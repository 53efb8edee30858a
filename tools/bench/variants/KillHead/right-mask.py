# KillHead, a right answer. Above the marker: what the notebook's set-up cell imports.
import torch
from torch.autograd import Function


# -- the answer cell --
class KillHead(Function):
    @staticmethod
    def forward(ctx, input, n):
        mask = torch.ones_like(input)
        mask[:, :n] = 0
        ctx.save_for_backward(mask)
        return input * mask

    @staticmethod
    def backward(ctx, grad_output):
        mask, = ctx.saved_tensors
        return grad_output * mask, None
