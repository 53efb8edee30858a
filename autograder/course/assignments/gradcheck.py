"""Lesson 4, gradcheck: Something, (u, v) -> |u v| elementwise; LogSumExp, LayerNorm and
SoftmaxCrossEntropy, whose backward the student derives; ScipyConv2dFunction, the Stack Overflow answer's
SciPy convolution with its two backward bugs fixed (found with gradcheck)."""

import torch
import torch.nn.functional as F
from torch.autograd import Function

from autograder.course.assignments import Assignment
from autograder.course.problems import Case, FixedTensor, Mistake, Problem, TensorSpec

# |uv| has a kink where u or v is 0: random inputs keep away from it, as a careful gradcheck must; one
# case sits on it, where the exercise states the value.
AWAY = {"avoid": (0.0,), "margin": 0.1}


class Something(Function):
    @staticmethod
    def forward(ctx, input1, input2):
        ctx.save_for_backward(input1, input2)
        return (input1 * input2).abs()

    @staticmethod
    def backward(ctx, grad_output):
        input1, input2 = ctx.saved_tensors
        sign = (input1 * input2).sign()
        return grad_output * sign * input2, grad_output * sign * input1


SOMETHING = Problem(
    name="Something",
    summary="forward(ctx, input1, input2) = |input1 * input2| elementwise, with both gradients",
    reference=lambda u, v: (u * v).abs(),
    cases=(Case((TensorSpec((3, 4), **AWAY), TensorSpec((3, 4), **AWAY))),
           Case((TensorSpec((5,), **AWAY), TensorSpec((5,), **AWAY))),
           # The kinks, where the exercise states the value (0, what sign gives): input1 = 0, input2 = 0,
           # both. A central difference there is 0 too (|uv| is even in each input), as gradcheck needs.
           Case((FixedTensor((0.0, 0.7, 0.0, -0.4, 0.9, -0.6)),
                 FixedTensor((0.8, 0.0, 0.0, -0.5, -0.3, 0.0))))),
    saves=True,
    solution=Something,
    elementwise=True,
    derivative="the sign of input1 * input2 times the other input",
)


def logsumexp(input):
    return torch.logsumexp(input, dim=-1)


def _weighted(input, dim, weigh=torch.softmax):
    """logsumexp's values, with the gradient grad_output.unsqueeze(-1) * softmax(input, dim) (or another
    weighing): the weights held constant, so that autograd's gradient is exactly those weights."""
    weights = weigh(input, dim).detach()
    return logsumexp(input).detach() + (weights * input).sum(-1) - (weights * input).sum(-1).detach()


LOGSUMEXP = Problem(
    name="LogSumExp",
    summary="log(sum(exp(input))) over the last dimension, computed stably; backward derived by hand",
    reference=logsumexp,
    # The fourth case is far beyond exp's range in float64 (exp(710) is inf): only a stable forward and
    # backward (subtract the maximum) get it right. In the last, rows a thousand apart, the second with
    # its maximum twice: the maximum subtracted must be each row's own (input.max() over every entry
    # sends the first row's exponentials to 0).
    cases=(Case((TensorSpec((3, 5)),)), Case((TensorSpec((6,)),)), Case((TensorSpec((2, 3, 4)),)),
           Case((TensorSpec((2, 4), low=700.0, high=800.0),)),
           Case((FixedTensor((0.0, 1.0, -2.0, 0.5, 1000.0, 1001.0, 1001.0, 999.0), (2, 4)),))),
    mistakes=(Mistake("the maximum subtracted is input.max(), the largest entry of the whole tensor: in a "
                      "row whose entries all lie far below it, every exponential rounds to 0 and the log of "
                      "their sum is -inf. Subtract each row's own maximum, m = input.amax(dim=-1, "
                      "keepdim=True), and add it back, m.squeeze(-1) + (input - m).exp().sum(-1).log().",
                      lambda input: input.max() + (input - input.max()).exp().sum(-1).log()),
              Mistake("the softmax is normalised over dimension 0 instead of the last: the weights of "
                      "grad_output are exp(input - result) along the dimension forward reduces, "
                      "torch.softmax(input, dim=-1).", backward=lambda input: _weighted(input, 0)),
              Mistake("the weights of grad_output are exp(result - input), one over the softmax: the "
                      "derivative of log-sum-exp is exp(input - result), the softmax, "
                      "torch.softmax(input, dim=-1).",
                      backward=lambda input: _weighted(input, -1, lambda x, d: 1 / torch.softmax(x, d))),
              Mistake("the weights of grad_output are torch.log_softmax(input, -1), the log of the softmax: "
                      "the derivative of log-sum-exp is the softmax itself, exp(input - result), "
                      "torch.softmax(input, dim=-1).",
                      backward=lambda input: _weighted(input, -1, torch.log_softmax))),
)


