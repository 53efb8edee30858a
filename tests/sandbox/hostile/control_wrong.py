# Not hostile: the same wrong Functions as patch_torch.py, write_output.py and forge_pipe.py, without
# any tampering. What it scores is what those may score.
from torch.autograd import Function


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
