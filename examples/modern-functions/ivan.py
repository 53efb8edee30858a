# A subtly wrong submission: a wrong jvp, a wrong Softplus gradient, a softsign backward missing a square.
import torch
from torch.autograd import Function

class Tanh(Function):
    @staticmethod
    def forward(x):
        return torch.tanh(x)
    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)
        ctx.save_for_forward(output)
    @staticmethod
    def backward(ctx, g):
        y, = ctx.saved_tensors
        return g * (1 - y * y)
    @staticmethod
    def jvp(ctx, t):
        y, = ctx.saved_tensors
        return t * (1 + y * y)

class Softplus(Function):
    generate_vmap_rule = True
    @staticmethod
    def forward(x):
        return torch.clamp(x, min=0) + torch.log1p(torch.exp(-x.abs()))
    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])
    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * torch.sigmoid(-x)

@torch.library.custom_op("course::softsign2", mutates_args=())
def softsign(x: torch.Tensor) -> torch.Tensor:
    return x / (1 + x.abs())
@softsign.register_fake
def _(x): return torch.empty_like(x)
def _setup(ctx, inputs, output): ctx.save_for_backward(inputs[0])
def _bw(ctx, g):
    x, = ctx.saved_tensors; return g / (1 + x.abs())
softsign.register_autograd(_bw, setup_context=_setup)