def layer_norm(input, eps=1e-5):
    return F.layer_norm(input, input.shape[-1:], eps=eps)


def _centred(input):
    return input - input.mean(-1, keepdim=True)


def _normalised(centred, eps, detach_rstd=False):
    rstd = ((centred ** 2).mean(-1, keepdim=True) + eps).rsqrt()
    return centred * (rstd.detach() if detach_rstd else rstd)


def _rstd(input, eps):
    return ((_centred(input) ** 2).mean(-1, keepdim=True) + eps).rsqrt()


def _scaled(t, factor):
    """t's values, with its gradient `factor` times autograd's."""
    return t.detach() + factor * (t - t.detach())


def _summed(input, eps=1e-5):
    """layer norm's values, with both statistics' paths n times too strong: the gradient of a backward
    that sums over the last dimension where the derivative takes means."""
    n = input.shape[-1]
    centred = input - _scaled(input.mean(-1, keepdim=True), n)
    return centred * _scaled(((centred ** 2).mean(-1, keepdim=True) + eps).rsqrt(), n)


def _variance_term(input, eps, term):
    """layer norm's values, with the right gradient's variance term, rstd * normalised * (grad_output *
    normalised).mean(-1), replaced by the one whose function of the input `term` gives (detached but
    for the input it is linear in)."""
    kept = _normalised(_centred(input), eps, detach_rstd=True)  # rstd * (grad_output - its mean)
    rstd, normalised = _rstd(input, eps).detach(), _normalised(_centred(input), eps).detach()
    wrong = term(input, rstd, normalised)
    return kept + wrong - wrong.detach()


