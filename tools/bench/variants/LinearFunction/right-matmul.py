# LinearFunction, a right answer. Above the marker: what the notebook's set-up cell imports.
from torch.autograd import Function


# -- the answer cell --
class LinearFunction(Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight)
        ctx.has_bias = bias is not None
        out = input @ weight.T
        return out + bias if bias is not None else out

    @staticmethod
    def backward(ctx, grad_output):
        input, weight = ctx.saved_tensors
        grad_bias = grad_output.sum(dim=0) if ctx.has_bias else None
        return grad_output @ weight, grad_output.T @ input, grad_bias
