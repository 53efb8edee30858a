"""Lesson 6's Predict questions (autograder/course/predictions/__init__.py says how they are read)."""

from autograder.course.predictions import Question

QUESTIONS = [
    Question(
        id="6.saved-bytes",
        form="numbers",
        code="""\
import torch.nn.functional as F
from torch.autograd import Function


def saved_bytes(run):
    # the bytes of every storage saved for backward, each storage counted once
    saved = {}

    def pack(tensor):
        storage = tensor.untyped_storage()
        saved.setdefault(storage.data_ptr(), storage.nbytes())
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        run()
    return sum(saved.values())


class FusedConvBN(Function):  # the lesson's fused Function, as far as what it saves
    @staticmethod
    def forward(ctx, X, weight, eps=1e-3):
        Y = F.conv2d(X, weight)
        mean, sqrt_var = Y.mean(dim=(0, 2, 3)), Y.var(dim=(0, 2, 3)).sqrt()
        ctx.save_for_backward(X, weight, mean, sqrt_var)
        return (Y - mean[None, :, None, None]) / (sqrt_var[None, :, None, None] + eps)


conv = torch.nn.Conv2d(3, 8, kernel_size=3, bias=False)
bn = torch.nn.BatchNorm2d(8, eps=1e-3, affine=False, track_running_stats=False)
X = torch.randn(8, 3, 16, 16, requires_grad=True)
(saved_bytes(lambda: bn(conv(X))), saved_bytes(lambda: FusedConvBN.apply(X, conv.weight)))
""",
        answer=(75680, 25504),
        rel_tol=0.0,
        why="""The chained Functions save what the modules save: X (8 · 3 · 16 · 16 · 4 = 24,576 bytes),
the weight (8 · 3 · 3 · 3 · 4 = 864), the convolution output (8 · 8 · 14 · 14 · 4 = 50,176) and two
statistics of 8 floats (2 · 32): 75,680 bytes. The fused Function saves the same minus the convolution
output, which it recomputes in backward: 25,504 bytes, a third.""",
    ),
]
