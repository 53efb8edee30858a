# A right submission for the conv-bn-fusion assignment (lesson 6): the tutorial's batch norm, its backward
# derived by hand.
import torch
from torch.autograd import Function
from torch.autograd.function import once_differentiable


def unsqueeze_all(t):
    return t[None, :, None, None]


def batch_norm_backward(grad_out, X, mean, sqrt_var, eps):
    N = X.numel() // X.size(1)
    denom = sqrt_var + eps
    centred = X - unsqueeze_all(mean)
    grad_sqrt_var = -(grad_out * centred).sum(dim=(0, 2, 3)) / denom**2
    grad_X = (grad_out - unsqueeze_all(grad_out.mean(dim=(0, 2, 3)))) / unsqueeze_all(denom)
    return grad_X + centred * unsqueeze_all(grad_sqrt_var / ((N - 1) * sqrt_var))


class BatchNorm(Function):
    @staticmethod
    def forward(ctx, X, eps=1e-3):
        mean = X.mean(dim=(0, 2, 3))
        sqrt_var = X.var(dim=(0, 2, 3), unbiased=True).sqrt()
        ctx.save_for_backward(X, mean, sqrt_var)
        ctx.eps = eps
        return (X - unsqueeze_all(mean)) / unsqueeze_all(sqrt_var + eps)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        X, mean, sqrt_var = ctx.saved_tensors
        return batch_norm_backward(grad_out, X, mean, sqrt_var, ctx.eps), None
