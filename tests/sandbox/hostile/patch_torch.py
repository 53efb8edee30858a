# Hostile: wrong Functions, and PyTorch patched so that every check it could run says "passed".
import torch
from torch.autograd import Function


def always(*args, **kwargs):
    return True


class AlwaysEqual(torch.Tensor):
    pass


torch.autograd.gradcheck = always
torch.autograd.gradgradcheck = always
torch.autograd.gradcheck_module = always
torch.allclose = always
torch.equal = always
torch.isclose = lambda a, b, *args, **kwargs: torch.ones_like(a, dtype=torch.bool)
torch.testing.assert_close = lambda *args, **kwargs: None
torch.Tensor.__sub__ = lambda self, other: torch.zeros_like(self)
torch.Tensor.__rsub__ = lambda self, other: torch.zeros_like(self)
torch.Tensor.__eq__ = lambda self, other: torch.ones_like(self, dtype=torch.bool)
torch.Tensor.__ne__ = lambda self, other: torch.zeros_like(self, dtype=torch.bool)
torch.Tensor.allclose = always
torch.Tensor.equal = always
torch.Tensor.tolist = lambda self: [0.0] * self.numel()
torch.set_default_dtype(torch.float64)


class KillHead(Function):
    @staticmethod
    def forward(ctx, input, n):
        return input * 2  # wrong: kills nothing and doubles

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 0, None  # wrong


class MyReLU(Function):
    @staticmethod
    def forward(ctx, input):
        return input * 2  # wrong

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 0  # wrong


class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2  # wrong

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 0  # wrong


class LinearFunction(Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        return input.mm(weight.t()) * 2  # wrong

    @staticmethod
    def backward(ctx, grad_output):
        return None, None, None  # wrong
