# LinearFunction, a wrong answer. Above the marker: what the notebook's set-up cell imports.
from torch.autograd import Function


# -- the answer cell --
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
        grad_bias = grad_output.sum(0) if bias is not None else None
        return grad_output.mm(weight), input.t().mm(grad_output), grad_bias  # weight gradient transposed
