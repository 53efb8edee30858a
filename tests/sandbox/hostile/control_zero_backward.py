# Not hostile: the same Functions as patch_autograder.py and lying_tensor.py (right forwards, backwards
# returning zeros), without any tampering. What it scores is what those may score.
import torch
from torch.autograd import Function


class KillHead(Function):
    @staticmethod
    def forward(ctx, input, n):
        ctx.n = n
        result = input.clone()
        result[:, 0:n] = 0
        return result

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 0, None  # wrong


class MyReLU(Function):
    @staticmethod
    def forward(ctx, input):
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 0  # wrong


class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        return torch.exp(x)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 0  # wrong


class LinearFunction(Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        return None, None, None  # wrong
