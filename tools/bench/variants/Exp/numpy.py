# Exp, a wrong answer. Above the marker: what the notebook's set-up cell imports.
import torch  # noqa: I001 - the answer cell imports what it needs below
from torch.autograd import Function


# -- the answer cell --
import numpy as np


class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        result = torch.exp(x)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        result, = ctx.saved_tensors
        return grad_output * torch.from_numpy(np.array(result.detach().numpy()))  # invisible to autograd
