# Right Functions written with what sits close to a reach without being one: the garbage collector
# collected, the environment read, weak references, a printed traceback, sys.path, a warning, torch's
# subclass helper, getattr with a written name, and the course's check().
import gc
import os
import sys
import traceback
import warnings
import weakref

from autograder import check  # noqa: F401 - the notebooks import it; a grading worker skips it

gc.collect()
os.environ.setdefault("COURSE", "autograd")
sys.path.insert(0, os.getcwd())
warnings.warn("a right submission may warn")
try:
    print(1 / 0)
except ZeroDivisionError:
    traceback.print_exc()
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
        result = grad_output.clone()
        result[:, 0:ctx.n] = 0
        return result, None


class MyReLU(Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input < 0] = 0
        return grad_input


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


class LinearFunction(Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias




kept = weakref.ref(Exp)
with torch._C.DisableTorchFunctionSubclass():
    assert getattr(Exp, "apply") is Exp.apply  # noqa: B009 - a name written out, as students do
