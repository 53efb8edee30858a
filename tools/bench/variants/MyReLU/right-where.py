# MyReLU, a right answer. Above the marker: what the notebook's set-up cell imports.
import torch
from torch.autograd import Function


# -- the answer cell --
class MyReLU(Function):
    @staticmethod
    def forward(ctx, input):
        output = torch.where(input > 0, input, torch.zeros_like(input))
        ctx.save_for_backward(output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        output, = ctx.saved_tensors
        return grad_output * (output > 0).to(grad_output.dtype)
