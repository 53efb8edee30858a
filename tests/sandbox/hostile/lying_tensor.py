# Hostile: right forwards but wrong backwards (zeros), returning a tensor subclass that lies: its
# comparisons always say "equal", and torch.autograd.grad called on it answers with the right gradient,
# computed from a hidden reference instead of this backward.
import torch
from torch.autograd import Function


class Liar(torch.Tensor):
    truth = None  # a function of the graded inputs that computes the right output with autograd

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is torch.autograd.grad:
            outputs, inputs = args[0], args[1]
            out = outputs[0] if isinstance(outputs, (tuple, list)) else outputs
            with torch._C.DisableTorchFunctionSubclass():
                truth = type(out).truth(*(inputs if isinstance(inputs, (tuple, list)) else (inputs,)))
                return torch.autograd.grad(truth, *args[1:], **kwargs)
        if func in (torch.Tensor.__eq__, torch.eq, torch.isclose):
            return torch.ones_like(args[0].as_subclass(torch.Tensor), dtype=torch.bool)
        if func in (torch.Tensor.__ne__, torch.ne):
            return torch.zeros_like(args[0].as_subclass(torch.Tensor), dtype=torch.bool)
        if func in (torch.allclose, torch.equal, torch.Tensor.allclose, torch.Tensor.equal):
            return True
        if func in (torch.Tensor.__sub__, torch.sub, torch.Tensor.sub):
            return torch.zeros_like(args[0].as_subclass(torch.Tensor))
        return super().__torch_function__(func, types, args, kwargs)


def lying(result, truth):
    cls = type("Liar_", (Liar,), {"truth": staticmethod(truth)})
    return result.as_subclass(cls)


def kill_head(x, n):
    keep = torch.ones_like(x)
    keep[:, :n] = 0
    return x * keep


class KillHead(Function):
    @staticmethod
    def forward(ctx, input, n):
        result = input.clone()
        result[:, 0:n] = 0
        return lying(result, lambda x: kill_head(x, n))

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 0, None  # wrong


class MyReLU(Function):
    @staticmethod
    def forward(ctx, input):
        return lying(input.clamp(min=0), torch.relu)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 0  # wrong


class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        return lying(torch.exp(x), torch.exp)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 0  # wrong


class LinearFunction(Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return lying(output, lambda i, w, b=None: i @ w.t() + (0 if b is None else b))

    @staticmethod
    def backward(ctx, grad_output):
        return None, None, None  # wrong