LAYERNORM_MISTAKES = (
    Mistake("the mean is taken over dimension 0, across the rows: layer norm takes both statistics over the "
            "last dimension, input.mean(-1, keepdim=True).",
            lambda input, eps=1e-5: _normalised(input - input.mean(0, keepdim=True), eps)),
    # Wrong backwards: the right values, with one path of the derivative detached.
    Mistake("the path through the mean is left out: each entry moves its row's mean, which is subtracted "
            "from every entry of the row, so grad_output's mean over the last dimension must be subtracted "
            "too.",
            backward=lambda input, eps=1e-5: _normalised(input - input.mean(-1, keepdim=True).detach(), eps)),
    Mistake("the path through the variance is left out: each entry moves its row's variance, which divides "
            "every entry of the row, so normalised times the mean of grad_output * normalised over the "
            "last dimension must be subtracted too.",
            backward=lambda input, eps=1e-5: _normalised(_centred(input), eps, detach_rstd=True)),
    Mistake("both the path through the mean and the one through the variance are left out: only "
            "grad_output * rstd is there. Every entry of a row moves its mean and its variance, so subtract "
            "grad_output's mean over the last dimension and normalised times the mean of grad_output * "
            "normalised too.",
            backward=lambda input, eps=1e-5: _normalised(input - input.mean(-1, keepdim=True).detach(), eps,
                                                         detach_rstd=True)),
    Mistake("the term of the variance path has the wrong sign: normalised times the mean of grad_output * "
            "normalised over the last dimension is subtracted, rstd * (grad_output - its mean - normalised "
            "* (grad_output * normalised).mean(-1, keepdim=True)).",
            backward=lambda input, eps=1e-5: _centred(input) * _scaled(_rstd(input, eps), -1)),
    Mistake("the term of the variance path, normalised * (grad_output * normalised).mean(-1, keepdim=True), "
            "is not multiplied by rstd: rstd multiplies every term, rstd * (grad_output - its mean - "
            "normalised * (grad_output * normalised).mean(-1, keepdim=True)).",
            backward=lambda input, eps=1e-5: _centred(input) * _scaled(_rstd(input, eps),
                                                                      1 / _rstd(input, eps).detach())),
    Mistake("the variance term lacks its factor normalised: it is rstd * normalised * (grad_output * "
            "normalised).mean(-1, keepdim=True), one value per row times normalised, entry by entry.",
            backward=lambda input, eps=1e-5: _variance_term(
                input, eps, lambda x, rstd, n: -rstd * n * x.mean(-1, keepdim=True))),
    Mistake("the variance term takes the mean of grad_output where the mean of grad_output * normalised "
            "belongs: it is rstd * normalised * (grad_output * normalised).mean(-1, keepdim=True), not "
            "normalised * grad_output.mean(-1).",
            backward=lambda input, eps=1e-5: _variance_term(
                input, eps, lambda x, rstd, n: -rstd * (n * x).mean(-1, keepdim=True))),
    Mistake("backward sums over the last dimension where the derivative takes means: "
            "grad_output.mean(-1, keepdim=True) and (grad_output * normalised).mean(-1, keepdim=True), "
            "not .sum(), as the mean and the variance are means of the row.", backward=_summed),
    Mistake("eps is added outside the square root, 1 / (sqrt(variance) + eps): it belongs inside, "
            "1 / sqrt(variance + eps).",
            lambda input, eps=1e-5: _centred(input) / ((_centred(input) ** 2).mean(-1, keepdim=True).sqrt()
                                                       + eps)),
    Mistake("the variance is the unbiased one, dividing by n - 1 (input.var() does): layer norm divides by "
            "n, as ((input - mean) ** 2).mean(-1) or input.var(-1, unbiased=False).",
            lambda input, eps=1e-5: _centred(input) * (input.var(-1, keepdim=True) + eps).rsqrt()),
)


LAYERNORM = Problem(
    name="LayerNorm",
    summary="forward(ctx, input, eps=1e-5) normalises over the last dimension, no affine parameters; "
            "backward derived by hand",
    reference=layer_norm,
    cases=(Case((TensorSpec((3, 6)),)), Case((TensorSpec((5,)), 1e-5)), Case((TensorSpec((2, 3, 4)), 0.1))),
    mistakes=LAYERNORM_MISTAKES,
)


def correlate2d_valid(input, filter):
    return F.conv2d(input[None, None], filter[None, None])[0, 0]


def _unflipped(input, filter):
    """The cross-correlation's values, with the input's gradient grad_output cross-correlated (in 'full'
    mode) with the filter as it is, where the right one convolves with it (the filter flipped)."""
    wrong = correlate2d_valid(input, filter.flip(0, 1))
    return correlate2d_valid(input, filter).detach() + wrong - wrong.detach()


SCIPYCONV = Problem(
    name="ScipyConv2dFunction",
    summary="forward(ctx, input, filter): 2-D 'valid' cross-correlation in NumPy, backward fixed",
    reference=correlate2d_valid,
    # A square filter and a non-square one: a transposed filter is then wrong in shape too.
    cases=(Case((TensorSpec((5, 5)), TensorSpec((3, 3)))), Case((TensorSpec((4, 6)), TensorSpec((2, 3))))),
    mistakes=(Mistake("the gradient for input cross-correlates grad_output with the filter as it is "
                      "(correlate2d(grad_output, filter, mode='full')): forward cross-correlates, so the "
                      "gradient for input convolves grad_output with the filter, which flips it: "
                      "convolve2d(grad_output, filter, mode='full').", backward=_unflipped),),
)

