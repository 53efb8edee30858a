"""Lesson 6, fusing convolution and batch norm: BatchNorm, the tutorial's batch norm (per channel, over the
batch and the pixels, unbiased standard deviation, eps outside the square root), whose backward the student
derives."""

from torch.autograd import Function

from autograder.course.assignments import Assignment
from autograder.course.problems import Case, Mistake, Problem, TensorSpec

DIMS = (0, 2, 3)  # a channel's entries: over the batch and the pixels


def batch_norm(X, eps=1e-3):
    mean = X.mean(DIMS, keepdim=True)
    return (X - mean) / (X.std(DIMS, keepdim=True) + eps)


class BatchNorm(Function):
    @staticmethod
    def forward(ctx, X, eps=1e-3):
        mean = X.mean(DIMS, keepdim=True)
        std = X.std(DIMS, keepdim=True)
        ctx.save_for_backward(X, mean, std)
        ctx.eps = eps
        return (X - mean) / (std + eps)

    @staticmethod
    def backward(ctx, grad_out):
        X, mean, std = ctx.saved_tensors
        n = X.numel() // X.size(1)
        centred, denom = X - mean, std + ctx.eps
        grad_std = -(grad_out * centred).sum(DIMS, keepdim=True) / denom**2
        grad_X = (grad_out - grad_out.mean(DIMS, keepdim=True)) / denom + centred * grad_std / ((n - 1) * std)
        return grad_X, None


def _with_std(X, std, eps):
    return (X - X.mean(DIMS, keepdim=True)) / (std + eps)


def _std_over_n(X):
    """The unbiased standard deviation's value, with the derivative of one whose variance divides by N."""
    std = X.std(DIMS, keepdim=True).detach()
    n = X.numel() // X.size(1)
    squares = ((X - X.mean(DIMS, keepdim=True)) ** 2).sum(DIMS, keepdim=True) / (2 * n * std)
    return std + squares - squares.detach()


def _sigma_path_negated(X, eps=1e-3):
    """The right values, with the path through the standard deviation taken with the wrong sign."""
    std = X.std(DIMS, keepdim=True)
    return _with_std(X, 2 * std.detach() - std, eps)


def _mean_path_undivided(X, eps=1e-3):
    """The right values, with grad_out - its mean where (grad_out - its mean) / (sigma + eps) belongs: the
    paths through the centring not divided by sigma + eps (the one through sigma as it should be)."""
    denom = (X.std(DIMS, keepdim=True) + eps).detach()
    right = _with_std(X, X.std(DIMS, keepdim=True), eps)
    centred = X - X.mean(DIMS, keepdim=True)
    through_centring = centred.detach() / denom + centred - centred.detach()
    through_sigma = centred.detach() / (X.std(DIMS, keepdim=True) + eps)
    return through_centring + through_sigma - right.detach()


# What learners get wrong, forward and backward (the backward ones as the paths of the derivative they
# leave out, detached), each named when seen.
MISTAKES = (
    Mistake("the variance is the biased one, dividing by N (unbiased=False): this lesson's batch norm, as "
            "the tutorial's, divides by N - 1, X.var(dim=(0, 2, 3), unbiased=True).",
            forward=lambda X, eps=1e-3: _with_std(X, X.var(DIMS, unbiased=False, keepdim=True).sqrt(), eps)),
    Mistake("eps is added inside the square root, 1 / sqrt(variance + eps), as nn.BatchNorm2d does: this "
            "lesson's batch norm, as the tutorial's, adds it outside, 1 / (sqrt(variance) + eps).",
            forward=lambda X, eps=1e-3: (X - X.mean(DIMS, keepdim=True))
            / (X.var(DIMS, keepdim=True) + eps).sqrt()),
    Mistake("the statistics are taken over each image's pixels, dim=(2, 3): batch norm takes them per "
            "channel over the batch and the pixels, dim=(0, 2, 3).",
            forward=lambda X, eps=1e-3: (X - X.mean((2, 3), keepdim=True))
            / (X.std((2, 3), keepdim=True) + eps)),
    Mistake("the statistics are taken over every entry at once: batch norm takes them per channel, over "
            "dim=(0, 2, 3), keeping dimension 1.",
            forward=lambda X, eps=1e-3: (X - X.mean()) / (X.std() + eps)),
    Mistake("the path through the mean is left out: each entry moves the mean, which is subtracted from "
            "every entry of its channel, so subtract grad_out's mean over dim=(0, 2, 3) from grad_out.",
            backward=lambda X, eps=1e-3: (X - X.mean(DIMS, keepdim=True).detach())
            / (X.std(DIMS, keepdim=True) + eps)),
    Mistake("the path through the standard deviation is left out: each entry moves sigma, which divides "
            "every entry of its channel; add (X - mean) times dL/dsigma times dsigma/dX.",
            backward=lambda X, eps=1e-3: _with_std(X, X.std(DIMS, keepdim=True).detach(), eps)),
    Mistake("both the path through the mean and the one through the standard deviation are left out: only "
            "grad_out / (sigma + eps) is there. Every entry of a channel moves its mean and its sigma.",
            backward=lambda X, eps=1e-3: (X - X.mean(DIMS, keepdim=True).detach())
            / (X.std(DIMS, keepdim=True).detach() + eps)),
    Mistake("the term of the path through the standard deviation has the wrong sign: it is (X - mean) * "
            "dL/dsigma / ((N - 1) sigma), with dL/dsigma = -sum(grad_out * (X - mean)) / (sigma + eps) ** 2, "
            "its minus sign included, added to (grad_out - its mean) / (sigma + eps).",
            backward=_sigma_path_negated),
    Mistake("grad_out - its mean is not divided by sigma + eps: forward divides every centred entry by "
            "sigma + eps, so the first term is (grad_out - grad_out's mean over dim=(0, 2, 3)) / (sigma + "
            "eps).",
            backward=_mean_path_undivided),
    Mistake("the derivative of sigma divides by N: with the unbiased variance, dsigma/dX_k is "
            "(X_k - mean) / ((N - 1) sigma).",
            backward=lambda X, eps=1e-3: _with_std(X, _std_over_n(X), eps)),
    Mistake("the derivative taken is that of the batch norm with eps inside the square root, 1 / sqrt("
            "variance + eps): this lesson's batch norm adds eps outside, so the sigma path goes through "
            "1 / (sigma + eps).",
            backward=lambda X, eps=1e-3: (X - X.mean(DIMS, keepdim=True))
            / (X.var(DIMS, keepdim=True) + eps).sqrt()),
)

BATCHNORM = Problem(
    name="BatchNorm",
    summary="forward(ctx, X, eps=1e-3): per channel over dim=(0, 2, 3), (X - mean) / (std + eps) with the "
            "unbiased std; backward derived by hand",
    reference=batch_norm,
    # The lesson's tiny input, a batch like its fused Function's, and one with a larger eps (which the
    # formula must carry, outside the square root).
    cases=(Case((TensorSpec((1, 2, 3, 4)),)), Case((TensorSpec((2, 3, 4, 4)),)),
           Case((TensorSpec((3, 2, 2, 3)), 0.1))),
    saves=True,
    solution=BatchNorm,
    mistakes=MISTAKES,
)

ASSIGNMENT = Assignment("conv-bn-fusion", "06-conv-bn-fusion", (BATCHNORM,),
                        preload=("torch.utils.flop_counter", "torch.utils.checkpoint"))
