# LinearFunction, a wrong answer. Above the marker: what the notebook's set-up cell imports.
from torch.autograd import Function


# -- the answer cell --
class LinearFunction(Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        return input.mm(weight.t()) + bias.unsqueeze(0)  # fails without a bias

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        return grad_output.mm(weight), grad_output.t().mm(input), grad_output.sum(0)
