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
        # the work for an input that needs no gradient is skipped, as the exercise asks
        need = ctx.needs_input_grad  # one flag per argument given to apply (bias may be left out)
        grad_input = grad_output @ weight if need[0] else None
        grad_weight = grad_output.T @ input if need[1] else None
        grad_bias = grad_output.sum(dim=0) if ctx.has_bias and need[2] else None
        return grad_input, grad_weight, grad_bias