def softmax_cross_entropy(logits, target):
    return F.cross_entropy(logits, target)


def _ce_gradient(gradient):
    """The mean cross-entropy's values, with `gradient(logits, target)` as the gradient of the logits (a
    wrong backward as students write it): autograd's gradient of the linear term it adds, detached."""
    def wrong(logits, target):
        linear = (gradient(logits, target).detach() * logits).sum()
        return softmax_cross_entropy(logits, target).detach() + linear - linear.detach()
    return wrong


def _one_hot(logits, target):
    return F.one_hot(target, logits.shape[-1]).to(logits.dtype)


def _naive_softmax(logits, dim=1):
    return logits.exp() / logits.exp().sum(dim, keepdim=True)


SOFTMAX_CE = Problem(
    name="SoftmaxCrossEntropy",
    summary="forward(ctx, logits, target): the mean over the batch of -log softmax(logits)[i, target[i]], "
            "computed stably; one backward for the whole loss, derived by hand",
    reference=softmax_cross_entropy,
    # target: class indices (int64), not differentiated. The last case has logits between 700 and 800,
    # beyond exp's range in float64: only a forward and a backward that subtract each row's maximum get it.
    cases=(Case((TensorSpec((4, 5), low=-3.0, high=3.0), TensorSpec((4,), low=0, high=5, dtype="int64"))),
           Case((TensorSpec((7, 3), low=-3.0, high=3.0), TensorSpec((7,), low=0, high=3, dtype="int64"))),
           Case((TensorSpec((3, 6), low=700.0, high=800.0), TensorSpec((3,), low=0, high=6, dtype="int64")))),
    mistakes=(
        Mistake("the one-hot of the target is not subtracted: the gradient of the loss is the softmax minus "
                "the one-hot vector of each row's class, divided by the batch size. Differentiate the row's "
                "loss, logsumexp(z) - z[target], term by term: the second term gives -1 at the target's "
                "column.", backward=_ce_gradient(lambda z, t: torch.softmax(z, 1) / z.shape[0])),
        Mistake("the gradient is not divided by the batch size: the loss is the mean over the rows, so each "
                "row's gradient is divided by N = logits.shape[0].",
                backward=_ce_gradient(lambda z, t: torch.softmax(z, 1) - _one_hot(z, t))),
        Mistake("the gradient has the wrong sign: it is the softmax minus the one-hot vector, not the "
                "one-hot minus the softmax (a larger logit of a wrong class raises the loss).",
                backward=_ce_gradient(lambda z, t: (_one_hot(z, t) - torch.softmax(z, 1)) / z.shape[0])),
        Mistake("the softmax in backward is normalised over dimension 0, across the batch: each row is "
                "normalised over its classes, dimension 1.",
                backward=_ce_gradient(lambda z, t: (torch.softmax(z, 0) - _one_hot(z, t)) / z.shape[0])),
        Mistake("the loss is summed over the batch, not averaged: divide by N = logits.shape[0] in forward "
                "too.", lambda z, t: F.cross_entropy(z, t, reduction="sum")),
        Mistake("exp is taken of the raw logits: above about 709 it overflows to infinity and the loss is "
                "NaN. Subtract each row's maximum first, m = logits.amax(dim=1, keepdim=True): the softmax "
                "and the log-sum-exp do not change, and every exponent is at most 0.",
                lambda z, t: -_naive_softmax(z).log().gather(1, t[:, None]).mean()),
    ),
)

ASSIGNMENT = Assignment("gradcheck", "04-gradcheck", (SOMETHING, LOGSUMEXP, LAYERNORM, SCIPYCONV, SOFTMAX_CE),
                        preload=("matplotlib.pyplot",))
