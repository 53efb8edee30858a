# Lesson 2's Functions written the slowest honest way we know: element by element, in Python loops.
# Right everywhere; graded with the default problem times (scaled to each reference), they keep every
# point (tests/sandbox/test_cpu_budget.py).
import math

import torch
from torch.autograd import Function


class KillHead(Function):
    @staticmethod
    def forward(ctx, input, n):
        ctx.n = n
        output = input.clone()
        for i in range(output.shape[0]):
            for j in range(min(n, output.shape[1])):
                output[i, j] = 0.0
        return output

    @staticmethod
    def backward(ctx, grad_output):
        grad_input = grad_output.clone()
        for i in range(grad_input.shape[0]):
            for j in range(min(ctx.n, grad_input.shape[1])):
                grad_input[i, j] = 0.0
        return grad_input, None


class MyReLU(Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        values = input.reshape(-1)
        output = torch.zeros_like(values)
        for i in range(values.numel()):
            if values[i].item() > 0:
                output[i] = values[i]
        return output.reshape(input.shape)

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        values, grads = input.reshape(-1), grad_output.reshape(-1)
        grad_input = torch.zeros_like(grads)
        for i in range(values.numel()):
            if values[i].item() >= 0:
                grad_input[i] = grads[i]
        return grad_input.reshape(input.shape)


class Exp(Function):
    @staticmethod
    def forward(ctx, input):
        values = input.reshape(-1)
        result = torch.empty_like(values)
        for i in range(values.numel()):
            result[i] = math.exp(values[i].item())
        result = result.reshape(input.shape)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        return grad_output * result


class LinearFunction(Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        rows, inner = input.shape
        output = torch.zeros(rows, weight.shape[0], dtype=input.dtype)
        for i in range(rows):
            for j in range(weight.shape[0]):
                total = 0.0
                for k in range(inner):
                    total += input[i, k].item() * weight[j, k].item()
                output[i, j] = total + (bias[j].item() if bias is not None else 0.0)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        rows, inner = input.shape
        if ctx.needs_input_grad[0]:
            grad_input = torch.zeros_like(input)
            for i in range(rows):
                for k in range(inner):
                    grad_input[i, k] = sum(grad_output[i, j].item() * weight[j, k].item()
                                           for j in range(weight.shape[0]))
        if ctx.needs_input_grad[1]:
            grad_weight = torch.zeros_like(weight)
            for j in range(weight.shape[0]):
                for k in range(inner):
                    grad_weight[j, k] = sum(grad_output[i, j].item() * input[i, k].item()
                                            for i in range(rows))
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = torch.zeros_like(bias)
            for j in range(bias.shape[0]):
                grad_bias[j] = sum(grad_output[i, j].item() for i in range(rows))
        return grad_input, grad_weight, grad_bias
